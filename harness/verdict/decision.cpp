// The verdict: its names and exit codes, a metric's effect oriented so that above 1 is better, and
// the rule that judges the oriented interval against the margin (verdict/analysis.hpp, steps 4 and 5).
#include "verdict/analysis_steps.hpp"

#include <cmath>

#include "core/error.hpp"

namespace abvm {

const char* to_string(Estimate e) { return e == Estimate::paired ? "paired" : "unpaired"; }

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::no_change: return "no_change";
    case Verdict::improvement: return "improvement";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::regression: return "regression";
  }
  return "?";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v : {Verdict::regression, Verdict::improvement, Verdict::no_change, Verdict::inconclusive}) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

Verdict worst(Verdict x, Verdict y) { return static_cast<int>(x) >= static_cast<int>(y) ? x : y; }

int exit_code_for(Verdict v) {
  switch (v) {
    case Verdict::regression: return static_cast<int>(ExitCode::regression);
    case Verdict::inconclusive: return static_cast<int>(ExitCode::inconclusive);
    default: return static_cast<int>(ExitCode::ok);
  }
}

OrientedEffect oriented_effect(const MetricAnalysis& r) {
  return oriented_effect(r.effect.estimate, r.effect.low, r.effect.high, r.better);
}

OrientedEffect oriented_effect(double estimate, double low, double high, Better better) {
  using analysis_steps::oriented;
  const bool higher = better == Better::higher;
  return {.estimate = oriented(estimate, better),
          .low = oriented(higher ? low : high, better),
          .high = oriented(higher ? high : low, better)};
}

namespace analysis_steps {

// Orients a ratio B/A so that > 1 means B is better.
double oriented(double ratio, Better better) { return better == Better::higher ? ratio : 1.0 / ratio; }

// The verdict from the oriented interval and estimate against the margin: a regression (an
// improvement) is significant and estimated beyond the margin; B more often in a mode worse by more
// than the margin makes a no_change or an inconclusive verdict a regression, never an improvement.
void decide(MetricAnalysis& r, double margin) {
  const OrientedEffect oe = oriented_effect(r);
  const double lo = oe.low, hi = oe.high;
  const double dm = margin;
  // Too few units for any interval at the asked confidence: the widest one that exists covers
  // less, so whatever side of 1 it falls on proves nothing at that level.
  const bool interval_reaches_confidence = r.effect.achieved_confidence + 1e-9 >= r.effect.confidence;
  if (!interval_reaches_confidence) {
    r.verdict = Verdict::inconclusive;
  } else if (lo > 1 - dm && hi < 1 + dm) {
    r.verdict = Verdict::no_change;
    if (lo > 1 || hi < 1) r.findings.push_back(SignificantInsideMargin{.margin = dm});
  } else if (hi < 1 && oe.estimate < 1 - dm) {
    r.verdict = Verdict::regression;
  } else if (lo > 1 && oe.estimate > 1 + dm) {
    r.verdict = Verdict::improvement;
  } else {
    // A significant shift whose estimate lies inside the margin is not called a regression: its
    // interval still reaches past the margin, and more runs would most often narrow it to inside
    // (a B 2.5 % slower at a 5 % margin: 45 % regression, 55 % no_change under a significance-only
    // rule; harness/bench/decision_rule_tool.cpp). It waits for the runs that settle it.
    r.verdict = Verdict::inconclusive;
    if (hi < 1 || lo > 1) {
      r.findings.push_back(
          SignificantEstimatedInsideMargin{.worse = hi < 1, .margin = dm, .shift = std::abs(oe.estimate - 1)});
    }
  }
  if (r.modes.b_more_in_worse && (r.verdict == Verdict::no_change || r.verdict == Verdict::inconclusive)) {
    r.findings.push_back(RegressionByModes{});
    r.verdict = Verdict::regression;
  }
}

}  // namespace analysis_steps
}  // namespace abvm
