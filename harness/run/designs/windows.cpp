#include "run/designs/windows.hpp"

#include "samples/journal.hpp"
#include "samples/overlap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <array>
#include <cmath>
#include <tuple>
#include <vector>

namespace abvm {

double host_now() {
  static const auto steady_base = std::chrono::steady_clock::now();
  static const double epoch_base =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return epoch_base + std::chrono::duration<double>(std::chrono::steady_clock::now() - steady_base).count();
}

namespace {

// When the host typed `word` into the boot, if it did (the first time).
std::optional<double> typed_at(const HostClockLog& log, const std::string& word) {
  for (const auto& w : log.typed) {
    if (w.word == word) return w.at;
  }
  return std::nullopt;
}

// Upper bounds of the offset host - guest: the printed marks of the step (paced) or of the run
// (unpaced) that reached the host.
std::vector<double> upper_bounds(const GuestReport& report, const HostClockLog& log, long step, long run) {
  std::vector<double> out;
  for (const GuestClockMark& m : report.clock_marks) {
    if ((step >= 0 && m.step != step) || (step < 0 && m.run != run)) continue;
    if (const auto got = log.received.find(m.seq); got != log.received.end()) out.push_back(got->second - m.t);
  }
  return out;
}

// Lower bounds: the words of the step the guest heard (the go, and the stop or an abort).
std::vector<double> lower_bounds(const HostClockLog& log, const GuestWindow& w) {
  std::vector<double> out;
  if (auto go = typed_at(log, fmt::format("go {}", w.step))) out.push_back(*go - w.t_go);
  if (auto stop = typed_at(log, fmt::format("stop {}", w.step))) {
    out.push_back(*stop - w.t_stop);
  } else if (auto abort = typed_at(log, "abort")) {
    out.push_back(*abort - w.t_stop);
  }
  return out;
}

// The offset of one guest run and its uncertainty (see the header), or nullopt when nothing
// bounds it.
std::optional<std::pair<double, double>> offset_of(const GuestReport& report, const HostClockLog& log, long run) {
  const GuestRun& r = report.runs[static_cast<std::size_t>(run)];
  const auto hi = r.window ? upper_bounds(report, log, r.window->step, -1) : upper_bounds(report, log, -1, run);
  const auto lo = r.window ? lower_bounds(log, *r.window) : std::vector<double>{};
  if (hi.empty() && lo.empty()) return std::nullopt;
  if (hi.empty()) return std::pair{*std::max_element(lo.begin(), lo.end()), 0.0};
  const double upper = *std::min_element(hi.begin(), hi.end());
  if (lo.empty()) return std::pair{upper, (*std::max_element(hi.begin(), hi.end()) - upper) / 2};
  const double lower = *std::max_element(lo.begin(), lo.end());
  return std::pair{(lower + upper) / 2, std::abs(upper - lower) / 2};
}

}  // namespace

void time_runs(const GuestReport& report, const HostClockLog& log, std::vector<RunResult>& runs) {
  for (RunResult& run : runs) {
    run.timing.reset();
    const std::string& name = run.report_name.empty() ? run.workload : run.report_name;
    for (std::size_t i = 0; i < report.runs.size(); ++i) {
      const GuestRun& g = report.runs[i];
      if (g.warmup || g.index != run.index || g.workload != name) continue;
      const auto off = offset_of(report, log, static_cast<long>(i));
      if (!off) break;
      const auto [o, error] = *off;
      RunTiming t{.start = g.t_start + o, .end = g.t_end + o, .load_end = g.t_end + o, .clock_error = error};
      if (g.window) {
        t.go = typed_at(log, fmt::format("go {}", g.window->step));
        if (g.window->fills > 0) {
          t.fill = std::max(t.end, g.window->t_fill + o);
          t.load_end = std::max(*t.fill, g.window->t_load_end + o);
        }
      }
      // Guest output is hostile: times the journal could not carry (not finite, a run that ends
      // before it starts) give the run no timing rather than a line that cannot be written.
      if (!timing_problem(t)) run.timing = t;
      break;
    }
  }
}

namespace {

// The statistics read before `word` was typed: the reading, or nullopt when it was never typed.
std::optional<DomainStatsReading> stats_before(const HostClockLog& log, const std::string& word) {
  for (const auto& w : log.typed) {
    if (w.word == word) return w.stats.value_or(DomainStatsReading{.error = "the driver reads no statistics"});
  }
  return std::nullopt;
}

// The readings taken as unpaced run `index` (of report.runs) began and ended, from its clock marks.
std::pair<std::optional<DomainStatsReading>, std::optional<DomainStatsReading>> unpaced_edges(
    const GuestReport& report, const HostClockLog& log, long index) {
  std::vector<std::uint64_t> seqs;
  for (const GuestClockMark& m : report.clock_marks) {
    if (m.run == index) seqs.push_back(m.seq);
  }
  std::sort(seqs.begin(), seqs.end());
  const auto read = [&](std::uint64_t seq) -> std::optional<DomainStatsReading> {
    const auto it = log.read_at.find(seq);
    return it == log.read_at.end() ? std::optional(DomainStatsReading{.error = "the driver reads no statistics"})
                                   : std::optional(it->second);
  };
  if (seqs.size() != 2) return {seqs.empty() ? std::nullopt : read(seqs[0]), std::nullopt};
  // The start: at the run's NEXT (before its preparation), else at its RUN (agents before NEXT).
  const auto& next = report.runs[static_cast<std::size_t>(index)].next_seq;
  return {read(next ? *next : seqs[0]), read(seqs[1])};
}

// The reading taken as step `step`'s DONE arrived (its last clock mark: READY's comes before it), or
// nullopt when there is none (an agent whose DONE was not marked, a driver that reads nothing).
std::optional<DomainStatsReading> done_reading(const GuestReport& report, const HostClockLog& log, long step) {
  std::optional<std::uint64_t> done;
  for (const GuestClockMark& m : report.clock_marks) {
    if (m.step == step && (!done || m.seq > *done)) done = m.seq;
  }
  if (!done) return std::nullopt;
  const auto it = log.read_at.find(*done);
  if (it == log.read_at.end()) return std::nullopt;
  return it->second;
}

struct WindowCpu {
  double seconds = 0;
  CpuClock clock = CpuClock::libvirt;
  std::uint64_t threads_ended = 0;  // threads of the first reading gone at the second
};

// The CPU the QEMU spent between two readings on the finest clock both have. On schedstat each thread
// that lives at the end adds its own difference (all of its CPU when it began in between), and a
// thread that ended in between adds nothing: QEMU's pool workers end after 10 s idle, so what one
// spent inside a window of seconds is its exit. Mixed local clocks take the process's ticks;
// nullopt when a counter went back or one reading is libvirt's and the other local.
std::optional<WindowCpu> window_cpu(const DomainStats& go, const DomainStats& stop) {
  using enum CpuClock;
  if (go.cpu_clock == schedstat && stop.cpu_clock == schedstat) {
    std::uint64_t ns = 0, ended = 0;
    auto before = go.threads.begin();
    for (const ThreadCpu& t : stop.threads) {
      for (; before != go.threads.end() && before->tid < t.tid; ++before) ++ended;
      std::uint64_t earlier = 0;
      if (before != go.threads.end() && before->tid == t.tid) {
        if (before->ns <= t.ns) earlier = before->ns;
        else ++ended;  // less than before: a new thread took the ended one's id
        ++before;
      }
      ns += t.ns - earlier;
    }
    ended += static_cast<std::uint64_t>(go.threads.end() - before);
    return WindowCpu{.seconds = static_cast<double>(ns) / 1e9, .clock = schedstat, .threads_ended = ended};
  }
  if ((go.cpu_clock == libvirt) != (stop.cpu_clock == libvirt)) return std::nullopt;
  WindowCpu cpu{.seconds = stop.cpu_seconds - go.cpu_seconds, .clock = go.cpu_clock};
  if (go.cpu_clock != stop.cpu_clock) cpu = {.seconds = stop.tick_cpu_seconds - go.tick_cpu_seconds, .clock = ticks};
  if (cpu.seconds < 0) return std::nullopt;
  return cpu;
}

}  // namespace

void cost_windows(const GuestReport& report, const HostClockLog& log, std::vector<RunResult>& runs) {
  for (RunResult& run : runs) {
    run.host_cost.reset();
    run.host_cost_missing.clear();
    const std::string& name = run.report_name.empty() ? run.workload : run.report_name;
    const auto g = std::find_if(report.runs.begin(), report.runs.end(), [&](const GuestRun& r) {
      return !r.warmup && r.index == run.index && r.workload == name;
    });
    if (g == report.runs.end()) continue;
    std::optional<DomainStatsReading> go, stop;
    if (g->window) {
      go = stats_before(log, fmt::format("go {}", g->window->step));
      stop = done_reading(report, log, g->window->step);
      if (stop) {
        run.window_runs = 1;  // its filler began just before DONE: the window holds the measured run
      } else {
        stop = stats_before(log, fmt::format("stop {}", g->window->step));
      }
    } else {
      std::tie(go, stop) = unpaced_edges(report, log, g - report.runs.begin());
    }
    if (!go || !stop) {
      run.host_cost_missing = g->window ? "the window was not closed by a stop" : "the run's edges were not seen";
    } else if (!go->stats || !stop->stats) {
      const bool first = !go->stats;
      run.host_cost_missing = std::string(g->window ? (first ? "at the go: " : "at the window's end: ")
                                                    : (first ? "at the run's start: " : "at the run's end: ")) +
                              (first ? go->error : stop->error);
    } else if (const auto cpu = window_cpu(*go->stats, *stop->stats);
               stop->stats->disk_bytes < go->stats->disk_bytes || !cpu) {
      run.host_cost_missing = "the host's counters went back (or changed clocks) between the go and the stop";
    } else {
      const DomainStats& a = *go->stats;
      const DomainStats& b = *stop->stats;
      run.host_cost = HostWindowCost{.cpu_seconds = cpu->seconds,
                                     .cpu_clock = cpu->clock,
                                     .threads_ended = cpu->threads_ended,
                                     .user_seconds = std::max(0.0, b.user_seconds - a.user_seconds),
                                     .system_seconds = std::max(0.0, b.system_seconds - a.system_seconds),
                                     .vcpu_seconds = std::max(0.0, b.vcpu_seconds - a.vcpu_seconds),
                                     .disk_bytes = b.disk_bytes - a.disk_bytes,
                                     .disk_requests = b.disk_requests >= a.disk_requests ? b.disk_requests - a.disk_requests : 0};
    }
  }
}

void pair_overlaps(const std::vector<TrialResult*>& block) {
  // (workload, index) -> the run of each side, with the trial it belongs to.
  std::map<std::pair<std::string, int>, std::array<std::pair<RunResult*, const TrialResult*>, 2>> pairs;
  for (TrialResult* t : block) {
    for (RunResult& run : t->runs) {
      run.overlap.reset();
      pairs[{run.workload, run.index}][run.side == Side::a ? 0 : 1] = {&run, t};
    }
  }
  for (auto& [key, sides] : pairs) {
    auto [a, trial_a] = sides[0];
    auto [b, trial_b] = sides[1];
    if (a == nullptr || b == nullptr || !a->timing || !b->timing) continue;
    std::tie(a->overlap, b->overlap) = pair_overlap(*a->timing, trial_a->trial.id, *b->timing, trial_b->trial.id);
  }
}

}  // namespace abvm
