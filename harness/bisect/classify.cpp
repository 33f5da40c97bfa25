#include "bisect/classify.hpp"

#include <fmt/format.h>

namespace abvm {

namespace {

// "dd-write.bandwidth 0.571 [0.522, 0.613]" (ratio B/A at the interval's level).
std::string describe(const StepEffect& e) {
  return fmt::format("{} {:.3f} [{:.3f}, {:.3f}]", e.metric, e.estimate, e.low, e.high);
}

StepEffect effect_of(const MetricAnalysis& m) {
  return {.metric = m.name,
          .unit = m.unit,
          .better = m.better,
          .estimate = m.effect.estimate,
          .low = m.effect.low,
          .high = m.effect.high,
          .confidence = m.effect.confidence,
          .estimate_kind = to_string(m.primary),
          .verdict = m.verdict};
}

// Why a metric keeps the step from being not_slower, or "" when it does not.
std::string holds_back(const MetricAnalysis& m, double margin) {
  if (m.verdict == Verdict::regression) return fmt::format("{} is a regression", m.name);
  if (m.effect.achieved_confidence + 1e-9 < m.effect.confidence) {
    return fmt::format("{} has too few boots for an interval at {:.2f} %", m.name, m.effect.confidence * 100);
  }
  if (!(oriented_effect(m).low > 1 - margin)) {
    return fmt::format("{} may still be more than {:.0f} % worse", describe(effect_of(m)), margin * 100);
  }
  return "";
}

}  // namespace

StepJudgement judge_step(const Analysis& analysis) {
  StepJudgement j{.verdict = analysis.verdict};
  const double margin = analysis.options.margin;
  std::string held, figures, reported;
  bool any_judged = false;
  for (const auto& m : analysis.metrics) {
    j.effects.push_back(effect_of(m));
    std::string& list = m.judged ? figures : reported;
    list += (list.empty() ? "" : "; ") + describe(j.effects.back());
    // A metric reported, not judged (a cost metric the experiment does not name) is no part of the
    // verdict, so none of the finding either: it neither makes a step slower nor holds one back.
    if (!m.judged) continue;
    any_judged = true;
    const std::string why = holds_back(m, margin);
    if (held.empty()) held = why;
  }
  if (!reported.empty()) figures += fmt::format("{}reported, not judged: {}", figures.empty() ? "" : "; ", reported);
  if (analysis.verdict == Verdict::regression) {
    j.finding = StepFinding::slower;
    j.reason = fmt::format("slower: the verdict is regression ({})", figures);
  } else if (held.empty() && any_judged) {
    j.finding = StepFinding::not_slower;
    j.reason = fmt::format("not slower by more than {:.0f} %: every interval lies above {:.2f} ({})", margin * 100,
                           1 - margin, figures);
  } else {
    j.finding = StepFinding::unknown;
    j.reason = fmt::format("unknown: {}", held.empty() ? "no judged metric was measured" : held);
  }
  return j;
}

}  // namespace abvm
