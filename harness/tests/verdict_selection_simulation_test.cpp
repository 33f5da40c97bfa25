// Issue 26, item 3: leaving pairs out must not select on the outcome. Simulated co-scheduled
// experiments with the demo's short dd runs, fed through the analysis `abvm analyze` runs for the
// co-scheduled design (verdict/design_rules.hpp with_design_rules), each pair's overlap computed from
// its timings as the journal sink does (samples/overlap.hpp pair_overlap).
//
// The model (per experiment: 10 blocks of 3 runs per boot, one boot per side and block):
//   - a run of A takes 0.3 s x exp(host_k + e_A), B's 0.3 s x exp(host_k + e_B) / truth, with the
//     block's host factor host_k ~ N(0, 0.05) shared by both and e_A, e_B ~ N(0, 0.04 / sqrt 2): the
//     per-pair noise of ln(B/A) has sd 0.04; the metric is the bandwidth, 8 MiB per run;
//   - both runs start a few ms after the go (uniform 0-4 ms each); in one pair of twenty one side
//     heard its go late, by 80-200 ms (a skew that has nothing to do with the result);
//   - each run's filler starts 12.7-22.5 ms after its end (README: the median gap before and after
//     the filler's files were cleared before READY) and runs until 5 ms after the slower run's end;
//   - each run's clock error is 10-60 ms (README: median 34 ms on a loaded host).
// The overlap of the slower run is then about 1 - (skew + min(gap, delta)) / length: it falls with
// the pair's own ratio, so the old rule (leave out pairs under 95 %) kept the pairs whose ratio was
// near 1. The skew rule reads only the starts and the clock errors.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <string>

#include "config/experiment.hpp"
#include "samples/overlap.hpp"
#include "verdict/analysis.hpp"
#include "verdict/design_rules.hpp"

namespace abvm {
namespace {

constexpr int kBlocks = 10;
constexpr int kRunsPerBoot = 3;
constexpr double kRunSeconds = 0.3;
constexpr double kBytes = 8.0 * 1024 * 1024;

// One simulated co-scheduled experiment of dd bandwidth (higher is better), B/A = truth.
SampleSet experiment(double truth, std::mt19937_64& rng) {
  std::normal_distribution<double> host(0, 0.05), run_noise(0, 0.04 / std::sqrt(2.0));
  std::uniform_real_distribution<double> start(0, 0.004), late(0.08, 0.2), gap(0.0127, 0.0225), error(0.01, 0.06),
      unit(0, 1);
  MetricSamples m{.name = "dd.bandwidth", .unit = "B/s", .better = Better::higher};
  std::int64_t order = 0;
  for (int k = 0; k < kBlocks; ++k) {
    const double h = host(rng);
    for (int r = 0; r < kRunsPerBoot; ++r) {
      const double go = 10.0 * k + r;
      RunTiming ta, tb;
      ta.start = go + start(rng);
      tb.start = go + start(rng);
      if (unit(rng) < 0.05) (unit(rng) < 0.5 ? ta : tb).start += late(rng);
      const double da = kRunSeconds * std::exp(h + run_noise(rng));
      const double db = kRunSeconds * std::exp(h + run_noise(rng)) / truth;
      ta.end = ta.start + da;
      tb.end = tb.start + db;
      ta.fill = ta.end + gap(rng);
      tb.fill = tb.end + gap(rng);
      ta.load_end = tb.load_end = std::max(ta.end, tb.end) + 0.005;
      ta.clock_error = error(rng);
      tb.clock_error = error(rng);
      const auto [oa, ob] = pair_overlap(ta, "a", tb, "b");
      for (Side side : {Side::a, Side::b}) {
        const bool is_a = side == Side::a;
        (is_a ? m.a : m.b)
            .push_back({.value = kBytes / (is_a ? da : db), .order = order++, .order_known = true,
                        .origin = sample_origin("", {.boot = std::string(to_string(side)) + std::to_string(k),
                                               .run_in_boot = r, .block = k, .timing = is_a ? ta : tb,
                                               .overlap = (is_a ? oa : ob).pair})});
      }
    }
  }
  SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}

// The rule abvm used before issue 26 (AnalysisOptions::min_overlap = schedule.min_overlap, 0.95):
// pairs whose overlap is under 95 % left out on both sides before the analysis.
SampleSet with_old_overlap_rule(SampleSet s) {
  for (MetricSamples& m : s.metrics) {
    for (auto* side : {&m.a, &m.b}) {
      std::erase_if(*side, [](const Sample& x) { return x.run().overlap && *x.run().overlap < 0.95; });
    }
  }
  return s;
}

struct Means {
  double decided = 0, all_pairs = 0, old_rule = 0;
  double left_out = 0, old_left_out = 0;  // shares of the pairs
};

Means simulate(double truth, int experiments, std::uint64_t seed) {
  ScheduleSettings schedule;
  schedule.design = Design::co_scheduled;
  AnalysisOptions options = with_design_rules(AnalysisOptions{}, schedule);
  options.verdict_only = true;  // a look's analysis: the same estimate, without the secondary figures
  std::mt19937_64 rng(seed);
  Means sum;
  const double pairs = kBlocks * kRunsPerBoot;
  for (int i = 0; i < experiments; ++i) {
    const SampleSet s = experiment(truth, rng);
    const MetricAnalysis now = analyze(s, options).metrics[0];
    const SampleSet old_kept = with_old_overlap_rule(s);
    const MetricAnalysis old = analyze(old_kept, options).metrics[0];
    sum.decided += now.effect.estimate;
    sum.all_pairs += now.all_pairs.value().estimate;
    sum.old_rule += old.effect.estimate;
    sum.left_out += static_cast<double>(now.overlap->voided) / pairs;
    sum.old_left_out += 1 - static_cast<double>(old_kept.metrics[0].a.size()) / pairs;
  }
  const double n = experiments;
  return {sum.decided / n, sum.all_pairs / n, sum.old_rule / n, sum.left_out / n, sum.old_left_out / n};
}

TEST(VerdictSelectionSimulation, TheCoScheduledDesignLeavesPairsOutWithoutMovingTheEstimate) {
  ScheduleSettings schedule;
  schedule.design = Design::co_scheduled;
  ASSERT_EQ(with_design_rules(AnalysisOptions{}, schedule).max_start_skew_ms, 50.0)
      << "the simulation runs the shipped rule";
  std::uint64_t seed = 26;
  for (double truth : {0.94, 0.95, 0.96}) {
    const Means m = simulate(truth, 2000, seed++);
    SCOPED_TRACE(testing::Message() << "true B/A " << truth << ": decided " << m.decided << ", every pair "
                                    << m.all_pairs << ", old 95 % overlap rule " << m.old_rule << "; left out "
                                    << m.left_out * 100 << " % of pairs (old rule " << m.old_left_out * 100 << " %)");
    EXPECT_NEAR(m.decided / truth, 1, 0.002);
    EXPECT_NEAR(m.all_pairs / truth, 1, 0.002);
    EXPECT_GT(m.left_out, 0.005) << "the late starts are left out: the rule acts";
    // What the old rule did with the same experiments: it kept the pairs whose ratio was near 1.
    EXPECT_GT(m.old_rule / truth - 1, 0.004) << "the old rule's selection is what this test guards against";
    std::cout << "true " << truth << ": decided " << m.decided << ", every pair " << m.all_pairs << ", old rule "
              << m.old_rule << "; left out " << m.left_out * 100 << " % (old rule " << m.old_left_out * 100 << " %)\n";
  }
}

}  // namespace
}  // namespace abvm
