#include "stats/wilcoxon.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace abvm::stats;

namespace {

bool relatively_equal(double actual, double expected, double tolerance) {
  return std::fabs(actual - expected) <= tolerance * std::max(1e-300, std::fabs(expected));
}

// Reference values pasted from the script below (it says how it was run and with which SciPy):
// Produced by: /usr/bin/python3 harness/tests/reference/rank_reference.py
// SciPy 1.10.1, NumPy 1.24.2
// "seed" holds the per-position log ratios of the seed dd runs (B - A); "zeros_ties" has zeros
// and repeated magnitudes (normal approximation); "medium" has n = 70 > kWilcoxonExactMaxN.
const std::vector<double> k_seed_d = {-0.14465212830893392, 0.11745775811685277, -0.029004833063069668, 0.0081129077853638876, -0.33399782452902116, -0.17483897607456456, 0.17536415001879391, -0.13471641950884461, 0.10691326822361447, -0.17381441890283966};
const std::vector<double> k_small_d = {0.31, -0.12, 0.57999999999999996, 0.27000000000000002, 0.93999999999999995, -0.050000000000000003, 0.44};
const std::vector<double> k_zeros_ties_d = {0, 0.20000000000000001, -0.10000000000000001, 0.20000000000000001, 0, 0.5, 0.29999999999999999, -0.10000000000000001, 0.40000000000000002, 0.20000000000000001, 0.59999999999999998, 0.69999999999999996};
const std::vector<double> k_medium_d = {0.045969999999999997, 0.066890000000000005, -0.03243, -0.04018, 0.027289999999999998, 0.04249, 0.22639999999999999, -0.0083899999999999999, 0.083750000000000005, -0.14127999999999999, 0.019959999999999999, -0.0021199999999999999, -0.098839999999999997, -0.067059999999999995, -0.034529999999999998, -0.048189999999999997, -0.15978999999999999, -0.0023700000000000001, 0.020109999999999999, -0.00062, 0.11143, 0.0129, 0.03993, 0.026409999999999999, 0.041689999999999998, -0.075969999999999996, 0.0012999999999999999, 0.20921000000000001, 0.062640000000000001, 0.013610000000000001, -0.015010000000000001, 0.067839999999999998, 0.03057, 0.051630000000000002, 0.11752, 0.04444, 0.020990000000000002, -0.031370000000000002, -0.10259, 0.072669999999999998, 0.065809999999999994, -0.035979999999999998, -0.025860000000000001, -0.079339999999999994, -0.068940000000000001, -0.0047999999999999996, 0.023990000000000001, 0.11731999999999999, 0.086129999999999998, -0.024580000000000001, 0.11098, -0.16486000000000001, -0.0092999999999999992, 0.078270000000000006, 0.17741000000000001, -0.13444999999999999, -0.090789999999999996, -0.019910000000000001, -0.12712999999999999, 0.025250000000000002, 0.055960000000000003, 0.0030999999999999999, -0.058380000000000001, 0.21751999999999999, 0.18751000000000001, 0.060470000000000003, 0.17665, -0.04931, -0.10299999999999999, 0.055259999999999997};
const std::vector<double> k_tiny_d = {0.20000000000000001, 0.5, -0.10000000000000001};

struct WsrCase {
  const char* name;
  std::vector<double> d;
  double w, p;
  bool exact;
};

// ---- Wilcoxon: {name, d, w, p, exact} from scipy.stats.wilcoxon(d, method=<abvm's>) ----
const WsrCase kCases[] = {
    {"seed", k_seed_d, 17, 0.322265625, true},
    {"small", k_small_d, 3, 0.078125, true},
    {"zeros_ties", k_zeros_ties_d, 3, 0.012230642140651594, false},
    {"medium", k_medium_d, 1027, 0.20725648229311788, false},
    {"tiny", k_tiny_d, 1, 0.5, true},
};

}  // namespace

TEST(StatsRankWilcoxon, MatchesScipyOnReferenceData) {
  for (const WsrCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const SignedRank r = wilcoxon_signed_rank(c.d);
    EXPECT_EQ(r.w, c.w);
    EXPECT_EQ(r.exact, c.exact);
    EXPECT_TRUE(relatively_equal(r.p, c.p, c.exact ? 1e-12 : 1e-10)) << r.p << " vs " << c.p;
  }
}

TEST(StatsRankWilcoxon, NegatingTheDataKeepsTheTest) {
  for (const WsrCase& c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<double> neg(c.d.size());
    std::transform(c.d.begin(), c.d.end(), neg.begin(), [](double v) { return -v; });
    const SignedRank r = wilcoxon_signed_rank(neg);
    EXPECT_EQ(r.w, c.w);
    EXPECT_TRUE(relatively_equal(r.p, c.p, 1e-12));
  }
}

TEST(StatsRankWilcoxon, AllPositiveSmallSampleIsExact) {
  // n = 6, all positive: T- = 0 and P(T+ >= 21) = 1/64 per tail.
  const std::vector<double> d = {0.1, 0.4, 0.2, 0.6, 0.5, 0.3};
  const SignedRank r = wilcoxon_signed_rank(d);
  EXPECT_EQ(r.w, 0);
  EXPECT_TRUE(r.exact);
  EXPECT_TRUE(relatively_equal(r.p, 2.0 / 64.0, 1e-14));
}

TEST(StatsRankWilcoxon, SingleValueAndAllZero) {
  // n = 1: T+ is 0 or 1 with probability 1/2 each; two-sided p = min(1, 2 * 1/2) = 1.
  const SignedRank one = wilcoxon_signed_rank(std::vector<double>{0.3});
  EXPECT_EQ(one.w, 0);
  EXPECT_EQ(one.p, 1);
  EXPECT_TRUE(one.exact);
  const SignedRank zeros = wilcoxon_signed_rank(std::vector<double>(5, 0.0));
  EXPECT_EQ(zeros.w, 0);
  EXPECT_EQ(zeros.p, 1);
  EXPECT_FALSE(zeros.exact);
}

TEST(StatsRankWilcoxon, AllEqualNonZeroUsesTheTieCorrectedApproximation) {
  // scipy.stats.wilcoxon([0.1]*5, method='approx') = (0.0, 0.025347318677468252).
  const SignedRank r = wilcoxon_signed_rank(std::vector<double>(5, 0.1));
  EXPECT_EQ(r.w, 0);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(relatively_equal(r.p, 0.025347318677468252, 1e-10)) << r.p;
}

TEST(StatsRankWilcoxon, RejectsEmptyAndNan) {
  EXPECT_THROW(wilcoxon_signed_rank(std::vector<double>{}), std::invalid_argument);
  const std::vector<double> nan = {0.1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(wilcoxon_signed_rank(nan), std::invalid_argument);
}

TEST(StatsRankWilcoxon, NullDistributionMatchesEnumerationOfAllSigns) {
  for (std::size_t n : {1u, 2u, 5u, 9u}) {
    SCOPED_TRACE(std::to_string(n));
    const std::size_t top = n * (n + 1) / 2;
    std::vector<double> counts(top + 1, 0);
    for (std::size_t mask = 0; mask < (std::size_t{1} << n); ++mask) {
      std::size_t t = 0;
      for (std::size_t r = 0; r < n; ++r) {
        if (mask >> r & 1) t += r + 1;
      }
      counts[t] += 1;
    }
    const std::vector<double> cdf = wilcoxon_null_cdf(n);
    ASSERT_EQ(cdf.size(), top + 1);
    double running = 0;
    for (std::size_t t = 0; t <= top; ++t) {
      running += counts[t];
      EXPECT_NEAR(cdf[t], running / std::ldexp(1.0, static_cast<int>(n)), 1e-15) << "t = " << t;
    }
  }
  EXPECT_THROW(wilcoxon_null_cdf(0), std::invalid_argument);
  EXPECT_THROW(wilcoxon_null_cdf(1001), std::invalid_argument);
}
