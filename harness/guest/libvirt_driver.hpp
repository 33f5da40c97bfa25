#pragma once
// The real guest driver: libvirt, by default its embedded QEMU driver (in-process, no daemon).
//
// Embedded mode (`qemu:///embed?root=DIR`): libvirt keeps all its state, including QEMU's
// capability cache, under DIR; the first connection in a fresh DIR probes QEMU (about 45 s),
// later ones take well under a second. DIR is `$XDG_CACHE_HOME/abvm/libvirt` (or
// `~/.cache/abvm/libvirt`), outside any source tree. Two requirements that embedded_uri() sees to:
//   - DIR/etc/qemu.conf runs QEMU as root without a security driver, namespaces or cgroups (all of
//     which need a system daemon) and captures QEMU's stdio in files (no virtlogd);
//   - the accounts `libvirt-qemu` (user and group) exist: Debian's libvirt is built with them as
//     the default QEMU user and resolves that name before it reads qemu.conf. Debian's
//     libvirt-daemon-system package creates them; abvm does not need that package, so when they are
//     missing and abvm runs as root it creates them the same way (system accounts, no login, home
//     /var/lib/libvirt); not as root it stops with the command to run.
// Any other URI (qemu:///system with a running libvirtd, qemu+tcp://, qemu+ssh://, qemu+tls://)
// is used as given, and is taken to be a host that cannot see this machine's files: the kernel,
// initrd and scratch disk reach it as storage volumes (guest/volume_staging.hpp), and the
// console comes back over the connection (guest/console_stream.hpp) as it does for the embedded
// driver. A daemon can die or restart mid-run: the trial whose guest was running becomes an infra
// error, and the next run_guest connects again (trying for the reconnect window, 30 s by
// default) and destroys that guest before booting; if the daemon does not come back it throws
// InfraError naming the URI, after killing that guest's QEMU when the URI is local. No call to a
// daemon waits forever: the first connection is given up at the end of the reconnect window, as
// later ones are (virConnectOpen has no timeout of its own), and every connection to a daemon,
// this machine's too, has libvirt keepalive on, so a host that vanished, or a daemon that stopped
// answering, ends the call within ~20 s.
//
// A libvirt event loop thread runs for the whole process (libvirt needs one to watch its QEMU
// processes); it starts with the first connection. libvirt's default printing of errors to
// stderr is silenced: its messages come back inside abvm's exceptions and outcomes instead.
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guest/driver.hpp"
#include "guest/volume_staging.hpp"

namespace abvm {

struct LibvirtDriverOptions {
  StagingOptions staging;  // the pool on a host that gets volumes (not the embedded driver)
  // How long run_guest keeps trying to connect again after the connection was lost (a libvirt
  // daemon that died or restarted) before it throws InfraError; also how long the first
  // connection to a daemon may take (not the embedded driver's: its first probe of QEMU takes
  // about 45 s).
  std::chrono::milliseconds reconnect_window{30000};
};

class LibvirtDriver final : public GuestDriver {
 public:
  // Connects to `uri` and, for a host that gets volumes, readies its pool; throws InfraError
  // with libvirt's message and the URI when that fails, or when a daemon does not answer within
  // the reconnect window.
  explicit LibvirtDriver(std::string uri, LibvirtDriverOptions options = {});
  ~LibvirtDriver() override;
  LibvirtDriver(const LibvirtDriver&) = delete;
  LibvirtDriver& operator=(const LibvirtDriver&) = delete;

  // The qemu.conf abvm writes for the embedded driver: QEMU as root, no security driver,
  // namespaces or cgroups, stdio to files (everything that would need system services off).
  static std::string_view embedded_qemu_conf_text();

  // The embedded driver's root directory (not created).
  static std::filesystem::path embedded_root();
  // Prepares embedded_root() (directories, etc/qemu.conf, the libvirt-qemu accounts) and returns
  // the URI for it. Throws InfraError when that is impossible, saying what to do.
  static std::string embedded_uri();

  // Removes what killed abvm processes left in an embedded root before anyone connects to it:
  // the saved state of their domains (run/qemu/abvm-<pid>-*) and the domains' private dirs,
  // after SIGKILLing a QEMU that still runs for one of them. Without this, libvirt reloads such
  // a domain half-started and refuses to destroy it ("cannot acquire state change lock") for
  // 30 s. Only names whose abvm pid is dead are touched. Returns the domain names removed.
  static std::vector<std::string> remove_stale_embedded_state(const std::filesystem::path& root);

  // Whether the reaper thread of the embedded driver may reap the process whose /proc/<pid>/stat
  // is `stat`: a zombie child of `self` that libvirt left to us, i.e. not in `own_session` (a
  // domain's QEMU, daemonized by libvirt into a session of its own, or another orphan of another
  // session). A zombie QEMU in our own session is a child libvirt itself waits for (the QEMU
  // of a capability probe, run with -daemonize: its first process exits once the daemon is
  // ready), and reaping it makes the probe fail ("Cannot find suitable emulator").
  static bool reapable_zombie(std::string_view stat, long self, long own_session);

  // Boots one transient domain (virDomainCreateXML, paused until its console stream is open),
  // whose console libvirt's event loop drains as it comes; every ~25 ms the caller's predicate
  // sees it and the caller's input is typed. See GuestDriver. On return the domain is destroyed,
  // and the trial's volumes deleted, also when an exception leaves.
  using GuestDriver::run_guest;
  GuestOutcome run_guest(const DomainSpec& spec, std::chrono::milliseconds timeout,
                         const ConsoleHooks& hooks) override;

  std::string describe() const override;
  HostVersions versions() override;

  // Names of the running domains on this connection.
  std::vector<std::string> active_domains();

  // Destroys running domains left by abvm processes that no longer exist: names starting with
  // domain_name_prefix whose embedded pid (see domain_name()) is not a live process here. Only
  // for a daemon of this machine (qemu:///...): on a remote host the pid says nothing.
  // Returns the names destroyed.
  std::vector<std::string> destroy_leftovers();

  // What the volume staging did so far, and the host's pool directory; nothing for the
  // embedded driver, which uses this machine's files as they are.
  std::optional<StagingStats> staging_stats() const;
  std::optional<std::filesystem::path> pool_path() const;

 private:
  // Makes the connection again when it is dead, trying for the reconnect window, then destroys
  // `own_domains` (guests of trials that lost their connection); InfraError when it cannot.
  void ensure_connection(const std::vector<std::string>& own_domains);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  // Guards the connection handle and lost_domains_: co-scheduled trials call run_guest from
  // two threads at once.
  std::mutex mutex_;
  std::vector<std::string> lost_domains_;  // guests whose connection was lost while they ran
};

}  // namespace abvm
