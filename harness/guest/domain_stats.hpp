#pragma once
// Internal to guest/: a running domain's statistics (guest/domain_stats.cpp), the reading behind
// ConsoleHooks::on_running's DomainStatsReader.
#include <libvirt/libvirt.h>

#include <optional>

#include "guest/driver.hpp"

namespace abvm {

// The domain's statistics now (libvirt's virDomainListGetStats; the CPU of `qemu_pid` > 0, a QEMU on
// this machine, from local_process_cpu instead); asked a second time when the first answer has no
// disk counters.
DomainStatsReading read_domain_stats(virDomainPtr dom, long qemu_pid);

// The CPU of a local process (the embedded driver's QEMU, outside a cgroup): each live thread's
// schedstat in ns, their sum and its vCPU threads' share, and the process's ticks beside them
// (cpu_clock schedstat); the ticks alone when a thread's schedstat cannot be read (cpu_clock ticks);
// nullopt when the process is not there.
std::optional<DomainStats> local_process_cpu(long pid);

}  // namespace abvm
