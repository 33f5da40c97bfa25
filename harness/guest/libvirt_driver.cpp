#include "guest/libvirt_driver.hpp"

#include <fcntl.h>
#include <grp.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <pugixml.hpp>
#include <thread>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/console_cap.hpp"
#include "guest/console_stream.hpp"
#include "guest/domain_xml.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/records.hpp"
#include "guest/volume_staging.hpp"

namespace abvm {
namespace {

using Clock = std::chrono::steady_clock;

// See LibvirtDriver::embedded_qemu_conf_text().
constexpr std::string_view embedded_qemu_conf =
    "# Written by abvm (guest/libvirt_driver.cpp): settings for libvirt's embedded QEMU driver\n"
    "# running as root without libvirtd, virtlogd, a security driver, namespaces or cgroups.\n"
    "user = \"root\"\n"
    "group = \"root\"\n"
    "security_driver = \"none\"\n"
    "namespaces = [ ]\n"
    "cgroup_controllers = [ ]\n"
    "stdio_handler = \"file\"\n"
    "# Do not record original owners in extended attributes of the user's kernel and disk files.\n"
    "remember_owner = 0\n";

constexpr std::string_view qemu_account = "libvirt-qemu";

std::string last_error() { return libvirt_error(); }
int last_error_code() { return libvirt_error_code(); }

void ignore_error(void*, virErrorPtr) {}

std::string version_string(unsigned long v) {
  return fmt::format("{}.{}.{}", v / 1000000, (v / 1000) % 1000, v % 1000);
}

// Once per process: silence libvirt's own stderr printing, route its log to a file, and run the
// event loop that libvirt's QEMU driver needs to watch its monitors and processes.
void init_libvirt_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libvirt prints errors to stderr through its log unless told otherwise; keep them in a file
    // next to the embedded root, where a user debugging a failure can find them.
    if (!std::getenv("LIBVIRT_LOG_OUTPUTS")) {
      auto dir = LibvirtDriver::embedded_root().parent_path();
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (!ec) ::setenv("LIBVIRT_LOG_OUTPUTS", fmt::format("3:file:{}", (dir / "libvirt.log").native()).c_str(), 0);
    }
    if (virInitialize() < 0) throw InfraError("libvirt: virInitialize failed: " + last_error());
    virSetErrorFunc(nullptr, ignore_error);
    if (virEventRegisterDefaultImpl() < 0) {
      throw InfraError("libvirt: cannot register the default event loop: " + last_error());
    }
    // Detached on purpose: the loop serves libvirt until the process exits, and joining a thread
    // blocked in poll() at exit would hang.
    std::thread([] {
      virSetErrorFunc(nullptr, ignore_error);
      for (;;) {
        if (virEventRunDefaultImpl() < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }).detach();
  });
  // The error handler is per thread in libvirt; set it for the calling thread too.
  virSetErrorFunc(nullptr, ignore_error);
}

// Debian's libvirt resolves the system user and group 'libvirt-qemu' even when QEMU runs as root;
// libvirt-daemon-system creates them, and harness/setup.sh does without that package. abvm never
// creates accounts itself: it says which is missing and how to create it.
void require_qemu_account() {
  const std::string name(qemu_account);
  const bool have_user = ::getpwnam(name.c_str()) != nullptr;
  const bool have_group = ::getgrnam(name.c_str()) != nullptr;
  if (have_user && have_group) return;
  const std::string missing = !have_user && !have_group ? fmt::format("the system user and group '{}'", name)
                              : !have_user              ? fmt::format("the system user '{}'", name)
                                                        : fmt::format("the system group '{}'", name);
  std::string how;
  if (!have_group) how += fmt::format("groupadd --system {}", name);
  if (!have_user) {
    if (!how.empty()) how += " && ";
    how += fmt::format("useradd --system --gid {0} --home-dir /var/lib/libvirt --no-create-home --shell "
                       "/usr/sbin/nologin {0}",
                       name);
  }
  throw InfraError(fmt::format("libvirt's embedded QEMU driver needs {} (Debian's libvirt looks it up even when "
                               "QEMU runs as root), and this machine has none; create it as root with harness/setup.sh "
                               "(or: {})",
                               missing, how));
}

// The root goes into a URI query: percent-encode anything outside the unreserved characters.
std::string uri_unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}


constexpr std::string_view embedded_uri_prefix = "qemu:///embed?root=";

// The root of an embedded-driver URI ("" for any other URI).
std::filesystem::path embedded_root_of(std::string_view uri) {
  if (!uri.starts_with(embedded_uri_prefix)) return {};
  return uri_unescape(uri.substr(embedded_uri_prefix.size()));
}

// The pid of the QEMU running an embedded-driver domain (from the driver's pid file, checked by
// its command line), or 0.
long embedded_qemu_pid(std::string_view uri, const std::string& name) {
  const std::filesystem::path root = embedded_root_of(uri);
  if (root.empty()) return 0;
  std::ifstream pidfile(root / "run" / "qemu" / (name + ".pid"));
  long pid = 0;
  if (!(pidfile >> pid) || pid <= 0) return 0;
  const std::string args = read_proc("/proc/" + std::to_string(pid) + "/cmdline");
  return args.find("guest=" + name) == std::string::npos ? 0 : pid;
}

// QEMU daemonizes, so its parent is init, and libvirt waits for it to vanish (polling every
// 200 ms, up to 15 s). An init that reaps orphans slowly (this machine's reaps every ~1.5 s)
// makes every stop of a guest that slow. So abvm makes itself the subreaper of its embedded QEMUs
// (see the constructor) and a thread reaps zombie QEMU children as soon as
// they exit, whoever stopped them (also a QEMU that fails inside virDomainCreateXML); a child
// that run_process waits for is left alone, so no other exit status is ever taken.
//
// A QEMU that cannot start (a missing kernel file, say) fails before exec, in libvirt's
// daemonized grandchild, which still carries our name: it is recognised by being an orphan of
// another session (libvirt's intermediate child calls setsid() and exits). Left unreaped, the
// zombie looks alive to libvirt, which then waits the whole monitor timeout (about 40 s).

// Zombie children of this process that LibvirtDriver::reapable_zombie gives to the reaper, and
// that run_process is not waiting for.
std::vector<pid_t> zombie_qemu_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  const pid_t own_session = ::getsid(0);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    if (LibvirtDriver::reapable_zombie(read_proc(entry.path() / "stat"), self, own_session) &&
        !is_run_process_child(static_cast<pid_t>(pid))) {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  return out;
}

void reaper_loop() {
  for (;;) {
    try {
      for (pid_t pid : zombie_qemu_children()) ::waitpid(pid, nullptr, WNOHANG);
    } catch (const std::exception&) {
      // /proc changes under us; the next round sees it settled. This thread must never end.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void start_reaper() {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(reaper_loop).detach(); });
}

std::string uri_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

// Owns a running domain: destroys it (if still there) and frees the handle, whatever happens.
class DomainHandle {
 public:
  explicit DomainHandle(virDomainPtr d) : d_(d) {}
  ~DomainHandle() {
    if (!d_) return;
    if (virDomainIsActive(d_) == 1) virDomainDestroy(d_);
    virDomainFree(d_);
  }
  DomainHandle(const DomainHandle&) = delete;
  DomainHandle& operator=(const DomainHandle&) = delete;
  virDomainPtr get() const { return d_; }

 private:
  virDomainPtr d_;
};

// How libvirt says a domain stopped. A QEMU that exits without the guest asking (kill -9, a QEMU
// crash) looks, from the console alone, like a guest that powered off early; libvirt tells them
// apart (VIR_DOMAIN_EVENT_STOPPED_FAILED: the monitor closed without a SHUTDOWN event).
struct StopWatch {
  std::atomic<int> detail{-1};  // a virDomainEventStoppedDetailType once the domain stopped
};

int on_lifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* opaque) {
  auto* watch = static_cast<std::shared_ptr<StopWatch>*>(opaque);
  if (event == VIR_DOMAIN_EVENT_STOPPED) (*watch)->detail = detail;
  return 0;
}

// Registers a lifecycle callback for one domain for its lifetime. The watch is shared with
// libvirt, which frees its reference when the callback is deregistered (possibly later, from the
// event loop thread).
// Registered for the domain itself, not for the whole connection: libvirt refuses a second
// registration of one callback for the same event and object on a connection ("event callback
// already tracked"), so while one guest ran, every other guest booted on the connection (a paced
// block's partner, another lane's) had no stop events, and its QEMU killed looked like a guest
// that powered off early (invalid-output instead of an infrastructure error). The domain's own
// filter (its UUID, new at every boot) also keeps out a late event of an earlier boot of the
// same name.
class StopEvents {
 public:
  StopEvents(virConnectPtr conn, virDomainPtr dom) : conn_(conn), watch_(std::make_shared<StopWatch>()) {
    auto* opaque = new std::shared_ptr<StopWatch>(watch_);
    id_ = virConnectDomainEventRegisterAny(conn_, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                           VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), opaque,
                                           [](void* p) { delete static_cast<std::shared_ptr<StopWatch>*>(p); });
    if (id_ < 0) delete opaque;  // without events the console alone decides, as before
  }
  ~StopEvents() {
    if (id_ >= 0) virConnectDomainEventDeregisterAny(conn_, id_);
  }
  StopEvents(const StopEvents&) = delete;
  StopEvents& operator=(const StopEvents&) = delete;
  // The stop detail, waiting up to `grace` for the event (it is queued as the domain goes away).
  int stop_detail(std::chrono::milliseconds grace) const {
    const auto end = Clock::now() + grace;
    while (id_ >= 0 && watch_->detail < 0 && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return watch_->detail;
  }

 private:
  virConnectPtr conn_;
  std::shared_ptr<StopWatch> watch_;
  int id_ = -1;
};

}  // namespace

struct LibvirtDriver::Impl {
  std::string uri;
  ConnHandle conn;
  HostVersions versions;
  std::chrono::milliseconds reconnect_window;
  // Every connection but the embedded driver: the host may not see this machine's files.
  std::unique_ptr<VolumeStaging> staging;
};

namespace {

// Every process of this machine with its command line, arguments joined by spaces.
struct ProcessArgs {
  pid_t pid;
  std::filesystem::path proc;  // /proc/<pid>
  std::string args;
};
std::vector<ProcessArgs> processes_with_args() {
  std::vector<ProcessArgs> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string args = read_proc(entry.path() / "cmdline");
    std::replace(args.begin(), args.end(), '\0', ' ');
    out.push_back({static_cast<pid_t>(std::strtol(pid.c_str(), nullptr, 10)), entry.path(), std::move(args)});
  }
  return out;
}

// QEMU processes on this machine whose command line names domain `name` ("-name guest=NAME,"):
// how a guest is found when the daemon that started it has gone.
std::vector<pid_t> local_qemus_of(const std::string& name) {
  std::vector<pid_t> out;
  for (const auto& p : processes_with_args()) {
    if (p.args.find("qemu-system") != std::string::npos && p.args.find("guest=" + name + ",") != std::string::npos) {
      out.push_back(p.pid);
    }
  }
  return out;
}

bool is_embedded(std::string_view uri) { return uri.starts_with("qemu:///embed"); }

// A URI that names a daemon of this machine (no host part, or its UNIX socket named outright):
// its guests' QEMUs run here.
bool is_local(std::string_view uri) { return uri.starts_with("qemu:///") || uri.starts_with("qemu+unix://"); }

// A URI libvirt reaches over TLS: qemu+tls://, or qemu://HOST/ (TLS is libvirt's default transport).
bool is_tls(std::string_view uri) { return uri.starts_with("qemu+tls://") || (uri.starts_with("qemu://") && !is_local(uri)); }

// A connection, or why there is none.
struct OpenedConnection {
  ConnHandle conn;
  std::string error;
};

// Opens `uri`. Every connection to a daemon, on this machine or across a network, gets
// keepalive probes (every 5 s, 3 unanswered end the connection). A libvirt call waits for its
// reply in libvirt's RPC client (virNetClientIOEventLoop), whose poll has no timeout of its own:
// keepalive alone bounds it, so without it a daemon that stops answering (SIGSTOPped, or a
// libvirtd deadlocked inside, as seen here with libvirt 9.0) would hold virDomainIsActive, a
// volume upload or a stream's end forever, whether the daemon is across a network or on this
// machine (HostFaultsE2ETest.LibvirtDaemonStoppedMidTrialEndsWithExit3NotAHang: a run on this
// machine's daemon never ended before). With it, every call on the connection fails within about
// 20 s, and the connection is dead (virConnectIsAlive), which run_guest and ensure_connection act on. A daemon that cannot
// do keepalive (libvirt before 0.9.8) is refused for that reason. The embedded driver runs in
// this process: it has no daemon that could stop answering, and no keepalive.
OpenedConnection open_connection(const std::string& uri) {
  OpenedConnection r{ConnHandle(virConnectOpen(uri.c_str())), {}};
  if (!r.conn) {
    r.error = last_error();  // libvirt's last error is per thread
    return r;
  }
  if (is_embedded(uri)) return r;
  const int keepalive = virConnectSetKeepAlive(r.conn.get(), 5, 3);
  if (keepalive != 0) {
    r.error = fmt::format("{}; without keepalive a daemon that stops answering would hold abvm forever",
                          keepalive < 0 ? "libvirt cannot run keepalive on the connection: " + last_error()
                                        : std::string("the daemon does not support keepalive (libvirt before 0.9.8)"));
    r.conn.reset();
  }
  return r;
}

// A connection opened within `limit`, or the reason there is none. virConnectOpen has no timeout
// of its own, and keepalive starts only once it has returned: a daemon that accepts connections
// but never answers them would hold the caller, and with it the whole run, forever. A call that
// outlives `limit` is left to finish on its own thread, which then closes what it got.
OpenedConnection open_connection_within(const std::string& uri, std::chrono::milliseconds limit) {
  struct State {
    std::mutex mutex;
    std::condition_variable ready;
    bool done = false;
    bool abandoned = false;
    OpenedConnection result;
  };
  auto state = std::make_shared<State>();
  std::thread([state, uri] {
    OpenedConnection r = open_connection(uri);
    std::lock_guard lock(state->mutex);
    if (state->abandoned) return;  // r closes its connection after the lock is released
    state->result = std::move(r);
    state->done = true;
    state->ready.notify_all();
  }).detach();
  std::unique_lock lock(state->mutex);
  if (!state->ready.wait_for(lock, limit, [&] { return state->done; })) {
    state->abandoned = true;
    return {nullptr, fmt::format("the host accepted the connection but did not answer within {:.0f} s",
                                 std::chrono::duration<double>(limit).count())};
  }
  return std::move(state->result);
}

// The embedded driver describes the host from its QEMU probe, made (or read from its capability
// cache) when the connection opens and kept for the life of the process. A probe that failed leaves
// the host with no emulator at all: every call then fails with "Cannot find suitable emulator for
// x86_64". CI met it once, 1.2 s into a test that opened the shared root just after other processes
// had used it (the same tests run again here never met it; libvirt does not say why its probe
// failed). Asking for the capabilities rebuilds them and probes again what had failed (libvirt
// caches only a probe that worked): a passing failure is gone, one that lasts is said to be so.
HostVersions read_versions(virConnectPtr conn, const std::string& uri);
HostVersions read_embedded_versions(virConnectPtr conn, const std::string& uri) {
  try {
    return read_versions(conn, uri);
  } catch (const InfraError& ex) {
    if (std::string_view(ex.what()).find("Cannot find suitable emulator") == std::string_view::npos) throw;
    std::free(virConnectGetCapabilities(conn));
    try {
      return read_versions(conn, uri);
    } catch (const InfraError& again) {
      throw InfraError(fmt::format("{} (also when libvirt probed QEMU again: check that qemu-system-x86_64 starts, "
                                   "e.g. 'qemu-system-x86_64 -machine none -nodefaults -display none -S')",
                                   again.what()));
    }
  }
}

// The first connection of a driver. A daemon gets the reconnect window, as every later connection
// does. The embedded driver is not bounded: it runs in this process (no daemon to stop answering),
// and its first connection in a fresh root probes QEMU for about 45 s, longer than the window.
OpenedConnection open_first_connection(const std::string& uri, std::chrono::milliseconds window) {
  return is_embedded(uri) ? open_connection(uri) : open_connection_within(uri, window);
}

// What libvirt tells about the host over the connection. The versions are required; the host's
// description is best effort (an older or restricted daemon may refuse a call): empty then.
HostVersions read_versions(virConnectPtr conn, const std::string& uri) {
  unsigned long lib = 0, hv = 0;
  if (virConnectGetLibVersion(conn, &lib) < 0) {
    throw InfraError(fmt::format("libvirt: cannot read the library version of '{}': {}", uri, last_error()));
  }
  if (virConnectGetVersion(conn, &hv) < 0) {
    throw InfraError(fmt::format("libvirt: cannot read the hypervisor version of '{}': {}", uri, last_error()));
  }
  HostVersions v{.uri = uri, .libvirt = version_string(lib), .qemu = version_string(hv)};
  if (char* name = virConnectGetHostname(conn)) {
    v.hostname = name;
    std::free(name);
  }
  virNodeInfo node{};
  if (virNodeGetInfo(conn, &node) == 0) {
    v.cpu_arch = node.model;
    v.cpus = static_cast<int>(node.cpus);
    v.cpu_mhz = static_cast<int>(node.mhz);
    v.memory_kib = node.memory;
  }
  if (char* caps = virConnectGetCapabilities(conn)) {
    pugi::xml_document doc;
    if (doc.load_string(caps)) v.cpu_model = doc.select_node("/capabilities/host/cpu/model").node().text().get();
    std::free(caps);
  }
  return v;
}

}  // namespace

void LibvirtDriver::ensure_connection(const std::vector<std::string>& own_domains) {
  if (impl_->conn && virConnectIsAlive(impl_->conn.get()) == 1) return;
  impl_->conn.reset();
  const auto end = Clock::now() + impl_->reconnect_window;
  for (;;) {
    // At least 5 s for each try: a daemon across a network that answers at all answers sooner.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    OpenedConnection opened = open_connection_within(impl_->uri, std::max(left, std::chrono::milliseconds(5000)));
    impl_->conn = std::move(opened.conn);
    if (impl_->conn) break;
    if (Clock::now() >= end) {
      const std::string why = opened.error;
      // The guests of this process that the lost daemon ran would run on unwatched: on this
      // machine (a local URI) they are found by name and killed; elsewhere, say which they are.
      std::vector<std::string> left;
      for (const auto& name : own_domains) {
        const auto pids = is_local(impl_->uri) ? local_qemus_of(name) : std::vector<pid_t>{};
        for (pid_t pid : pids) ::kill(pid, SIGKILL);
        if (pids.empty() && !is_local(impl_->uri)) left.push_back(name);
      }
      throw InfraError(fmt::format(
          "libvirt: the connection to '{}' was lost and could not be made again within {:.0f} s ({}). Start the "
          "libvirt daemon again (or restart it, if it runs but does not answer){}",
          impl_->uri, std::chrono::duration<double>(impl_->reconnect_window).count(), why,
          left.empty() ? std::string()
                       : fmt::format("; then destroy the guests it may still run (virsh -c '{}' destroy {})",
                                     impl_->uri, fmt::join(left, ", "))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // A daemon that restarted took over the QEMUs it had started: those of this process belong
  // to trials that have already ended without them.
  for (const auto& name : own_domains) {
    if (virDomainPtr d = virDomainLookupByName(impl_->conn.get(), name.c_str())) {
      DomainHandle handle(d);
      virDomainDestroy(d);
    }
  }
  if (impl_->staging) impl_->staging->attach(impl_->conn.get());
}

LibvirtDriver::LibvirtDriver(std::string uri, LibvirtDriverOptions options) : impl_(std::make_unique<Impl>()) {
  init_libvirt_once();
  impl_->uri = std::move(uri);
  impl_->reconnect_window = options.reconnect_window;
  const bool embedded = is_embedded(impl_->uri);
  OpenedConnection opened = open_first_connection(impl_->uri, impl_->reconnect_window);
  impl_->conn = std::move(opened.conn);
  // After the connection (whose capability probe reaps its own QEMU): orphaned QEMUs of our
  // domains now come to us, and the reaper thread reaps them (see reaper_loop).
  if (impl_->conn && embedded) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    start_reaper();
  }
  if (!impl_->conn) {
    // A daemon that accepts but does not answer is stopped or stuck: running is not enough.
    // Over TLS, a certificate either side does not trust ends the connection with libvirt's reason,
    // which does not say where the certificates are; a host that refuses this machine's certificate
    // closes the session after the handshake, which libvirt reports as "Unable to read TLS
    // confirmation" (RemoteTlsE2ETest).
    const bool tls = is_tls(impl_->uri);
    const bool refused = tls && opened.error.find("TLS confirmation") != std::string::npos;
    throw InfraError(fmt::format(
        "libvirt: cannot connect to '{}': {}{}. Check that the URI is right{}", impl_->uri, opened.error,
        refused ? " (the host refused this machine's client certificate or its address; its libvirtd log says why)"
                : "",
        embedded ? " and that no other process uses the same embedded root"
        : is_local(impl_->uri)
            ? " and that libvirtd is running and answers (restart one that does not)"
        : tls ? ", that the host is reachable and that libvirtd runs there and answers, and that the host trusts "
                "this machine's client certificate and this machine the host's (each signed by a CA the other side "
                "has; the client's cacert.pem, clientcert.pem and clientkey.pem are in the URI's pkipath=DIR, or "
                "in /etc/pki/CA/cacert.pem and /etc/pki/libvirt/ for root)"
              : ", that the host is reachable and that libvirtd runs there and answers"));
  }
  // From here on, a daemon that stops answering ends each call within keepalive's ~20 s
  // (open_connection), and the call's InfraError names the URI.
  impl_->versions = embedded ? read_embedded_versions(impl_->conn.get(), impl_->uri) : read_versions(impl_->conn.get(), impl_->uri);
  if (!embedded) {
    impl_->staging = std::make_unique<VolumeStaging>(impl_->uri, std::move(options.staging));
    impl_->staging->attach(impl_->conn.get());
  }
}

LibvirtDriver::~LibvirtDriver() {
  std::lock_guard lock(mutex_);
  // Guests whose connection was lost while they ran and that no later trial on this host
  // destroyed (a host of a pool whose daemon restarted after its block moved to another host):
  // their QEMUs run on under the daemon that came back, a guest that hangs for ever. Made once
  // more, briefly, to destroy them; a daemon still gone keeps them (the error said which).
  if (!lost_domains_.empty()) {
    try {
      if (!impl_->conn || virConnectIsAlive(impl_->conn.get()) != 1) {
        impl_->conn.reset();
        impl_->conn = std::move(open_connection_within(impl_->uri, std::chrono::milliseconds(5000)).conn);
        if (impl_->conn && impl_->staging) impl_->staging->attach(impl_->conn.get());
      }
      for (const auto& name : lost_domains_) {
        if (!impl_->conn) break;
        if (virDomainPtr d = virDomainLookupByName(impl_->conn.get(), name.c_str())) {
          DomainHandle handle(d);
          virDomainDestroy(d);
        }
      }
    } catch (const std::exception&) {
      // A destructor: what cannot be destroyed now stays for the user (named when the run ended).
    }
  }
  // The run's scratch volumes and what is left of its trials' volumes; a connection that is gone
  // leaves them to the next run from this machine (VolumeStaging::attach).
  if (impl_->staging && impl_->conn && virConnectIsAlive(impl_->conn.get()) == 1) impl_->staging->finish(impl_->conn.get());
}

std::string_view LibvirtDriver::embedded_qemu_conf_text() { return embedded_qemu_conf; }

bool LibvirtDriver::reapable_zombie(std::string_view stat, long self, long own_session) {
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so split at
  // the last ')'.
  const auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close + 4 >= stat.size()) return false;
  const std::string_view comm = stat.substr(open + 1, close - open - 1);
  const std::string text(stat.substr(close + 4));
  char* rest = nullptr;
  const long ppid = std::strtol(text.c_str(), &rest, 10);
  std::strtol(rest, &rest, 10);  // the process group
  const long session = std::strtol(rest, nullptr, 10);
  const long pid = std::strtol(std::string(stat.substr(0, open)).c_str(), nullptr, 10);
  if (stat[close + 2] != 'Z' || ppid != self || session == own_session) return false;
  // In another session: a QEMU daemonized by libvirt (a domain's, or the daemon of a probe,
  // which leads its own session), or any child of another session reparented to us, which nobody
  // else will ever wait for. A child that leads its own session and is no QEMU is one we started
  // (setsid) and wait for ourselves.
  return comm.starts_with("qemu-system") || session != pid;
}

std::filesystem::path LibvirtDriver::embedded_root() { return abvm_cache_dir() / "libvirt"; }

namespace {

void prepare_embedded_root(const std::filesystem::path& root) {
  std::error_code ec;
  // libvirt creates most of these itself, but not lib/qemu before a capability probe of a
  // fresh root ("Cannot find suitable emulator": it could not make its qmp-* dir there).
  for (const char* dir : {"etc", "lib/qemu", "run/qemu", "cache/qemu", "log/qemu"}) {
    std::filesystem::create_directories(root / dir, ec);
    if (ec) break;
  }
  if (ec) {
    throw InfraError(fmt::format("cannot create libvirt's embedded root {}: {}", root.native(), ec.message()));
  }
  auto conf = root / "etc" / "qemu.conf";
  std::string current;
  if (std::filesystem::exists(conf)) current = read_file(conf);
  if (current != embedded_qemu_conf) write_file_atomic(conf, embedded_qemu_conf);
}

// libvirt's embedded driver holds an fcntl lock on run/qemu/driver.pid while a process uses the
// root; a second process cannot open the same root.
bool embedded_root_in_use(const std::filesystem::path& root) {
  int fd = ::open((root / "run" / "qemu" / "driver.pid").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = 0;
  lk.l_len = 1;
  bool busy = ::fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
  ::close(fd);
  return busy;
}

std::filesystem::path private_roots_dir() { return abvm_cache_dir() / "libvirt-private"; }

// libvirt keeps each domain's QEMU log (log/qemu/<name>.log) after the domain is gone: one or two
// files per trial, 800 in a day here. What a trial needs of it is in its results (the console,
// libvirt's reason for a failure); a run that is over no longer needs the rest.
int kill_leftover_probes(const std::string& prefix);  // below

// The probe QEMUs of private roots (private_roots_dir()/<pid>) whose process is gone.
void kill_probes_of_dead_private_roots() {
  const std::string dir = private_roots_dir().string() + "/";
  for (const auto& p : processes_with_args()) {
    const auto at = p.args.find("unix:" + dir);
    if (at == std::string::npos) continue;
    const long owner = std::strtol(p.args.c_str() + at + 5 + dir.size(), nullptr, 10);
    if (owner > 0 && !process_alive(owner)) kill_leftover_probes(dir + std::to_string(owner) + "/lib/qemu/qmp-");
  }
}

long abvm_pid_of(std::string_view name);  // below, with the leftovers of dead runs
void remove_logs_of_dead_runs(const std::filesystem::path& root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "log" / "qemu", ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".log")) continue;
    const long pid = abvm_pid_of(file);
    if (pid > 0 && !process_alive(pid)) std::filesystem::remove(entry.path(), ec);
  }
}

// libvirt probes QEMU with a daemonized `qemu-system-* -machine none ... -qmp unix:<root>/lib/qemu/
// qmp-XXXXXX/qmp.monitor` and kills it when the probe is done; a process killed mid-probe leaves
// that QEMU running forever, reparented to init (found three times here). Called for a root no live
// process uses (this one's claim on the shared root, or a dead process's private root): every such
// QEMU naming it is a leftover. `prefix` (from the root up to "qmp-") may stop earlier: every QEMU
// whose socket path starts with it. Returns how many were killed.
int kill_leftover_probes(const std::string& prefix) {
  int killed = 0;
  for (const auto& p : processes_with_args()) {
    if (p.args.find("qemu-system") == std::string::npos || p.args.find("-machine none") == std::string::npos) continue;
    if (p.args.find("unix:" + prefix) == std::string::npos) continue;
    // Not a probe this process runs now (its QEMUs are its children: it is their subreaper).
    const std::string stat = read_proc(p.proc / "stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos && close + 4 < stat.size() &&
        std::strtol(stat.c_str() + close + 4, nullptr, 10) == ::getpid()) {
      continue;
    }
    killed += ::kill(p.pid, SIGKILL) == 0;
  }
  return killed;
}

// libvirt takes its lock on the root only when the connection opens, so two abvm processes starting
// together can both find the shared root free and both open it; the second one's QEMU probe then
// fails ("Cannot find suitable emulator for x86_64": seen here when a test run started as a demo run
// ended). abvm's own lock on the root, taken before that check and held until the process exits,
// makes the choice atomic among abvm processes. False: another abvm process holds it.
bool claim_shared_root(const std::filesystem::path& root) {
  static std::mutex mutex;
  static std::set<std::filesystem::path> held;
  std::lock_guard lock(mutex);
  if (held.contains(root)) return true;
  const int fd = ::open((root / "abvm.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  held.insert(root);  // fd is never closed: the lock goes with the process
  return true;
}

}  // namespace

std::string LibvirtDriver::embedded_uri() {
  require_qemu_account();
  auto root = embedded_root();
  prepare_embedded_root(root);
  remove_stale_embedded_state(root);
  // Private roots of abvm processes that are gone.
  std::error_code ec;
  // A private root goes with its process (atexit), but a probe QEMU it left does not: those of
  // private roots whose process is gone, whether or not the directory still exists.
  kill_probes_of_dead_private_roots();
  if (std::filesystem::is_directory(private_roots_dir(), ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(private_roots_dir(), ec)) {
      long pid = std::strtol(entry.path().filename().c_str(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        remove_stale_embedded_state(entry.path());
        kill_leftover_probes((entry.path() / "lib" / "qemu" / "qmp-").string());
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
  }
  if (claim_shared_root(root) && !embedded_root_in_use(root)) {
    kill_leftover_probes((root / "lib" / "qemu" / "qmp-").string());
    remove_logs_of_dead_runs(root);
  } else {
    // Another abvm run holds the shared root: use a root of our own, seeded with the shared
    // root's QEMU capability cache so that the ~45 s probe is not repeated.
    auto own = private_roots_dir() / std::to_string(::getpid());
    prepare_embedded_root(own);
    auto caps = root / "cache" / "qemu";
    if (std::filesystem::is_directory(caps, ec)) {
      std::filesystem::create_directories(own / "cache", ec);
      std::filesystem::copy(caps, own / "cache" / "qemu",
                            std::filesystem::copy_options::recursive | std::filesystem::copy_options::skip_existing, ec);
    }
    root = own;
    static bool registered = false;
    if (!registered) {
      registered = true;
      // Removed again at exit; a root left by a killed process goes at the next start (above).
      std::atexit([] {
        std::error_code ignored;
        std::filesystem::remove_all(private_roots_dir() / std::to_string(::getpid()), ignored);
      });
    }
  }
  return std::string(embedded_uri_prefix) + uri_escape(root.native());
}

namespace {

// The abvm pid in a domain name "abvm-<pid>[.<boot>]-...", or 0.
long abvm_pid_of(std::string_view name) {
  const auto owner = domain_owner(name);
  return owner ? owner->pid : 0;
}


}  // namespace

std::vector<std::string> LibvirtDriver::remove_stale_embedded_state(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  const fs::path state = root / "run" / "qemu";
  std::error_code ec;
  if (!fs::is_directory(state, ec)) return removed;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(state, ec)) {
    std::string file = entry.path().filename().string();
    for (const char* ext : {".xml.new", ".xml", ".pid"}) {
      if (file.ends_with(ext)) {
        std::string name = file.substr(0, file.size() - std::strlen(ext));
        long pid = abvm_pid_of(name);
        if (pid > 0 && !process_alive(pid)) names.insert(name);
        break;
      }
    }
  }
  for (const std::string& name : names) {
    // A QEMU still running for the dead run's domain: it is ours (its command line names the
    // domain), and nothing else will ever stop it.
    std::ifstream pidfile(state / (name + ".pid"));
    long qemu_pid = 0;
    if (pidfile >> qemu_pid && process_alive(qemu_pid)) {
      const std::string args = read_proc("/proc/" + std::to_string(qemu_pid) + "/cmdline");
      if (args.find("guest=" + name) != std::string::npos) ::kill(static_cast<pid_t>(qemu_pid), SIGKILL);
    }
    for (const char* ext : {".xml.new", ".xml", ".pid"}) fs::remove(state / (name + ext), ec);
    for (const fs::path& dir : {root / "lib" / "qemu", root / "lib" / "qemu" / "channel" / "target"}) {
      if (!fs::is_directory(dir, ec)) continue;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        // libvirt names them "domain-<id>-<name>".
        std::string file = entry.path().filename().string();
        if (file.starts_with("domain-") && file.ends_with("-" + name)) fs::remove_all(entry.path(), ec);
      }
    }
    removed.push_back(name);
  }
  return removed;
}

namespace {

// QEMU's copy of a guest's console (HostFiles::console_log), read when the stream ended short.
using ConsoleCopy = std::function<std::optional<std::string>()>;

// One running guest as run_guest watches it.
struct WatchedGuest {
  virConnectPtr conn;
  const std::string& uri;
  const DomainSpec& spec;
  virDomainPtr dom;
  ConsoleStream& stream;
  ConsoleCap& console;
  const StopEvents& events;
  const ConsoleHooks& hooks;
  const ConsoleCopy& console_copy;
  std::vector<std::string>& lost_domains;  // guests a lost connection left running
};

// The caller has what it waits for, or the guest printed more than its limit (hostile or
// broken: it is stopped now).
bool satisfied(const WatchedGuest& g) { return g.console.cut() || g.hooks.done(g.console.so_far()); }

// The most a pty holds for its reader, and so the most of a stream's end its hangup can spoil
// (a 64 KiB tty buffer and the line discipline's 4 KiB, with room to spare).
constexpr std::size_t kPtyHoldsAtMost = std::size_t{256} << 10;

// The guest has stopped (QEMU exited). The stream ends once libvirt has passed on what it read
// of the pty, but a pty that hangs up discards what it still held, and here it was even seen to
// hand over the end of a burst with a byte missing (console_stream.hpp). QEMU's copy has every
// byte QEMU sent: when the console so far does not satisfy the caller, the copy replaces it,
// provided the two agree on all but the last bytes a pty can hold (a copy that differs earlier
// is not this console: a log its writer rotated).
void complete_console(WatchedGuest& g) {
  g.stream.drain(std::chrono::milliseconds(2000));
  if (satisfied(g)) return;
  const auto copy = g.console_copy();
  if (!copy) return;
  const std::string_view seen = g.console.so_far(), full = *copy;
  const auto agree = static_cast<std::size_t>(std::mismatch(seen.begin(), seen.end(), full.begin(), full.end()).first -
                                              seen.begin());
  if (full.size() > agree && seen.size() - agree <= kPtyHoldsAtMost) g.stream.replace(full);
}

// The domain is no longer active (`active` from virDomainIsActive, just now): says why in
// outcome.end and outcome.detail.
void record_stop(WatchedGuest& g, int active, GuestOutcome& outcome) {
  // A transient domain disappears when its QEMU exits: "no domain" is the normal way to end.
  if (active < 0 && last_error_code() != VIR_ERR_NO_DOMAIN) {
    const std::string why = last_error();
    outcome.end = GuestOutcome::End::infra_error;
    if (virConnectIsAlive(g.conn) != 1) {
      // Its QEMU may run on under a daemon that comes back: the next trial destroys it.
      g.lost_domains.push_back(g.spec.name);
      outcome.detail = fmt::format("the connection to libvirt ('{}') was lost while domain {} ran: {}",
                                   g.uri, g.spec.name, why);
    } else {
      outcome.detail = fmt::format("libvirt lost track of domain {}: {}", g.spec.name, why);
    }
    return;
  }
  complete_console(g);
  if (satisfied(g)) {
    outcome.end = GuestOutcome::End::finished;
  } else if (find_kernel_panic(g.console.so_far()) != std::string_view::npos) {
    outcome.end = GuestOutcome::End::crashed;
    outcome.detail = "kernel panic (see the console log)";
  } else if (g.events.stop_detail(std::chrono::milliseconds(1000)) == VIR_DOMAIN_EVENT_STOPPED_FAILED) {
    // Not the kernel's doing: a fresh boot is a fair replacement (bounded by infra_retries).
    outcome.end = GuestOutcome::End::infra_error;
    outcome.detail = fmt::format(
        "QEMU of domain {} ended unexpectedly (killed, or it crashed) while the guest ran; see {}", g.spec.name,
        is_embedded(g.uri) ? (LibvirtDriver::embedded_root() / "log" / "qemu" / (g.spec.name + ".log")).native()
                           : std::string("libvirt's QEMU log of the domain on that host"));
  } else {
    outcome.end = GuestOutcome::End::powered_off;
    outcome.detail = "the guest ended before its work was seen complete";
  }
}

// Follows the console until `done` says so, the domain stops, or the deadline passes, typing
// what the caller's input hook returns as it goes.
void watch_guest(WatchedGuest& g, Clock::time_point deadline, std::chrono::milliseconds timeout,
                 GuestOutcome& outcome) {
  for (;;) {
    if (g.stream.read_more() && satisfied(g)) {
      outcome.end = GuestOutcome::End::finished;
      return;
    }
    if (g.hooks.input) {
      if (const std::string in = g.hooks.input(); !in.empty()) g.stream.type(in);
    }
    if (g.hooks.give_up) {
      if (auto why = g.hooks.give_up()) {
        outcome.end = GuestOutcome::End::timeout;
        outcome.detail = std::move(*why);
        return;
      }
    }
    const int active = virDomainIsActive(g.dom);
    if (active != 1) {
      record_stop(g, active, outcome);
      return;
    }
    if (g.stream.ended() && !g.stream.error().empty()) {
      // A QEMU that dies closes its console up to ~0.2 s before libvirt marks the domain stopped
      // (HostFaultsE2ETest.QemuKilledOnEveryAttempt... met it once in 8 runs): give the stop
      // event its moment, so that a killed QEMU is named as what it was.
      if (g.events.stop_detail(std::chrono::milliseconds(2000)) >= 0) {
        if (const int now = virDomainIsActive(g.dom); now != 1) {
          record_stop(g, now, outcome);
          return;
        }
      }
      outcome.end = GuestOutcome::End::infra_error;
      outcome.detail = fmt::format("the console of domain {} on '{}' failed while the guest ran: {}", g.spec.name,
                                   g.uri, g.stream.error());
      return;
    }
    if (Clock::now() >= deadline) {
      outcome.end = GuestOutcome::End::timeout;
      outcome.detail = fmt::format("no end within {:.1f} s", std::chrono::duration<double>(timeout).count());
      return;
    }
    if (g.hooks.bell) {
      g.hooks.bell->wait(std::chrono::milliseconds(25));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
}

// The CPU of a local QEMU from /proc/<pid>/stat (utime, stime: every thread's, in clock ticks), for
// a connection whose statistics have no cpu.* (QEMU outside a cgroup: the embedded driver).
std::optional<DomainStats> local_process_cpu(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (pid <= 0 || !std::getline(in, text)) return std::nullopt;
  const auto paren = text.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt; utime is field 14
  unsigned long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return std::nullopt;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return DomainStats{.cpu_seconds = static_cast<double>(utime + stime) / tick,
                     .user_seconds = static_cast<double>(utime) / tick,
                     .system_seconds = static_cast<double>(stime) / tick};
}

// One call of virDomainListGetStats (cpu.*, vcpu.<n>.time, block.<n>.*). `disk_counted` says whether
// it had the disks' counters: libvirt leaves them out, silently, when its query of QEMU's monitor
// fails (qemuDomainGetStatsBlock), and a reading without them is not a disk that moved nothing.
DomainStatsReading read_domain_stats_once(virDomainPtr dom, long qemu_pid, bool& disk_counted) {
  disk_counted = false;
  virDomainPtr doms[] = {dom, nullptr};
  virDomainStatsRecordPtr* records = nullptr;
  const unsigned int kinds = VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_VCPU | VIR_DOMAIN_STATS_BLOCK;
  if (virDomainListGetStats(doms, kinds, &records, 0) < 1 || records == nullptr) {
    DomainStatsReading failed{.error = "virDomainListGetStats: " + last_error()};
    if (records != nullptr) virDomainStatsRecordListFree(records);
    return failed;
  }
  DomainStats s;
  bool cpu = false;
  const virDomainStatsRecordPtr r = records[0];
  for (int i = 0; i < r->nparams; ++i) {
    const virTypedParameter& p = r->params[i];
    if (p.type != VIR_TYPED_PARAM_ULLONG) continue;
    const std::string_view name = p.field;
    const auto ns = static_cast<double>(p.value.ul) / 1e9;
    if (name == "cpu.time") s.cpu_seconds = ns, cpu = true;
    else if (name == "cpu.user") s.user_seconds = ns;
    else if (name == "cpu.system") s.system_seconds = ns;
    else if (name.starts_with("vcpu.") && name.ends_with(".time")) s.vcpu_seconds += ns;
    else if (name.starts_with("block.") && (name.ends_with(".rd.bytes") || name.ends_with(".wr.bytes"))) {
      s.disk_bytes += p.value.ul;
      disk_counted = true;
    }
    else if (name.starts_with("block.") && (name.ends_with(".rd.reqs") || name.ends_with(".wr.reqs"))) s.disk_requests += p.value.ul;
  }
  virDomainStatsRecordListFree(records);
  if (!cpu) {
    const auto local = local_process_cpu(qemu_pid);
    if (!local) return {.error = "libvirt's domain statistics have no cpu.time, and its QEMU is not on this machine"};
    s.cpu_seconds = local->cpu_seconds, s.user_seconds = local->user_seconds, s.system_seconds = local->system_seconds;
  }
  return {.stats = s};
}

// The domain's statistics now; asked a second time when the first answer has no disk counters.
DomainStatsReading read_domain_stats(virDomainPtr dom, long qemu_pid) {
  bool disk_counted = false;
  DomainStatsReading r = read_domain_stats_once(dom, qemu_pid, disk_counted);
  if (!r.stats || disk_counted) return r;
  r = read_domain_stats_once(dom, qemu_pid, disk_counted);
  if (r.stats && !disk_counted) {
    return {.error = "libvirt's domain statistics had no disk counters twice (its query of QEMU's monitor failed)"};
  }
  return r;
}

// Ends a guest that still runs. InfraError when it cannot be destroyed.
void destroy_guest(virDomainPtr dom, long qemu_pid, const DomainSpec& spec, const std::string& uri) {
  // A guest we destroy has nothing to save: SIGKILL its QEMU and reap it, rather than libvirt's
  // SIGTERM and 200 ms polling.
  if (qemu_pid > 0 && virDomainIsActive(dom) == 1) {
    ::kill(static_cast<pid_t>(qemu_pid), SIGKILL);
    // Reap it the moment it is a zombie (or let the reaper thread have it: then waitpid says
    // ECHILD): libvirt, seeing the monitor close, checks whether the process is gone and, if it
    // still exists even as a zombie, sleeps a fixed 200 ms before looking again.
    // Blocking: SIGKILL cannot be ignored, and waitpid wakes the moment the process exits.
    while (::waitpid(static_cast<pid_t>(qemu_pid), nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (virDomainIsActive(dom) == 1 && virDomainDestroy(dom) < 0) {
    int code = last_error_code();
    // Racing the guest's own power-off is fine; anything else leaves a guest behind.
    if (code != VIR_ERR_NO_DOMAIN && code != VIR_ERR_OPERATION_INVALID) {
      throw InfraError(fmt::format("libvirt: cannot destroy domain {}: {}; destroy it by hand (virsh -c '{}' "
                                   "destroy {})",
                                   spec.name, last_error(), uri, spec.name));
    }
  }
}

// One boot as run_guest asks for it, the files already on the host.
struct Boot {
  virConnectPtr conn;
  const std::string& uri;
  const DomainSpec& spec;
  const std::string& xml;
  const ConsoleHooks& hooks;
  std::chrono::milliseconds timeout;
  std::filesystem::path log_copy;  // where the driver writes the console; empty: QEMU writes it there
  ConsoleCopy console_copy;
  std::vector<std::string>& lost;
};

// Waits (up to 2 s) until libvirt has removed a domain that stopped on its own, and a moment
// more, so that closing its console stream no longer meets libvirt freeing the domain (see
// ConsoleStream::close).
void wait_until_removed(virDomainPtr dom) {
  const auto end = Clock::now() + std::chrono::seconds(2);
  while (virDomainIsActive(dom) >= 0 && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Creates the domain paused, opens its console, resumes it and watches it to its end; the
// domain is gone when this returns.
void boot_and_watch(Boot& b, GuestOutcome& outcome) {
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  ConsoleCap console(b.spec.console_limit);
  virDomainPtr raw = virDomainCreateXML(b.conn, b.xml.c_str(), VIR_DOMAIN_START_PAUSED);
  if (!raw) {
    outcome.end = GuestOutcome::End::infra_error;
    outcome.detail = fmt::format("libvirt could not start domain {}: {}", b.spec.name, last_error());
    outcome.seconds = elapsed();
    keep_console(console, outcome);
    return;
  }
  DomainHandle dom(raw);
  // While the domain is paused: the guest cannot have ended on its own before this.
  const StopEvents events(b.conn, raw);
  const long qemu_pid = embedded_qemu_pid(b.uri, b.spec.name);
  // After `dom`: however this is left, the stream is closed before the domain is destroyed.
  ConsoleStream stream(b.spec.name, console, b.log_copy);
  // The guest runs only once its console is open: not one byte it prints goes unread.
  if (!stream.open(b.conn, raw, b.hooks.bell) || virDomainResume(raw) < 0) {
    outcome.end = GuestOutcome::End::infra_error;
    outcome.detail = stream.error().empty()
                         ? fmt::format("libvirt could not resume domain {}: {}", b.spec.name, last_error())
                         : stream.error();
  } else {
    outcome.start_seconds = elapsed();
    if (b.hooks.on_running) b.hooks.on_running([raw, qemu_pid] { return read_domain_stats(raw, qemu_pid); });
    WatchedGuest guest{b.conn, b.uri, b.spec, raw, stream, console, events, b.hooks, b.console_copy, b.lost};
    watch_guest(guest, start + b.timeout, b.timeout, outcome);
  }
  outcome.seconds = elapsed();
  const auto stop = Clock::now();
  if (virDomainIsActive(raw) == 1) {
    stream.close();
    destroy_guest(raw, qemu_pid, b.spec, b.uri);
  } else {
    wait_until_removed(raw);
    stream.close();
  }
  keep_console(console, outcome);
  outcome.stop_seconds = std::chrono::duration<double>(Clock::now() - stop).count();
}

// The local console log (QEMU's copy on this machine), at most `limit` bytes.
std::optional<std::string> read_local_copy(const std::filesystem::path& path, std::uint64_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string out(static_cast<std::size_t>(std::min<std::uint64_t>(limit, std::uint64_t{1} << 30)), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

// Deletes a trial's volumes from the host, at release() or whatever way run_guest is left.
struct TrialVolumes {
  VolumeStaging* staging;
  virConnectPtr conn;
  const DomainSpec& spec;
  void release() {
    if (staging) staging->release(conn, spec);
    staging = nullptr;
  }
  ~TrialVolumes() { release(); }
};

}  // namespace

GuestOutcome LibvirtDriver::run_guest(const DomainSpec& spec, std::chrono::milliseconds timeout,
                                      const ConsoleHooks& hooks) {
  (void)domain_xml(spec);  // throws Error for a bad spec, before anything starts
  std::error_code ec;
  std::filesystem::create_directories(spec.console_log.parent_path(), ec);
  // A stale log from an earlier trial of the same name must not satisfy `done`.
  std::filesystem::remove(spec.console_log, ec);
  if (ec) throw InfraError(fmt::format("cannot remove old console log {}: {}", spec.console_log.native(), ec.message()));

  // A connection lost in an earlier trial (a daemon that restarted) is made again first, and
  // the guest that trial left is destroyed; InfraError when the daemon does not come back.
  // This call holds its own reference to the connection: a concurrent call that reconnects
  // replaces the handle, not the object this guest is watched through.
  ConnHandle conn;
  {
    std::lock_guard lock(mutex_);
    ensure_connection(lost_domains_);
    lost_domains_.clear();
    virConnectRef(impl_->conn.get());
    conn.reset(impl_->conn.get());
  }
  GuestOutcome outcome;
  VolumeStaging* staging = impl_->staging.get();
  TrialVolumes volumes{staging, conn.get(), spec};
  HostFiles files = local_host_files(spec);
  if (staging) {
    const auto t0 = Clock::now();
    try {
      files = staging->stage(conn.get(), spec);
    } catch (const InfraError& e) {
      if (virConnectIsAlive(conn.get()) == 1) throw;
      outcome.end = GuestOutcome::End::infra_error;
      outcome.detail = fmt::format("the connection to libvirt ('{}') was lost while the files of domain {} were sent: {}",
                                   impl_->uri, spec.name, e.what());
      return outcome;
    }
    outcome.stage_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  outcome.domain_xml = domain_xml(spec, files);
  std::vector<std::string> lost;
  const std::uint64_t limit = spec.console_limit + 1;
  Boot boot{.conn = conn.get(), .uri = impl_->uri, .spec = spec, .xml = outcome.domain_xml, .hooks = hooks,
            .timeout = timeout, .log_copy = staging ? spec.console_log : std::filesystem::path(),
            .console_copy = staging ? ConsoleCopy([&] { return staging->console_copy(conn.get(), spec, limit); })
                                    : ConsoleCopy([&] { return read_local_copy(spec.console_log, limit); }),
            .lost = lost};
  try {
    boot_and_watch(boot, outcome);
  } catch (...) {
    std::lock_guard lock(mutex_);
    lost_domains_.insert(lost_domains_.end(), lost.begin(), lost.end());
    throw;
  }
  const auto released = Clock::now();
  volumes.release();
  outcome.stage_seconds += std::chrono::duration<double>(Clock::now() - released).count();
  std::lock_guard lock(mutex_);
  lost_domains_.insert(lost_domains_.end(), lost.begin(), lost.end());
  return outcome;
}

std::string LibvirtDriver::describe() const {
  return fmt::format("libvirt {} (libvirt {}, QEMU {})", impl_->uri, impl_->versions.libvirt, impl_->versions.qemu);
}

HostVersions LibvirtDriver::versions() { return impl_->versions; }

std::vector<std::string> LibvirtDriver::active_domains() {
  virDomainPtr* list = nullptr;
  int n = virConnectListAllDomains(impl_->conn.get(), &list, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  if (n < 0) throw InfraError("libvirt: cannot list domains: " + last_error());
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (const char* name = virDomainGetName(list[i])) names.emplace_back(name);
    virDomainFree(list[i]);
  }
  std::free(list);
  return names;
}

std::optional<StagingStats> LibvirtDriver::staging_stats() const {
  if (!impl_->staging) return std::nullopt;
  return impl_->staging->stats();
}

std::optional<std::filesystem::path> LibvirtDriver::pool_path() const {
  if (!impl_->staging) return std::nullopt;
  return impl_->staging->pool_path();
}

std::vector<std::string> LibvirtDriver::destroy_leftovers() {
  std::vector<std::string> destroyed;
  // A host that other machines use too runs their live guests under the same prefix: the boot tag
  // in a name says whether its pid is one of this machine's (is_leftover_domain).
  const bool local = is_local(impl_->uri);
  const std::string boot = boot_tag();
  for (const auto& name : active_domains()) {
    if (!is_leftover_domain(name, local, boot, process_alive)) continue;
    virDomainPtr d = virDomainLookupByName(impl_->conn.get(), name.c_str());
    if (!d) continue;  // ended meanwhile
    DomainHandle handle(d);
    if (virDomainDestroy(d) < 0 && last_error_code() != VIR_ERR_NO_DOMAIN &&
        last_error_code() != VIR_ERR_OPERATION_INVALID) {
      throw InfraError(fmt::format("libvirt: cannot destroy leftover domain {}: {}", name, last_error()));
    }
    destroyed.push_back(name);
  }
  return destroyed;
}

}  // namespace abvm
