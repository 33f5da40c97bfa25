#include "run/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace abvm {
namespace {

// Small /proc and /sys files: read directly (core's read_file throws on absence, which is
// normal here).
std::optional<std::string> slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return s.substr(b);
}

}  // namespace

std::string cpu_model_from_cpuinfo(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "";
}

nlohmann::json host_environment() {
  nlohmann::json env;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  env["hostname"] = host;
  struct utsname u {};
  if (::uname(&u) == 0) {
    env["host_kernel"] = {{"sysname", u.sysname}, {"release", u.release}, {"version", u.version},
                          {"machine", u.machine}};
  }
  env["cpu_model"] = cpu_model_from_cpuinfo(slurp("/proc/cpuinfo").value_or(""));
  env["cpus_online"] = std::thread::hardware_concurrency();
  const auto governor = slurp("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  env["cpufreq_governor"] = governor ? nlohmann::json(trim(*governor)) : nlohmann::json(nullptr);
  if (const auto load = slurp("/proc/loadavg")) {
    std::istringstream in(*load);
    double l1 = 0, l5 = 0, l15 = 0;
    in >> l1 >> l5 >> l15;
    env["load_average"] = {l1, l5, l15};
  }
  return env;
}

nlohmann::json run_environment(const HostVersions& versions, Accelerator accelerator,
                               const std::string& accelerator_reason) {
  nlohmann::json env = host_environment();
  env["libvirt_uri"] = versions.uri;
  env["libvirt_version"] = versions.libvirt;
  env["qemu_version"] = versions.qemu;
  // Where the guests ran, as libvirt told over the connection: the host above is abvm's own
  // machine, which for a remote connection is not the one that ran them.
  env["libvirt_host"] = {{"hostname", versions.hostname},   {"cpu_model", versions.cpu_model},
                         {"cpu_arch", versions.cpu_arch},   {"cpus", versions.cpus},
                         {"cpu_mhz", versions.cpu_mhz},     {"memory_kib", versions.memory_kib}};
  env["accelerator"] = to_string(accelerator);
  env["accelerator_reason"] = accelerator_reason;
  return env;
}

}  // namespace abvm
