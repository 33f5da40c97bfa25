#include "guest/vcpu_threads.hpp"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/process.hpp"

namespace abvm {

bool is_vcpu_thread_name(std::string_view comm) {
  if (!comm.starts_with("CPU ")) return false;
  comm.remove_prefix(4);
  const std::size_t digits = comm.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos) return false;
  comm.remove_prefix(digits);
  return comm.starts_with("/TCG") || comm.starts_with("/KVM");
}

std::vector<long> vcpu_threads(long qemu_pid) {
  std::vector<long> out;
  if (qemu_pid <= 0) return out;
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(qemu_pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (is_vcpu_thread_name(read_proc((entry.path() / "comm").string()))) out.push_back(std::stol(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool place_threads(const std::vector<long>& tids, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  bool all = !tids.empty();
  for (long tid : tids) all = sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0 && all;
  return all;
}

}  // namespace abvm
