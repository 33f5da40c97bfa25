#include "samples/cost_notes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "samples/cost.hpp"

namespace abvm {
namespace {

using WorkloadSide = std::pair<std::string, Side>;

std::string where(const JournalEntry& e) { return fmt::format("trial {} run {}", e.trial, e.run); }

std::vector<std::string> short_disk_notes(const std::vector<JournalEntry>& entries) {
  std::map<WorkloadSide, std::pair<std::size_t, std::string>> short_disks;  // count, first run
  for (const auto& e : entries) {
    if (e.outcome != Outcome::ok || !e.cost || !disk_saw_too_little(*e.cost)) continue;
    auto& [count, first] = short_disks[{e.workload, e.side}];
    if (count++ == 0) first = where(e);
  }
  std::vector<std::string> out;
  for (const auto& [key, value] : short_disks) {
    out.push_back(fmt::format(
        "{} on side {}: in {} window(s) (first {}) the disk received less than {:.2f} x the bytes the tool "
        "reports: a cache is in the way, and the host's cost per GiB of those windows is per byte that reached it",
        key.first, to_string(key.second), value.first, value.second, kDiskBytesShare));
  }
  return out;
}

std::vector<std::string> missing_host_cost_notes(const std::vector<JournalEntry>& entries) {
  struct Missing {
    std::size_t runs = 0, without = 0;
    std::string first;
  };
  std::map<WorkloadSide, Missing> missing;
  for (const auto& e : entries) {
    if (e.outcome != Outcome::ok || !e.cost) continue;
    Missing& m = missing[{e.workload, e.side}];
    ++m.runs;
    if (e.cost->host || e.cost->host_missing.empty()) continue;
    if (m.without++ == 0) m.first = fmt::format("{}: {}", where(e), e.cost->host_missing);
  }
  std::vector<std::string> out;
  for (const auto& [key, m] : missing) {
    if (m.without == 0) continue;
    out.push_back(fmt::format("{} on side {}: {} of {} run(s) have no host cost (first {}): the host's CPU per GiB "
                              "and per request leave them out",
                              key.first, to_string(key.second), m.without, m.runs, m.first));
  }
  return out;
}

std::vector<std::string> guest_tick_notes(const std::vector<JournalEntry>& entries) {
  std::map<std::string, std::vector<std::uint64_t>> busy;  // workload -> busy ticks of each run
  for (const auto& e : entries) {
    if (e.outcome == Outcome::ok && e.cost && e.cost->guest_ticks) busy[e.workload].push_back(e.cost->guest_ticks->busy);
  }
  std::vector<std::string> out;
  for (auto& [workload, ticks] : busy) {
    std::nth_element(ticks.begin(), ticks.begin() + static_cast<std::ptrdiff_t>(ticks.size() / 2), ticks.end());
    const std::uint64_t median = ticks[ticks.size() / 2];
    const std::string share =
        median == 0 ? std::string("under one tick a run: its guest CPU per GiB is mostly 0 or absent")
                    : fmt::format("a median of {} busy tick(s) a run, so one tick is {:.1f} % of a run's figure", median,
                                  100.0 / static_cast<double>(median));
    out.push_back(fmt::format("{}: the guest's CPU is counted from its /proc/stat in 10 ms ticks, {}; steal stays 0 "
                              "where the hypervisor does not report it (TCG), so CPU the host took from the guest is "
                              "not seen",
                              workload, share));
  }
  return out;
}

// How the host's CPU of the windows was counted, where a reader must know: windows in the process's
// 10 ms ticks (its threads' schedstat could not be read), with the share one tick is of their median
// CPU, and windows in which a thread of the QEMU ended (its CPU in them is not counted).
std::vector<std::string> host_clock_notes(const std::vector<JournalEntry>& entries) {
  struct Clocks {
    std::size_t windows = 0, ended = 0;
    std::vector<double> ticked;  // the host CPU s of the windows counted in ticks
  };
  std::map<WorkloadSide, Clocks> clocks;
  for (const auto& e : entries) {
    if (e.outcome != Outcome::ok || !e.cost || !e.cost->host) continue;
    Clocks& c = clocks[{e.workload, e.side}];
    ++c.windows;
    if (e.cost->host->cpu_clock == CpuClock::ticks) c.ticked.push_back(e.cost->host->cpu_seconds);
    if (e.cost->host->threads_ended > 0) ++c.ended;
  }
  std::vector<std::string> out;
  for (auto& [key, c] : clocks) {
    const std::string who = fmt::format("{} on side {}", key.first, to_string(key.second));
    if (!c.ticked.empty()) {
      auto mid = c.ticked.begin() + static_cast<std::ptrdiff_t>(c.ticked.size() / 2);
      std::nth_element(c.ticked.begin(), mid, c.ticked.end());
      out.push_back(fmt::format("{}: the host's CPU of {} of {} window(s) is counted in 10 ms ticks "
                                "(/proc/<pid>/stat: its QEMU threads' schedstat was unreadable): one tick is "
                                "{:.1f} % of their median window's {:.3f} s",
                                who, c.ticked.size(), c.windows, *mid > 0 ? 100.0 * 0.01 / *mid : 100.0, *mid));
    }
    if (c.ended > 0) {
      out.push_back(fmt::format("{}: in {} of {} window(s) a thread of its QEMU ended, and its CPU inside the window "
                                "is not counted (QEMU's pool workers end after 10 s idle: what one spends in a "
                                "window is its exit)",
                                who, c.ended, c.windows));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> cost_notes(const std::vector<JournalEntry>& entries) {
  std::vector<std::string> out = short_disk_notes(entries);
  for (auto* more : {&missing_host_cost_notes, &host_clock_notes, &guest_tick_notes}) {
    std::vector<std::string> notes = (*more)(entries);
    out.insert(out.end(), std::make_move_iterator(notes.begin()), std::make_move_iterator(notes.end()));
  }
  return out;
}

}  // namespace abvm
