#include "stats/modes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "stats/random.hpp"

using namespace abvm::stats;

namespace {

// The seed (../shared/seed/dd-without-patches.txt and dd-with-patches.txt): dd wrote 8 GiB per run;
// bandwidth = bytes / seconds.
const double bytes = 8589934592;
const std::vector<double> seed_a = {bytes / 1.95557, bytes / 2.05176, bytes / 1.88314, bytes / 1.84899,
                                    bytes / 5.37184, bytes / 1.9205,  bytes / 6.85166, bytes / 1.74049,
                                    bytes / 6.31699, bytes / 2.47057};
const std::vector<double> seed_b = {bytes / 2.25993, bytes / 1.82438, bytes / 1.93856, bytes / 1.83405,
                                    bytes / 7.50199, bytes / 2.28742, bytes / 5.74958, bytes / 1.99149,
                                    bytes / 5.67647, bytes / 2.93957};

std::vector<double> draw(Random& rng, std::size_t n, double median, double cv, bool lognormal) {
  std::vector<double> v(n);
  const double sigma = std::sqrt(std::log1p(cv * cv));
  for (double& x : v) x = lognormal ? median * std::exp(sigma * rng.normal()) : median * (1 + cv * rng.normal());
  return v;
}

}  // namespace

TEST(StatsDistModes, SeedHasASlowAndAFastModeWithThreeSlowRunsPerSide) {
  const ModeSplit s = find_modes(seed_a, seed_b);
  ASSERT_EQ(s.cuts.size(), 1u);
  ASSERT_EQ(s.modes.size(), 2u);
  // The cut lies in the empty stretch between the fastest slow run (1.60 GB/s) and the slowest
  // fast run (2.92 GB/s).
  EXPECT_GT(s.cuts[0], bytes / 5.37184);
  EXPECT_LT(s.cuts[0], bytes / 2.93957);
  const Mode& slow = s.modes[0];
  const Mode& fast = s.modes[1];
  EXPECT_EQ(slow.a_count, 3u);
  EXPECT_EQ(slow.b_count, 3u);
  EXPECT_EQ(fast.a_count, 7u);
  EXPECT_EQ(fast.b_count, 7u);
  EXPECT_DOUBLE_EQ(slow.a_fraction, 0.3);
  EXPECT_DOUBLE_EQ(slow.b_fraction, 0.3);
  EXPECT_DOUBLE_EQ(fast.a_fraction, 0.7);
  EXPECT_DOUBLE_EQ(slow.low, bytes / 7.50199);
  EXPECT_DOUBLE_EQ(slow.high, bytes / 5.37184);
  EXPECT_DOUBLE_EQ(fast.low, bytes / 2.93957);
  EXPECT_DOUBLE_EQ(fast.high, bytes / 1.74049);
  EXPECT_EQ(s.dominant, 1u);
  for (double v : seed_a) EXPECT_EQ(mode_of(s, v), v < 2e9 ? 0u : 1u);
}

TEST(StatsDistModes, UnimodalNoiseIsAlmostNeverSplit) {
  // Unimodal samples: normal and lognormal, CV 1-10 %, n = 10..1000, 40 seeds each (2880 samples).
  // The rule is documented at about 0.1 % false splits, none from n = 30 on; allow 0.5 % overall so
  // the test fails when a change makes the rule split noise, not when one seed is unlucky.
  std::size_t splits = 0, total = 0;
  std::string where;
  for (std::size_t n : {10, 12, 15, 20, 30, 50, 100, 300, 1000}) {
    for (double cv : {0.01, 0.03, 0.05, 0.10}) {
      for (bool lognormal : {false, true}) {
        for (std::uint64_t seed = 1; seed <= 40; ++seed) {
          Random rng(seed * 1000003 + n * 101 + static_cast<std::uint64_t>(cv * 1000) + lognormal);
          const std::vector<double> a = draw(rng, n / 2, 4e9, cv, lognormal);
          const std::vector<double> b = draw(rng, n - n / 2, 4e9, cv, lognormal);
          const ModeSplit s = find_modes(a, b);
          ++total;
          if (s.modes.size() != 1) {
            ++splits;
            where += " n=" + std::to_string(n) + ",cv=" + std::to_string(cv) + ",seed=" + std::to_string(seed);
            EXPECT_LT(n, 30u) << "false split of a unimodal sample with n >= 30";
          }
        }
      }
    }
  }
  EXPECT_LE(static_cast<double>(splits), 0.005 * static_cast<double>(total)) << splits << " of " << total << where;
}

TEST(StatsDistModes, SeparatedModesAreFound) {
  // 70 % fast near 4.5e9, 30 % slow near 1.4e9, CV 5 %: two modes nearly every time for n >= 20.
  std::size_t found = 0, total = 0;
  for (std::size_t n : {20, 50, 200, 1000}) {
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      Random rng(seed + 77 * n);
      std::vector<double> a = draw(rng, n * 7 / 20, 4.5e9, 0.05, true);
      std::vector<double> slow = draw(rng, n * 3 / 20, 1.4e9, 0.05, true);
      a.insert(a.end(), slow.begin(), slow.end());
      std::vector<double> b = draw(rng, n * 7 / 20, 4.5e9, 0.05, true);
      slow = draw(rng, n * 3 / 20, 1.4e9, 0.05, true);
      b.insert(b.end(), slow.begin(), slow.end());
      const ModeSplit s = find_modes(a, b);
      ++total;
      if (s.cuts.size() == 1 && s.cuts[0] > 1.7e9 && s.cuts[0] < 3.7e9) {
        ++found;
        EXPECT_EQ(s.dominant, 1u);
        EXPECT_NEAR(s.modes[0].a_fraction, 0.3, 0.03);
      }
    }
  }
  EXPECT_GE(found, total * 95 / 100) << found << " of " << total;
}

TEST(StatsDistModes, ThreeModesAndUnevenSides) {
  // Three clusters, 60 runs each, and all of B in the middle one: fractions are per side.
  Random rng(3);
  std::vector<double> a = draw(rng, 60, 1e9, 0.03, true);
  for (double median : {2e9, 4e9}) {
    const auto more = draw(rng, 60, median, 0.03, true);
    a.insert(a.end(), more.begin(), more.end());
  }
  const std::vector<double> b = draw(rng, 40, 2e9, 0.03, true);
  const ModeSplit s = find_modes(a, b);
  ASSERT_EQ(s.modes.size(), 3u);
  EXPECT_EQ(s.modes[0].a_count, 60u);
  EXPECT_EQ(s.modes[1].a_count, 60u);
  EXPECT_EQ(s.modes[1].b_count, 40u);
  EXPECT_DOUBLE_EQ(s.modes[1].b_fraction, 1.0);
  EXPECT_DOUBLE_EQ(s.modes[2].a_fraction, 1.0 / 3.0);
  EXPECT_EQ(s.dominant, 1u);
}

// The dominant mode owes nothing to which side is which, to the metric's direction, or to the
// sides' sizes (issue 26): each side weighs alike, and a tie goes to the mode both share most, then
// to the narrower one. Before, the mode with the most pooled runs won and a tie went to the lower
// values: with equal sides that favoured a lower-is-better metric's regressions, with unequal ones
// the larger side chose alone.
TEST(StatsDistModes, TheDominantModeFavoursNeitherSideNorDirectionNorTheLargerSide) {
  Random rng(26);
  const std::vector<double> narrow = draw(rng, 10, 100, 0.002, true);  // A, all in a narrow mode
  const std::vector<double> wide = draw(rng, 30, 130, 0.01, true);     // B, three times as many, wider
  const auto inverted = [](std::vector<double> v) {
    for (double& x : v) x = 1 / x;
    return v;
  };
  const ModeSplit s = find_modes(narrow, wide);
  ASSERT_EQ(s.modes.size(), 2u);
  EXPECT_EQ(s.dominant, 0u) << "one side each: the narrower mode, not the one with 30 runs";
  EXPECT_EQ(find_modes(wide, narrow).dominant, 0u) << "the sides swapped";
  const ModeSplit mirrored = find_modes(inverted(narrow), inverted(wide));  // the other direction
  ASSERT_EQ(mirrored.modes.size(), 2u);
  EXPECT_EQ(mirrored.dominant, 1u) << "still the narrow mode, now the upper one";

  // Equal sides split 7/3 and 3/7 between two modes: a tie in runs and in sharing; the narrower wins
  // whichever way up.
  std::vector<double> a = draw(rng, 7, 100, 0.002, true), b = draw(rng, 3, 100, 0.002, true);
  const auto a_up = draw(rng, 3, 130, 0.01, true), b_up = draw(rng, 7, 130, 0.01, true);
  a.insert(a.end(), a_up.begin(), a_up.end());
  b.insert(b.end(), b_up.begin(), b_up.end());
  EXPECT_EQ(find_modes(a, b).dominant, 0u);
  EXPECT_EQ(find_modes(b, a).dominant, 0u);
  EXPECT_EQ(find_modes(inverted(a), inverted(b)).dominant, 1u);

  // A mode held by most of both sides wins over one held by all of one side alone.
  const std::vector<double> shared_a = {100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 130, 130.2};
  const std::vector<double> shared_b = {100, 100.1, 100.2, 100.3, 100.4, 100.5, 130, 130.1, 130.2, 130.3};
  const ModeSplit held = find_modes(shared_a, shared_b);
  ASSERT_EQ(held.modes.size(), 2u);
  EXPECT_EQ(held.dominant, 0u);  // 0.8 + 0.6 against 0.2 + 0.4
}

// Each mode's median is over its pooled values, both sides (Python: statistics.median of the values
// of each mode: 100.3 and 130.15).
TEST(StatsDistModes, EachModeHasTheMedianOfItsPooledValues) {
  const std::vector<double> a = {100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 130, 130.2};
  const std::vector<double> b = {100, 100.1, 100.2, 100.3, 100.4, 100.5, 130, 130.1, 130.2, 130.3};
  const ModeSplit s = find_modes(a, b);
  ASSERT_EQ(s.modes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.modes[0].median, 100.3);
  EXPECT_DOUBLE_EQ(s.modes[1].median, 130.15);
}

TEST(StatsDistModes, DegenerateInputsHaveOneMode) {
  const std::vector<double> one = {5.0};
  const std::vector<double> equal = {2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5};
  const std::vector<double> none;
  const std::vector<double> two_far = {1.0, 1000.0};  // too few runs for two modes of 3
  for (const auto* v : {&one, &equal, &two_far}) {
    const ModeSplit s = find_modes(*v, none);
    EXPECT_TRUE(s.cuts.empty());
    ASSERT_EQ(s.modes.size(), 1u);
    EXPECT_EQ(s.modes[0].a_count, v->size());
    EXPECT_DOUBLE_EQ(s.modes[0].a_fraction, 1.0);
    EXPECT_EQ(s.modes[0].b_fraction, 0.0);  // an empty side has no fractions to give
  }
  const ModeSplit s = find_modes(none, equal);
  EXPECT_EQ(s.modes[0].b_count, 8u);
  EXPECT_EQ(s.modes[0].low, 2.5);
  EXPECT_EQ(s.modes[0].high, 2.5);
}

TEST(StatsDistModes, AValueOnACutBelongsToTheUpperMode) {
  ModeSplit s;
  s.cuts = {2.0, 5.0};
  EXPECT_EQ(mode_of(s, 1.0), 0u);
  EXPECT_EQ(mode_of(s, 2.0), 1u);
  EXPECT_EQ(mode_of(s, 4.999), 1u);
  EXPECT_EQ(mode_of(s, 5.0), 2u);
  EXPECT_EQ(mode_of(s, 1e300), 2u);
}

TEST(StatsDistModes, RejectsEmptyNonPositiveAndNan) {
  const std::vector<double> none;
  const std::vector<double> zero = {1.0, 0.0};
  const std::vector<double> negative = {-1.0};
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN()};
  const std::vector<double> ok = {1.0};
  EXPECT_THROW(find_modes(none, none), std::invalid_argument);
  EXPECT_THROW(find_modes(zero, ok), std::invalid_argument);
  EXPECT_THROW(find_modes(ok, negative), std::invalid_argument);
  EXPECT_THROW(find_modes(nan, ok), std::invalid_argument);
}
