#include "guest/domain_stats.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "guest/libvirt_handles.hpp"

namespace abvm {
namespace {

// The CPU of a local QEMU from /proc/<pid>/stat (utime, stime: every thread's, in clock ticks), for
// a connection whose statistics have no cpu.* (QEMU outside a cgroup: the embedded driver).
std::optional<DomainStats> local_process_cpu(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (pid <= 0 || !std::getline(in, text)) return std::nullopt;
  const auto paren = text.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt; utime is field 14
  unsigned long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return std::nullopt;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return DomainStats{.cpu_seconds = static_cast<double>(utime + stime) / tick,
                     .user_seconds = static_cast<double>(utime) / tick,
                     .system_seconds = static_cast<double>(stime) / tick};
}

// One call of virDomainListGetStats (cpu.*, vcpu.<n>.time, block.<n>.*). `disk_counted` says whether
// it had the disks' counters: libvirt leaves them out, silently, when its query of QEMU's monitor
// fails (qemuDomainGetStatsBlock), and a reading without them is not a disk that moved nothing.
DomainStatsReading read_domain_stats_once(virDomainPtr dom, long qemu_pid, bool& disk_counted) {
  disk_counted = false;
  virDomainPtr doms[] = {dom, nullptr};
  virDomainStatsRecordPtr* records = nullptr;
  const unsigned int kinds = VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_VCPU | VIR_DOMAIN_STATS_BLOCK;
  if (virDomainListGetStats(doms, kinds, &records, 0) < 1 || records == nullptr) {
    DomainStatsReading failed{.error = "virDomainListGetStats: " + libvirt_error()};
    if (records != nullptr) virDomainStatsRecordListFree(records);
    return failed;
  }
  DomainStats s;
  bool cpu = false;
  const virDomainStatsRecordPtr r = records[0];
  for (int i = 0; i < r->nparams; ++i) {
    const virTypedParameter& p = r->params[i];
    if (p.type != VIR_TYPED_PARAM_ULLONG) continue;
    const std::string_view name = p.field;
    const auto ns = static_cast<double>(p.value.ul) / 1e9;
    if (name == "cpu.time") s.cpu_seconds = ns, cpu = true;
    else if (name == "cpu.user") s.user_seconds = ns;
    else if (name == "cpu.system") s.system_seconds = ns;
    else if (name.starts_with("vcpu.") && name.ends_with(".time")) s.vcpu_seconds += ns;
    else if (name.starts_with("block.") && (name.ends_with(".rd.bytes") || name.ends_with(".wr.bytes"))) {
      s.disk_bytes += p.value.ul;
      disk_counted = true;
    }
    else if (name.starts_with("block.") && (name.ends_with(".rd.reqs") || name.ends_with(".wr.reqs"))) s.disk_requests += p.value.ul;
  }
  virDomainStatsRecordListFree(records);
  if (!cpu) {
    const auto local = local_process_cpu(qemu_pid);
    if (!local) return {.error = "libvirt's domain statistics have no cpu.time, and its QEMU is not on this machine"};
    s.cpu_seconds = local->cpu_seconds, s.user_seconds = local->user_seconds, s.system_seconds = local->system_seconds;
  }
  return {.stats = s};
}

}  // namespace

DomainStatsReading read_domain_stats(virDomainPtr dom, long qemu_pid) {
  bool disk_counted = false;
  DomainStatsReading r = read_domain_stats_once(dom, qemu_pid, disk_counted);
  if (!r.stats || disk_counted) return r;
  r = read_domain_stats_once(dom, qemu_pid, disk_counted);
  if (r.stats && !disk_counted) {
    return {.error = "libvirt's domain statistics had no disk counters twice (its query of QEMU's monitor failed)"};
  }
  return r;
}

}  // namespace abvm
