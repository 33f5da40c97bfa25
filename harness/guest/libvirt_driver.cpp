#include "guest/libvirt_driver.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "core/process.hpp"
#include "guest/dead_run_leftovers.hpp"
#include "guest/domain_xml.hpp"
#include "guest/libvirt_connection.hpp"
#include "guest/libvirt_driver_impl.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/qemu_reaper.hpp"

// The driver's connection from its first opening to its end (lost and made again on the way), and
// the domains on it. Its other members are defined by what they do: run_guest in
// guest/domain_boot.cpp, the embedded root's in guest/embedded_root.cpp, remove_stale_embedded_state
// in guest/dead_run_leftovers.cpp, reapable_zombie in guest/qemu_reaper.cpp.
namespace abvm {
namespace {

using Clock = std::chrono::steady_clock;

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
  // domains now come to us, and the reaper thread reaps them (guest/qemu_reaper.cpp).
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

std::string LibvirtDriver::describe() const {
  return fmt::format("libvirt {} (libvirt {}, QEMU {})", impl_->uri, impl_->versions.libvirt, impl_->versions.qemu);
}

HostVersions LibvirtDriver::versions() { return impl_->versions; }

std::vector<std::string> LibvirtDriver::active_domains() {
  virDomainPtr* list = nullptr;
  int n = virConnectListAllDomains(impl_->conn.get(), &list, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  if (n < 0) throw InfraError("libvirt: cannot list domains: " + libvirt_error());
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
    if (virDomainDestroy(d) < 0 && libvirt_error_code() != VIR_ERR_NO_DOMAIN &&
        libvirt_error_code() != VIR_ERR_OPERATION_INVALID) {
      throw InfraError(fmt::format("libvirt: cannot destroy leftover domain {}: {}", name, libvirt_error()));
    }
    destroyed.push_back(name);
  }
  return destroyed;
}

}  // namespace abvm
