#pragma once
// Internal to guest/: what runs of abvm leave behind on this machine (guest/dead_run_leftovers.cpp),
// found by their processes' command lines and their domains' names: QEMUs of guests, QEMUs of
// capability probes, QEMU logs. LibvirtDriver::remove_stale_embedded_state is defined there too.
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace abvm {

// QEMU processes on this machine whose command line names domain `name` ("-name guest=NAME,"):
// how a guest is found when the daemon that started it has gone.
std::vector<pid_t> local_qemus_of(const std::string& name);

// SIGKILLs the probe QEMUs of a root no live process uses: every QEMU whose QMP socket path
// starts with `prefix` (from the root up to "qmp-"). Returns how many were killed.
int kill_leftover_probes(const std::string& prefix);

// The probe QEMUs of private roots (private_roots_dir()/<pid>) whose process is gone.
void kill_probes_of_dead_private_roots();

// Removes the QEMU logs (log/qemu/<name>.log) of domains whose abvm process is gone.
void remove_logs_of_dead_runs(const std::filesystem::path& root);

}  // namespace abvm
