#include "stats/bootstrap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/random.hpp"

using namespace abvm::stats;

namespace {

const double bytes = 8589934592;
const std::vector<double> seed_a = {bytes / 1.95557, bytes / 2.05176, bytes / 1.88314, bytes / 1.84899,
                                    bytes / 5.37184, bytes / 1.9205,  bytes / 6.85166, bytes / 1.74049,
                                    bytes / 6.31699, bytes / 2.47057};
const std::vector<double> seed_b = {bytes / 2.25993, bytes / 1.82438, bytes / 1.93856, bytes / 1.83405,
                                    bytes / 7.50199, bytes / 2.28742, bytes / 5.74958, bytes / 1.99149,
                                    bytes / 5.67647, bytes / 2.93957};

std::vector<double> lognormal(Random& rng, std::size_t n, double median, double sigma) {
  std::vector<double> v(n);
  for (double& x : v) x = median * std::exp(sigma * rng.normal());
  return v;
}

// The exact bootstrap distribution of the median of `sorted`, by enumerating all n^n equally likely
// index tuples: the reference resample_median's O(1) shortcut has to reproduce.
std::map<double, double> exact_median_distribution(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  std::size_t total = 1;
  for (std::size_t i = 0; i < n; ++i) total *= n;
  std::map<double, double> p;
  std::vector<double> r(n);
  for (std::size_t code = 0; code < total; ++code) {
    std::size_t c = code;
    for (std::size_t i = 0; i < n; ++i, c /= n) r[i] = sorted[c % n];
    p[median(r)] += 1.0 / static_cast<double>(total);
  }
  return p;
}

}  // namespace

TEST(StatsDistRandom, EngineIsTheStandardMt19937_64) {
  // [rand.predef]: the 10000th output of a default-constructed mt19937_64 (seed 5489).
  Random rng(5489);
  for (int i = 1; i < 10000; ++i) rng.next();
  EXPECT_EQ(rng.next(), 9981545732273789042ULL);
}

TEST(StatsDistRandom, BelowIsInRangeAndUniform) {
  // 20 seeds x 70,000 draws into 7 cells: the summed chi-square statistic has 120 degrees of freedom
  // under uniformity; 173.6 is its p = 0.001 critical value. (A biased reduction such as a plain
  // modulo of a 32-bit word, or an off-by-one range, fails this by orders of magnitude.)
  double chi2 = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Random rng(seed);
    std::vector<int> counts(7, 0);
    for (int i = 0; i < 70000; ++i) ++counts.at(rng.below(7));
    for (int c : counts) chi2 += (c - 10000.0) * (c - 10000.0) / 10000.0;
  }
  EXPECT_LT(chi2, 173.6);
  EXPECT_EQ(Random(1).below(1), 0u);
  EXPECT_THROW(Random(1).below(0), std::invalid_argument);
}

TEST(StatsDistRandom, UniformAndNormalHaveTheirMoments) {
  Random rng(7);
  double sum = 0, sum2 = 0, lo = 1, hi = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    lo = std::min(lo, u), hi = std::max(hi, u);
    const double z = rng.normal();
    sum += z, sum2 += z * z;
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum2 / n, 1.0, 0.015);
}

TEST(StatsDistBootstrap, ResampleMedianFollowsTheExactBootstrapDistribution) {
  // Odd and even sizes, with ties; 50,000 draws each; every atom within 5 standard errors of its exact
  // probability.
  for (const std::vector<double>& sorted : {std::vector<double>{1, 2, 4, 8, 16}, std::vector<double>{1, 2, 4, 8, 16, 32},
                                            std::vector<double>{3, 3, 5, 9}}) {
    const auto exact = exact_median_distribution(sorted);
    Random rng(11);
    const int draws = 50000;
    std::map<double, int> seen;
    for (int i = 0; i < draws; ++i) ++seen[resample_median(sorted, rng)];
    for (const auto& [value, count] : seen) {
      EXPECT_TRUE(exact.count(value)) << "impossible median " << value;
    }
    for (const auto& [value, p] : exact) {
      const double freq = static_cast<double>(seen[value]) / draws;
      const double se = std::sqrt(p * (1 - p) / draws);
      EXPECT_NEAR(freq, p, 5 * se + 1e-12) << "n=" << sorted.size() << " median " << value;
    }
  }
}

TEST(StatsDistBootstrap, SameSeedSameIntervalOtherSeedOtherInterval) {
  const Interval one = bootstrap_median_ratio(seed_a, seed_b, 0.95, 1);
  const Interval again = bootstrap_median_ratio(seed_a, seed_b, 0.95, 1);
  EXPECT_EQ(one.low, again.low);
  EXPECT_EQ(one.high, again.high);
  Random rng(5);
  const auto x = lognormal(rng, 200, 100, 0.05);
  const auto y = lognormal(rng, 200, 95, 0.05);
  const Interval s1 = bootstrap_median_ratio(x, y, 0.95, 1);
  const Interval s2 = bootstrap_median_ratio(x, y, 0.95, 2);
  EXPECT_TRUE(s1.low != s2.low || s1.high != s2.high);
  EXPECT_EQ(s1.estimate, s2.estimate);
}

TEST(StatsDistBootstrap, SeedIntervalIsWideAndHoldsTheEstimate) {
  const Interval r = bootstrap_median_ratio(seed_a, seed_b, 0.95, 2024);
  EXPECT_DOUBLE_EQ(r.estimate, 3778133869.6450615 / 4289582687.9138985);  // medians from dist_reference.py
  EXPECT_EQ(r.confidence, 0.95);
  EXPECT_LE(r.low, r.estimate);
  EXPECT_GE(r.high, r.estimate);
  // Ten bimodal runs a side: the interval reaches from well below to above 1.
  EXPECT_LT(r.low, 0.8);
  EXPECT_GT(r.high, 1.0);
}

TEST(StatsDistBootstrap, CoverageOfAKnownRatioIsPlausible) {
  // 200 simulated comparisons with a true median ratio of 0.9: the 95 % interval should hold it in
  // roughly 90-99 % of them (the percentile bootstrap of a median runs slightly narrow for small n).
  int covered = 0;
  for (std::uint64_t sim = 0; sim < 200; ++sim) {
    Random rng(1000 + sim);
    const auto x = lognormal(rng, 40, 4e9, 0.05);
    const auto y = lognormal(rng, 40, 3.6e9, 0.05);
    const Interval r = bootstrap_median_ratio(x, y, 0.95, sim, 500);
    EXPECT_LE(r.low, r.estimate);
    EXPECT_GE(r.high, r.estimate);
    if (r.low <= 0.9 && 0.9 <= r.high) ++covered;
  }
  EXPECT_GE(covered, 180);
  EXPECT_LE(covered, 198);
}

TEST(StatsDistBootstrap, HigherConfidenceWidensTheInterval) {
  Random rng(9);
  const auto x = lognormal(rng, 50, 100, 0.1);
  const auto y = lognormal(rng, 50, 100, 0.1);
  const Interval narrow = bootstrap_median_ratio(x, y, 0.80, 3);
  const Interval wide = bootstrap_median_ratio(x, y, 0.99, 3);
  EXPECT_LT(wide.low, narrow.low);
  EXPECT_GT(wide.high, narrow.high);
}

TEST(StatsDistBootstrap, SingleValuesGiveAPointInterval) {
  const std::vector<double> x = {2.0}, y = {3.0};
  const Interval r = bootstrap_median_ratio(x, y, 0.95, 1);
  EXPECT_EQ(r.estimate, 1.5);
  EXPECT_EQ(r.low, 1.5);
  EXPECT_EQ(r.high, 1.5);
}

TEST(StatsDistBootstrap, RejectsBadInput) {
  const std::vector<double> ok = {1.0, 2.0}, none, zero = {0.0, 1.0}, nan = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(bootstrap_median_ratio(none, ok, 0.95, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, none, 0.95, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(zero, ok, 0.95, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, nan, 0.95, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, ok, 1.0, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, ok, 0.0, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, ok, 0.95, 1, 1), std::invalid_argument);
  Random rng(1);
  EXPECT_THROW(resample_median(std::span<const double>{}, rng), std::invalid_argument);
}
