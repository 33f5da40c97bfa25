#include "run/designs/windows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <array>
#include <cmath>
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

double overlap(double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); }

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
      RunTimes t{.start = g.t_start + o, .end = g.t_end + o, .fill = g.t_end + o, .load_end = g.t_end + o,
                 .clock_error = error};
      if (g.window) {
        t.go = typed_at(log, fmt::format("go {}", g.window->step));
        t.fill = std::max(t.end, g.window->t_fill + o);
        if (g.window->fills > 0) t.load_end = std::max(t.fill, g.window->t_load_end + o);
      }
      run.timing = t;
      break;
    }
  }
}

double share_under_load(const RunTimes& run, const RunTimes& partner) {
  const double length = run.end - run.start;
  const double measured = overlap(run.start, run.end, partner.start, partner.end);
  // The filler starts after the partner's run has ended: the two intervals never overlap.
  const double filler = partner.load_end > partner.fill ? overlap(run.start, run.end, partner.fill, partner.load_end) : 0;
  if (length <= 0) {
    const bool loaded = (run.start >= partner.start && run.start <= partner.end) ||
                        (partner.load_end > partner.fill && run.start >= partner.fill && run.start <= partner.load_end);
    return loaded ? 1 : 0;
  }
  return std::clamp((measured + filler) / length, 0.0, 1.0);
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
    const double share_a = share_under_load(*a->timing, *b->timing);
    const double share_b = share_under_load(*b->timing, *a->timing);
    const double pair = std::min(share_a, share_b);
    a->overlap = PartnerOverlap{.partner = trial_b->trial.id, .run = share_a, .pair = pair};
    b->overlap = PartnerOverlap{.partner = trial_a->trial.id, .run = share_b, .pair = pair};
  }
}

}  // namespace abvm
