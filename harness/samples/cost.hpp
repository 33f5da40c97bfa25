#pragma once
// What a run cost, beside how fast it went (issue 27): the CPU each side spends per byte moved,
// seen from the guest (per run) and from the host (per window), and the metrics made of it.
//
// The guest's view: fio's own usr_cpu + sys_cpu over its job runtime (its threads' getrusage), or
// for dd the guest's /proc/stat busy ticks over the run (10 ms each). The host's view: libvirt's
// domain statistics of the guest's QEMU (guest/driver.hpp DomainStats) read just before the host's
// go and as the window's DONE arrives, or as an unpaced run's NEXT and RUNEND records arrive
// (run/designs/windows.hpp cost_windows): the bytes its disk received between the same readings
// are what the CPU is divided by, so the ratio stays per byte.
// Under TCG the host's CPU includes the emulator's translation of every guest instruction.
//
// Metrics (lower is better; reported everywhere, judged only when named in [analysis] metrics,
// samples/select.hpp; made by samples/journal.hpp cost_metrics):
//   <workload>.guest_cpu_per_gib  guest CPU s per GiB the tool moved
//   <workload>.host_cpu_per_gib   host CPU s (the whole QEMU process) per GiB its disk received
//   <workload>.host_cpu_per_req   host CPU us per request its disk received (fio workloads)
// A figure that is not there (old results, a failed statistics call, zero ticks counted) is absent,
// never zero.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"

namespace abvm {

// The host's view of one window of one guest: differences of libvirt's domain statistics.
struct HostWindowCost {
  double cpu_seconds = 0;        // cpu.time: every thread of the guest's QEMU
  // How cpu_seconds was counted (run/designs/windows.cpp window_cpu): the finest clock both of the
  // window's readings have. Absent in journals written before abvm recorded it (a field added
  // within journal version 3: older readers ignore it).
  std::optional<CpuClock> cpu_clock;
  // cpu_clock schedstat: threads of the QEMU that ended inside the window, whose CPU in it is not
  // counted (QEMU's pool workers end after 10 s idle: their exit). 0 in older journals.
  std::uint64_t threads_ended = 0;
  double user_seconds = 0;       // cpu.user
  double system_seconds = 0;     // cpu.system
  double vcpu_seconds = 0;       // sum of vcpu.<n>.time: the guest's own CPUs
  std::uint64_t disk_bytes = 0;  // the scratch disk's block.<n>.rd.bytes + wr.bytes
  std::uint64_t disk_requests = 0;  // rd.reqs + wr.reqs
  bool operator==(const HostWindowCost&) const = default;
};

// The guest's /proc/stat ticks over a run (guest/records.hpp GuestCpuTicks, in samples' words).
struct GuestTicks {
  std::uint64_t busy = 0, all = 0;
  bool operator==(const GuestTicks&) const = default;
};

struct RunCost {
  std::uint64_t tool_bytes = 0;     // what the tool says its measured run moved
  // Runs of the tool the host's window holds at least: the measured one and the filler's finished
  // ones (its last one is stopped early).
  std::uint64_t tool_runs = 1;
  std::optional<double> guest_cpu_seconds;  // fio's usr+sys, or busy ticks / USER_HZ
  std::optional<GuestTicks> guest_ticks;    // /proc/stat over the run (the guest's figure for dd)
  std::optional<std::uint64_t> fio_ctx;     // fio: the jobs' context switches
  std::optional<HostWindowCost> host;
  std::string host_missing;                 // why `host` is absent ("" when it is there or not sampled)
  bool operator==(const RunCost&) const = default;
};

// /proc/stat counts USER_HZ ticks, 100 a second whatever the kernel's HZ.
inline constexpr double kUserHz = 100;

// A window whose disk received less than this share of the bytes the tool reports had a cache in
// the way (or lost the filler's runs): its host cost per byte is flagged.
inline constexpr double kDiskBytesShare = 0.95;

// True when the host's disk counted fewer than kDiskBytesShare of the tool's bytes in the window.
bool disk_saw_too_little(const RunCost& cost);

// "<workload>.guest_cpu_per_gib", ".host_cpu_per_gib" or ".host_cpu_per_req".
bool is_cost_metric(std::string_view metric);

}  // namespace abvm
