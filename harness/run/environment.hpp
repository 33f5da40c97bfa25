#pragma once
// The host a run was measured on, recorded in environment.json: results carry their context
// (google/benchmark's "context"), and `abvm analyze` warns when sides differ in it.
#include <nlohmann/json.hpp>
#include <string>

#include "guest/driver.hpp"

namespace abvm {

// The parts read from the host itself (no hypervisor): hostname, host kernel (uname: sysname,
// release, version, machine), CPU model and count (/proc/cpuinfo), the cpufreq governor of
// cpu0 (null when the host has no cpufreq, as in most VMs), load averages (/proc/loadavg).
nlohmann::json host_environment();

// host_environment() plus the hypervisor's versions and the accelerator in use.
nlohmann::json run_environment(const HostVersions& versions, Accelerator accelerator,
                               const std::string& accelerator_reason);

// The first "model name" of a /proc/cpuinfo text ("" when absent); exposed for tests.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);

}  // namespace abvm
