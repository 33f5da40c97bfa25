#pragma once
// A bisection step's finding (bisect/strategy.hpp) from the step's analysis, the one abvm run
// makes of a results directory (cli/results_analysis decide()):
//   slower      the analysis' verdict is regression (abvm's own: significantly worse and not
//               within the margin; a worse mode more often on B counts too);
//   not_slower  no metric is a regression and every metric's oriented interval lies above
//               1 - margin, at a level the interval really reaches: the kernel is not slower by
//               more than the margin (no_change, improvement, or an interval too wide above to
//               call no_change but already clear of a slowdown that matters);
//   unknown     otherwise.
// Only the judged metrics count (MetricAnalysis::judged): one reported, not judged (a cost metric
// [analysis] metrics does not name) is in `effects` and the reason's figures, and decides nothing.
// The same function decides each look of a step (it stops as soon as the finding is not
// unknown), from the look's verdict-deciding analysis (verdict/look.hpp: the verdicts and primary
// effects of the full one), and the step's final finding.
#include <optional>
#include <string>
#include <vector>

#include "bisect/strategy.hpp"
#include "core/vocabulary.hpp"
#include "verdict/analysis.hpp"

namespace abvm {

// One metric's effect in a step: the primary estimate's ratio B/A (kernel over reference).
struct StepEffect {
  std::string metric;
  std::string unit;
  Better better = Better::higher;
  double estimate = 1, low = 1, high = 1;
  double confidence = 0;           // the level of the interval
  std::string estimate_kind;       // "paired" or "unpaired"
  Verdict verdict = Verdict::inconclusive;
};

struct StepJudgement {
  StepFinding finding = StepFinding::unknown;
  Verdict verdict = Verdict::inconclusive;  // the analysis' overall verdict
  std::vector<StepEffect> effects;          // per metric, in the analysis' order
  std::string reason;                       // one sentence: why this finding
};

StepJudgement judge_step(const Analysis& analysis);

}  // namespace abvm
