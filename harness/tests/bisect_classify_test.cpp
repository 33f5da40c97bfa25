// A step's finding from abvm's own analysis (bisect/classify.hpp): regression is slower; an
// interval above 1 - margin is not slower, also when it is too wide above to be no_change; anything
// else, or an interval at a level the samples cannot reach, is unknown. Samples are made with known
// ratios so the analysis' verdict is certain.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bisect/classify.hpp"
#include "verdict/analysis.hpp"

namespace abvm {
namespace {

// n boots per side in interleaved blocks, one run each; side B is side A times `ratio` times a
// deterministic spread of +-`spread` (relative), so B/A is `ratio` with that much noise.
SampleSet paired(int n, double ratio, double spread, Better better = Better::higher) {
  MetricSamples m{.name = "dd-write.bandwidth", .unit = "B/s", .better = better};
  for (int i = 0; i < n; ++i) {
    const double base = 1e9 * (1 + 0.2 * std::sin(i * 1.7));
    const double wobble = 1 + spread * std::sin(i * 2.3 + 0.5);
    m.a.push_back({.value = base, .order = 2 * i, .order_known = true,
                   .origin = sample_origin("", {.boot = "a" + std::to_string(i), .block = i})});
    m.b.push_back({.value = base * ratio * wobble, .order = 2 * i + 1, .order_known = true,
                   .origin = sample_origin("", {.boot = "b" + std::to_string(i), .block = i})});
  }
  SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}

Analysis analysed(const SampleSet& s, double margin = 0.05) {
  AnalysisOptions o;
  o.margin = margin;
  o.paired_primary = true;
  o.bootstrap_resamples = 50;
  return analyze(s, o);
}

TEST(BisectClassify, ARegressionIsSlowerWithItsEffect) {
  const Analysis a = analysed(paired(12, 0.57, 0.03));
  ASSERT_EQ(a.verdict, Verdict::regression);
  const StepJudgement j = judge_step(a);
  EXPECT_EQ(j.finding, StepFinding::slower);
  ASSERT_EQ(j.effects.size(), 1u);
  EXPECT_EQ(j.effects[0].metric, "dd-write.bandwidth");
  EXPECT_EQ(j.effects[0].estimate_kind, "paired");
  EXPECT_NEAR(j.effects[0].estimate, 0.57, 0.01);
  EXPECT_LT(j.effects[0].high, 1);
  EXPECT_EQ(j.reason.rfind("slower: the verdict is regression (dd-write.bandwidth 0.5", 0), 0u) << j.reason;
}

TEST(BisectClassify, NoChangeIsNotSlower) {
  const Analysis a = analysed(paired(20, 1.0, 0.01));
  ASSERT_EQ(a.verdict, Verdict::no_change);
  const StepJudgement j = judge_step(a);
  EXPECT_EQ(j.finding, StepFinding::not_slower);
  EXPECT_EQ(j.reason.rfind("not slower by more than 5 %: every interval lies above 0.95", 0), 0u) << j.reason;
}

TEST(BisectClassify, AnIntervalAboveTheMarginButTooWideForNoChangeIsNotSlower) {
  // B 2 % faster with +-7 % noise: the interval clears 0.95 but reaches past 1.05.
  const Analysis a = analysed(paired(10, 1.02, 0.07));
  ASSERT_EQ(a.verdict, Verdict::inconclusive) << a.metrics[0].effect.low << " " << a.metrics[0].effect.high;
  ASSERT_GT(a.metrics[0].effect.low, 0.95);
  EXPECT_EQ(judge_step(a).finding, StepFinding::not_slower);
}

TEST(BisectClassify, AnIntervalReachingBelowTheMarginIsUnknown) {
  const Analysis a = analysed(paired(8, 0.97, 0.06));
  ASSERT_EQ(a.verdict, Verdict::inconclusive);
  ASSERT_LT(a.metrics[0].effect.low, 0.95);
  const StepJudgement j = judge_step(a);
  EXPECT_EQ(j.finding, StepFinding::unknown);
  EXPECT_NE(j.reason.find("may still be more than 5 % worse"), std::string::npos) << j.reason;
}

TEST(BisectClassify, TooFewBootsForTheLevelIsUnknownWhateverTheInterval) {
  AnalysisOptions o;
  o.confidence = 0.999;
  o.paired_primary = true;
  o.bootstrap_resamples = 50;
  const Analysis a = analyze(paired(5, 1.0, 0.001), o);
  const StepJudgement j = judge_step(a);
  EXPECT_EQ(j.finding, StepFinding::unknown);
  EXPECT_NE(j.reason.find("too few boots"), std::string::npos) << j.reason;
}

TEST(BisectClassify, ALowerIsBetterMetricIsOriented) {
  // Latency twice as high on B: slower. Latency 0.99 of A's: not slower.
  EXPECT_EQ(judge_step(analysed(paired(12, 2.0, 0.03, Better::lower))).finding, StepFinding::slower);
  EXPECT_EQ(judge_step(analysed(paired(20, 0.99, 0.01, Better::lower))).finding, StepFinding::not_slower);
}

// The analysis judges only the metrics the experiment names: a cost metric reported beside them, here
// twice A's on B, neither makes the step slower nor keeps it from not slower.
TEST(BisectClassify, AMetricReportedNotJudgedDecidesNothing) {
  SampleSet s = paired(20, 1.0, 0.01);
  MetricSamples cost = paired(20, 2.0, 0.03, Better::lower).metrics.at(0);
  cost.name = "dd-write.host_cpu_per_gib";
  cost.unit = "s/GiB";
  cost.judged = false;
  s.metrics.push_back(std::move(cost));
  const Analysis a = analysed(s);
  ASSERT_EQ(a.verdict, Verdict::no_change);
  ASSERT_EQ(a.metrics.at(1).verdict, Verdict::regression) << "its own verdict";
  const StepJudgement j = judge_step(a);
  EXPECT_EQ(j.finding, StepFinding::not_slower) << j.reason;
  ASSERT_EQ(j.effects.size(), 2u) << "still reported";
  EXPECT_NE(j.reason.find("; reported, not judged: dd-write.host_cpu_per_gib 2.0"), std::string::npos) << j.reason;
}

}  // namespace
}  // namespace abvm
