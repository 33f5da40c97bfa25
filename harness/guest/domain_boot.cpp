// LibvirtDriver::run_guest: one guest's boot on the connection (its files staged on the host when
// the host needs them), watched to its end (guest/domain_watch.hpp), destroyed when it still runs.
#include <libvirt/virterror.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "guest/console_cap.hpp"
#include "guest/console_stream.hpp"
#include "guest/domain_stats.hpp"
#include "guest/domain_watch.hpp"
#include "guest/domain_xml.hpp"
#include "guest/embedded_root.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/libvirt_driver_impl.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/stop_events.hpp"
#include "guest/vcpu_threads.hpp"
#include "guest/volume_staging.hpp"

namespace abvm {
namespace {

using Clock = std::chrono::steady_clock;

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
    int code = libvirt_error_code();
    // Racing the guest's own power-off is fine; anything else leaves a guest behind.
    if (code != VIR_ERR_NO_DOMAIN && code != VIR_ERR_OPERATION_INVALID) {
      throw InfraError(fmt::format("libvirt: cannot destroy domain {}: {}; destroy it by hand (virsh -c '{}' "
                                   "destroy {})",
                                   spec.name, libvirt_error(), uri, spec.name));
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
    outcome.detail = fmt::format("libvirt could not start domain {}: {}", b.spec.name, libvirt_error());
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
                         ? fmt::format("libvirt could not resume domain {}: {}", b.spec.name, libvirt_error())
                         : stream.error();
  } else {
    outcome.start_seconds = elapsed();
    if (b.hooks.on_running) b.hooks.on_running([raw, qemu_pid] { return read_domain_stats(raw, qemu_pid); });
    if (b.hooks.on_vcpus) {
      if (auto tids = vcpu_threads(qemu_pid); !tids.empty()) {
        b.hooks.on_vcpus([tids = std::move(tids)](const std::vector<int>& cpus) { return place_threads(tids, cpus); });
      }
    }
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

}  // namespace abvm
