#include "guest/embedded_root.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <set>
#include <string>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/dead_run_leftovers.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm {
namespace {

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

constexpr std::string_view embedded_uri_prefix = "qemu:///embed?root=";

// The root of an embedded-driver URI ("" for any other URI).
std::filesystem::path embedded_root_of(std::string_view uri) {
  if (!uri.starts_with(embedded_uri_prefix)) return {};
  return uri_unescape(uri.substr(embedded_uri_prefix.size()));
}

}  // namespace

long embedded_qemu_pid(std::string_view uri, const std::string& name) {
  const std::filesystem::path root = embedded_root_of(uri);
  if (root.empty()) return 0;
  std::ifstream pidfile(root / "run" / "qemu" / (name + ".pid"));
  long pid = 0;
  if (!(pidfile >> pid) || pid <= 0) return 0;
  const std::string args = read_proc("/proc/" + std::to_string(pid) + "/cmdline");
  return args.find("guest=" + name) == std::string::npos ? 0 : pid;
}

std::string_view LibvirtDriver::embedded_qemu_conf_text() { return embedded_qemu_conf; }

std::filesystem::path LibvirtDriver::embedded_root() { return abvm_cache_dir() / "libvirt"; }

std::filesystem::path private_roots_dir() { return abvm_cache_dir() / "libvirt-private"; }

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

}  // namespace abvm
