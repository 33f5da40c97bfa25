#pragma once
// Internal to guest/: the host threads that run a local QEMU's vCPUs, and placing them on host
// CPUs (the placer behind ConsoleHooks::on_vcpus). libvirt starts QEMU with debug-threads=on, so
// each vCPU thread is named "CPU <n>/TCG" or "CPU <n>/KVM" in /proc/<pid>/task/<tid>/comm.
#include <string_view>
#include <vector>

#include "guest/driver.hpp"

namespace abvm {

// Whether a thread named `comm` (as /proc gives it, with its newline) runs a vCPU.
bool is_vcpu_thread_name(std::string_view comm);

// The vCPU threads of the QEMU process `qemu_pid` on this machine, ascending; empty when it has
// none or is gone.
std::vector<long> vcpu_threads(long qemu_pid);

// Places the threads `tids` on the host CPUs `cpus` (sched_setaffinity); false when one of them
// is gone or the kernel refuses (a CPU outside the process's cgroup set).
bool place_threads(const std::vector<long>& tids, const std::vector<int>& cpus);

}  // namespace abvm
