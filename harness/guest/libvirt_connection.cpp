#include "guest/libvirt_connection.hpp"

#include <libvirt/virterror.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <pugixml.hpp>
#include <thread>

#include "core/error.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm {
namespace {

void ignore_error(void*, virErrorPtr) {}

std::string version_string(unsigned long v) {
  return fmt::format("{}.{}.{}", v / 1000000, (v / 1000) % 1000, v % 1000);
}

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
    r.error = libvirt_error();  // libvirt's last error is per thread
    return r;
  }
  if (is_embedded(uri)) return r;
  const int keepalive = virConnectSetKeepAlive(r.conn.get(), 5, 3);
  if (keepalive != 0) {
    r.error = fmt::format("{}; without keepalive a daemon that stops answering would hold abvm forever",
                          keepalive < 0 ? "libvirt cannot run keepalive on the connection: " + libvirt_error()
                                        : std::string("the daemon does not support keepalive (libvirt before 0.9.8)"));
    r.conn.reset();
  }
  return r;
}

}  // namespace

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
    if (virInitialize() < 0) throw InfraError("libvirt: virInitialize failed: " + libvirt_error());
    virSetErrorFunc(nullptr, ignore_error);
    if (virEventRegisterDefaultImpl() < 0) {
      throw InfraError("libvirt: cannot register the default event loop: " + libvirt_error());
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
    throw InfraError(fmt::format("libvirt: cannot read the library version of '{}': {}", uri, libvirt_error()));
  }
  if (virConnectGetVersion(conn, &hv) < 0) {
    throw InfraError(fmt::format("libvirt: cannot read the hypervisor version of '{}': {}", uri, libvirt_error()));
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

}  // namespace abvm
