// Tests of AnalysisOptions::verdict_only (a sequential look's analysis): on data sets of every kind
// the look meets (unpaired and paired designs, several runs per boot, modes, several metrics, pairs
// left out for their start skew, a side without valid runs, a workload never measured) it decides
// exactly what the full analysis decides, and skips the secondary figures.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "verdict/analysis.hpp"

namespace abvm {
namespace {

struct Shape {
  int blocks = 20;
  int runs_per_boot = 1;
  double b_shift = 1.0;           // B's values are A's times this
  double boot_sd = 0.03;          // per boot, on the log scale
  double block_sd = 0.0;          // shared by a block's A and B (a co-scheduled host's noise)
  double a_slow_share = 0.0, b_slow_share = 0.0;  // boots in a slow mode at a third of the speed
  double skewed_share = 0.0;       // pairs whose runs started 300 ms apart (left out at 50 ms)
};

// One metric of A/B blocks, `shape` and `seed` deciding its values; names and direction given.
MetricSamples blocks_metric(const Shape& shape, std::uint64_t seed, const std::string& name, Better better) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  MetricSamples m{.name = name, .unit = "B/s", .better = better};
  std::int64_t order = 0;
  for (int k = 0; k < shape.blocks; ++k) {
    const double block_ln = shape.block_sd * noise(rng);
    const double skew = uniform(rng) < shape.skewed_share ? 0.3 : 0.002;
    const double overlap = 1 - skew / 0.6;
    for (Side side : {Side::a, Side::b}) {
      const double slow = uniform(rng) < (side == Side::a ? shape.a_slow_share : shape.b_slow_share) ? 1.0 / 3 : 1.0;
      const double boot = 1e9 * slow * (side == Side::b ? shape.b_shift : 1.0) *
                          std::exp(block_ln + shape.boot_sd * noise(rng));
      const std::string boot_id = "t" + std::to_string(order);
      for (int run = 0; run < shape.runs_per_boot; ++run) {
        (side == Side::a ? m.a : m.b)
            .push_back({.value = boot * std::exp(0.01 * noise(rng)), .order = order++, .order_known = true,
                                                .origin = sample_origin(boot_id, {.boot = boot_id, .run_in_boot = run, .block = k,
                                               .timing = RunTiming{.start = 10.0 * k + run + (side == Side::b ? skew : 0),
                                                                   .end = 10.0 * k + run + 0.6,
                                                                   .load_end = 10.0 * k + run + 0.6},
                                               .overlap = overlap})});
      }
    }
  }
  return m;
}

SampleSet one_metric(const Shape& shape, std::uint64_t seed) {
  SampleSet s;
  s.metrics.push_back(blocks_metric(shape, seed, "bw", Better::higher));
  return s;
}

// Equal, or both NaN (a metric without valid units on a side has no effect).
bool same_figure(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

void expect_same_decision(const SampleSet& samples, AnalysisOptions options, const std::string& what) {
  const Analysis full = analyze(samples, options);
  options.verdict_only = true;
  const Analysis look = analyze(samples, options);
  EXPECT_EQ(to_string(look.verdict), to_string(full.verdict)) << what;
  ASSERT_EQ(look.metrics.size(), full.metrics.size()) << what;
  for (std::size_t i = 0; i < full.metrics.size(); ++i) {
    const MetricAnalysis& f = full.metrics[i];
    const MetricAnalysis& l = look.metrics[i];
    EXPECT_EQ(to_string(l.verdict), to_string(f.verdict)) << what << ", " << f.name;
    EXPECT_EQ(l.primary, f.primary) << what;
    EXPECT_TRUE(same_figure(l.effect.estimate, f.effect.estimate)) << what << ", estimate";
    EXPECT_TRUE(same_figure(l.effect.low, f.effect.low)) << what << ", low";
    EXPECT_TRUE(same_figure(l.effect.high, f.effect.high)) << what << ", high";
    EXPECT_EQ(l.modes.b_more_in_worse, f.modes.b_more_in_worse) << what;
  }
}

TEST(VerdictOnly, DecidesWhatTheFullAnalysisDecidesUnpaired) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (double shift : {0.90, 0.97, 1.0, 1.08}) {
      for (int blocks : {3, 10, 40}) {
        const Shape shape{.blocks = blocks, .b_shift = shift};
        expect_same_decision(one_metric(shape, seed), {},
                             "seed " + std::to_string(seed) + " shift " + std::to_string(shift) + " blocks " +
                                 std::to_string(blocks));
      }
    }
  }
}

TEST(VerdictOnly, DecidesWhatTheFullAnalysisDecidesPaired) {
  AnalysisOptions paired;
  paired.paired_primary = true;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (double shift : {0.95, 0.99, 1.0, 1.06}) {
      // The host's noise is shared by each block's A and B: the paired estimate decides.
      const Shape shape{.blocks = 16, .runs_per_boot = 3, .b_shift = shift, .boot_sd = 0.005, .block_sd = 0.1};
      expect_same_decision(one_metric(shape, seed), paired, "paired, seed " + std::to_string(seed));
      expect_same_decision(one_metric({.blocks = 1, .b_shift = shift}, seed), paired, "paired, one block");
    }
  }
}

TEST(VerdictOnly, DecidesWhatTheFullAnalysisDecidesWithModes) {
  int regressions_by_modes = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const Shape shape{.blocks = 40, .boot_sd = 0.01, .a_slow_share = 0.05, .b_slow_share = 0.4};
    const SampleSet s = one_metric(shape, seed);
    expect_same_decision(s, {}, "modes, seed " + std::to_string(seed));
    const MetricAnalysis m = analyze(s, {}).metrics[0];
    regressions_by_modes += m.modes.b_more_in_worse && m.verdict == Verdict::regression;
  }
  EXPECT_GT(regressions_by_modes, 0) << "the data sets exercise the mode test";
}

TEST(VerdictOnly, DecidesWhatTheFullAnalysisDecidesOverSeveralMetricsAndLeftOutPairs) {
  AnalysisOptions options;
  options.paired_primary = true;
  options.max_start_skew_ms = 50;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SampleSet s;
    s.metrics.push_back(blocks_metric({.blocks = 12, .b_shift = 0.93, .block_sd = 0.05, .skewed_share = 0.2},
                                      seed, "bw", Better::higher));
    s.metrics.push_back(blocks_metric({.blocks = 12, .runs_per_boot = 2, .b_shift = 1.0, .skewed_share = 0.2},
                                      seed + 100, "clat", Better::lower));
    expect_same_decision(s, options, "two metrics, seed " + std::to_string(seed));
    s.missing.push_back({.workload = "fio-randread", .runs_a = 3, .runs_b = 3, .first_failure = "panic"});
    expect_same_decision(s, options, "a workload never measured, seed " + std::to_string(seed));
    s.missing.clear();
    s.metrics[1].b.clear();
    expect_same_decision(s, options, "a side without runs, seed " + std::to_string(seed));
  }
}

TEST(VerdictOnly, LeavesTheSecondaryFiguresOut) {
  AnalysisOptions options;
  options.verdict_only = true;
  const Shape shape{.blocks = 30, .runs_per_boot = 2, .b_shift = 0.9};
  const MetricAnalysis look = analyze(one_metric(shape, 3), options).metrics[0];
  const MetricAnalysis full = analyze(one_metric(shape, 3), {}).metrics[0];
  EXPECT_NE(full.bootstrap.high, 0);
  EXPECT_EQ(look.bootstrap.high, 0) << "no bootstrap";
  EXPECT_TRUE(full.paired.has_value());
  EXPECT_FALSE(look.paired.has_value()) << "an unpaired design's paired estimate decides nothing";
  EXPECT_EQ(look.noise.pairs, 0u);
  EXPECT_EQ(look.verdict, full.verdict);
}

}  // namespace
}  // namespace abvm
