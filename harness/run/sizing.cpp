#include "run/sizing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/units.hpp"
#include "plan/sizing.hpp"

namespace abvm {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }

// The largest factor whose run still fits on the scratch disk (unbounded when it does not use it).
std::uint64_t disk_room(const Experiment& e, const Workload& w) {
  const auto extent = scratch_extent(w.spec);
  if (!extent || *extent == 0) return std::numeric_limits<std::uint64_t>::max();
  return std::max<std::uint64_t>(1, e.disk.size_bytes / *extent);
}

// The scale later blocks recorded for `workload`, if any ran.
std::optional<std::uint64_t> recorded_scale(const std::vector<JournalEntry>& journal, const std::string& workload) {
  for (const auto& j : journal) {
    if (!j.sizing_block && j.workload == workload && j.scale > 0) return j.scale;
  }
  return std::nullopt;
}

WorkloadSizing size_workload(const Experiment& e, const Workload& w, const std::vector<JournalEntry>& journal,
                             int block) {
  WorkloadSizing s{.workload = w.name, .min_run_time = min_run_time(e, w), .before = run_size(w.spec)};
  std::vector<double> times;
  for (const auto& j : journal) {
    if (j.block == block && j.workload == w.name && j.outcome == Outcome::ok && j.timing) {
      times.push_back(j.timing->end - j.timing->start);
    }
  }
  s.runs = times.size();
  if (!times.empty()) s.median_seconds = median_of(std::move(times));
  if (const auto why = unsizable(w.spec)) {
    s.why_not = *why;
  } else if (s.min_run_time.count() == 0) {
    s.why_not = "min_run_time is 0";
  } else if (const auto recorded = recorded_scale(journal, w.name)) {
    s.scale = *recorded;
    s.recorded = true;
  } else if (!s.median_seconds) {
    s.why_not = "no ok run with a timing in the first block";
  } else {
    const std::uint64_t room = disk_room(e, w);
    s.scale = sizing_factor(*s.median_seconds, seconds(s.min_run_time), room);
    s.capped = s.scale == room && sizing_factor(*s.median_seconds, seconds(s.min_run_time), room + 1) > room;
  }
  s.after = s.scale > 1 ? run_size(scaled(w.spec, s.scale)) : s.before;
  return s;
}

}  // namespace

std::chrono::milliseconds min_run_time(const Experiment& e, const Workload& w) {
  return w.min_run_time.value_or(e.schedule.min_run_time);
}

std::optional<std::string> not_sized(const Experiment& e) {
  if (e.schedule.order == ScheduleOrder::sequential) {
    return "order = \"sequential\": the first block ends only after every boot of A";
  }
  const bool any = std::any_of(e.workloads.begin(), e.workloads.end(),
                               [&](const Workload& w) { return min_run_time(e, w).count() > 0 && !unsizable(w.spec); });
  if (!any) return "no workload has a min_run_time and a size abvm can scale";
  return std::nullopt;
}

bool Sizing::resized() const {
  return std::any_of(workloads.begin(), workloads.end(), [](const WorkloadSizing& w) { return w.scale > 1; });
}

std::map<std::string, std::uint64_t> Sizing::scales() const {
  std::map<std::string, std::uint64_t> out;
  for (const auto& w : workloads) out[w.workload] = w.scale;
  return out;
}

Sizing size_runs(const Experiment& e, const std::vector<JournalEntry>& journal, int block) {
  Sizing sizing;
  for (const Workload& w : e.workloads) sizing.workloads.push_back(size_workload(e, w, journal, block));
  return sizing;
}

std::vector<Workload> sized_workloads(const std::vector<Workload>& workloads, const Sizing& sizing) {
  std::vector<Workload> out = workloads;
  for (Workload& w : out) {
    const auto it = std::find_if(sizing.workloads.begin(), sizing.workloads.end(),
                                 [&](const WorkloadSizing& s) { return s.workload == w.name; });
    if (it != sizing.workloads.end() && it->scale > 1) w.spec = scaled(w.spec, it->scale);
  }
  return out;
}

std::vector<std::string> describe_sizing(const Sizing& sizing) {
  std::vector<std::string> out;
  for (const auto& s : sizing.workloads) {
    const std::string measured = s.median_seconds ? fmt::format("{:.3f} s per run (median of {} in the first block)",
                                                                *s.median_seconds, s.runs)
                                                  : "no timed run in the first block";
    if (!s.why_not.empty()) {
      out.push_back(fmt::format("{}: {} runs as written ({}): {}", s.workload, s.before, s.why_not, measured));
    } else if (s.recorded) {
      out.push_back(fmt::format("{}: {} (x{}), as recorded in the journal", s.workload, s.after, s.scale));
    } else if (s.scale == 1) {
      out.push_back(fmt::format("{}: {} >= {}: {} as written", s.workload, measured, format_duration(s.min_run_time),
                                s.before));
    } else {
      out.push_back(fmt::format("{}: {} < {}: {} -> {} (x{}{})", s.workload, measured, format_duration(s.min_run_time),
                                s.before, s.after, s.scale, s.capped ? ", as much as the scratch disk holds" : ""));
    }
  }
  return out;
}

std::string describe_run_lengths(const Experiment& e) {
  const auto off = not_sized(e);
  std::string out = off ? fmt::format("run lengths (not sized: {}):\n", *off)
                        : "run lengths (after the first block, each workload's runs grow to take at least its "
                          "min_run_time; the first block is set aside when one grew):\n";
  for (const Workload& w : e.workloads) {
    const auto why = unsizable(w.spec);
    const std::string target = off || why || min_run_time(e, w).count() == 0
                                   ? (why ? "as written: " + *why : std::string("as written"))
                                   : "at least " + format_duration(min_run_time(e, w)) + " per run";
    out += fmt::format("  {:<16} {}, {}\n", w.name, run_size(w.spec), target);
  }
  return out;
}

}  // namespace abvm
