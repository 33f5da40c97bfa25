#include "stats/holm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace abvm::stats;

namespace {

// Reference values pasted from the script below (Holm's step-down loop written out there in
// Python, no statsmodels):
// Produced by: /usr/bin/python3 harness/tests/reference/rank_reference.py
// SciPy 1.10.1, NumPy 1.24.2
struct HolmCase {
  std::vector<double> in, out;
};

// ---- Holm: {in, out} ----
const HolmCase kCases[] = {
    {{0.01, 0.040000000000000001, 0.029999999999999999, 0.0050000000000000001, 0.5}, {0.040000000000000001, 0.089999999999999997, 0.089999999999999997, 0.025000000000000001, 0.5}},  // mixed
    {{0.29999999999999999, 0.59999999999999998, 0.02}, {0.59999999999999998, 0.59999999999999998, 0.059999999999999998}},  // capped
    {{0.01, 0.01, 0.20000000000000001}, {0.029999999999999999, 0.029999999999999999, 0.20000000000000001}},  // equal
};

}  // namespace

TEST(StatsRankHolm, MatchesReference) {
  for (const HolmCase& c : kCases) {
    const std::vector<double> adjusted = holm_adjust(c.in);
    ASSERT_EQ(adjusted.size(), c.out.size());
    for (std::size_t i = 0; i < adjusted.size(); ++i) EXPECT_NEAR(adjusted[i], c.out[i], 1e-15) << i;
  }
}

TEST(StatsRankHolm, HandWorkedExample) {
  // Sorted 0.005, 0.01, 0.03, 0.04, 0.5 times 5, 4, 3, 2, 1 = 0.025, 0.04, 0.09, 0.08, 0.5;
  // the running maximum lifts 0.08 to 0.09.
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005, 0.5};
  const std::vector<double> adjusted = holm_adjust(p);
  const std::vector<double> expected = {0.04, 0.09, 0.09, 0.025, 0.5};
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15) << i;
}

TEST(StatsRankHolm, MonotoneCappedAndNeverBelowTheRawP) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> p(1 + rng() % 12);
    for (double& v : p) v = uniform(rng) * uniform(rng);
    const std::vector<double> adjusted = holm_adjust(p);
    for (std::size_t i = 0; i < p.size(); ++i) {
      EXPECT_GE(adjusted[i], p[i]);
      EXPECT_LE(adjusted[i], 1.0);
      EXPECT_LE(adjusted[i], std::min(1.0, p[i] * static_cast<double>(p.size())));  // never worse than Bonferroni
      for (std::size_t j = 0; j < p.size(); ++j) {
        if (p[i] <= p[j]) {
          EXPECT_LE(adjusted[i], adjusted[j]);
        }
      }
    }
  }
}

TEST(StatsRankHolm, EdgeCases) {
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
  EXPECT_EQ(holm_adjust(std::vector<double>{0.03}), (std::vector<double>{0.03}));  // one test: unchanged
  EXPECT_THROW(holm_adjust(std::vector<double>{0.1, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(holm_adjust(std::vector<double>{1.5}), std::invalid_argument);
  EXPECT_THROW(holm_adjust(std::vector<double>{-0.1}), std::invalid_argument);
}
