#include "guest/domain_stats.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "core/process.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/vcpu_threads.hpp"

namespace abvm {
namespace {

// The whole process's CPU of a local QEMU from /proc/<pid>/stat (utime, stime: every thread's, the
// ended ones' too, in clock ticks: 10 ms, 6-7 % of a 2.4 s dd's host CPU under TCG).
std::optional<DomainStats> process_ticks(long pid) {
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
  const double cpu = static_cast<double>(utime + stime) / tick;
  return DomainStats{.cpu_seconds = cpu, .cpu_clock = CpuClock::ticks, .tick_cpu_seconds = cpu,
                     .user_seconds = static_cast<double>(utime) / tick,
                     .system_seconds = static_cast<double>(stime) / tick};
}

// A thread's CPU in ns: the first field of /proc/<pid>/task/<tid>/schedstat, the scheduler's
// sum_exec_runtime (kernels with CONFIG_SCHED_INFO, as Debian's).
std::optional<std::uint64_t> thread_ns(const std::filesystem::path& task) {
  std::ifstream in(task / "schedstat");
  std::uint64_t ns = 0;
  if (!(in >> ns)) return std::nullopt;
  return ns;
}

}  // namespace

std::optional<DomainStats> local_process_cpu(long pid) {
  auto s = process_ticks(pid);
  if (!s) return s;
  std::error_code ec;
  std::uint64_t all = 0, vcpus = 0;
  std::vector<ThreadCpu> threads;
  for (const auto& task : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
    const std::string tid = task.path().filename().string();
    if (tid.empty() || tid.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto ns = thread_ns(task.path());
    if (!ns) return s;  // a thread that ended while listed: its CPU is in the ticks only
    all += *ns;
    if (is_vcpu_thread_name(read_proc((task.path() / "comm").string()))) vcpus += *ns;
    threads.push_back({.tid = std::stol(tid), .ns = *ns});
  }
  if (ec || threads.empty()) return s;
  std::sort(threads.begin(), threads.end(), [](const ThreadCpu& x, const ThreadCpu& y) { return x.tid < y.tid; });
  s->cpu_seconds = static_cast<double>(all) / 1e9;
  s->cpu_clock = CpuClock::schedstat;
  s->threads = std::move(threads);
  s->vcpu_seconds = static_cast<double>(vcpus) / 1e9;
  return s;
}

namespace {

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
  // A QEMU on this machine (the embedded driver's) is counted by its threads' schedstat: libvirt's
  // cpu.time of a QEMU outside a cgroup comes in 10 ms steps (every window of a ruler's journal was a
  // multiple of 10 ms), a cgroup's usage in ns.
  if (auto local = qemu_pid > 0 ? local_process_cpu(qemu_pid) : std::nullopt) {
    local->disk_bytes = s.disk_bytes, local->disk_requests = s.disk_requests;
    if (local->cpu_clock != CpuClock::schedstat) local->vcpu_seconds = s.vcpu_seconds;  // libvirt's vcpu.<n>.time
    s = std::move(*local);
  } else if (!cpu) {
    return {.error = "libvirt's domain statistics have no cpu.time, and its QEMU is not on this machine"};
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
