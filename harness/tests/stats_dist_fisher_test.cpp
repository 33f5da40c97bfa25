#include "stats/fisher.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstdint>

using namespace abvm::stats;

namespace {

struct FisherRef {
  std::uint64_t a, b, c, d;
  double odds_ratio, p_two_sided, p_greater, p_less;
};

// Reference values: harness/tests/reference/dist_reference.py, scipy.stats.fisher_exact (SciPy 1.10.1)
// with alternative two-sided / greater / less.
const FisherRef refs[] = {
    // The seed's mode table: A has 3 slow and 7 fast runs, B likewise.
    {3, 7, 3, 7, 1.0, 1.0, 0.6857585139318885, 0.6857585139318886},
    {1, 9, 11, 3, 0.030303030303030304, 0.0027594561852200836, 0.9999663480953022, 0.0013797280926100418},
    {0, 10, 5, 5, 0.0, 0.032507739938080496, 1.0, 0.016253869969040248},
    {8, 2, 1, 5, 20.0, 0.034965034965034975, 0.024475524475524483, 0.9991258741258742},
    {2, 7, 8, 2, 0.07142857142857142, 0.02301413756522116, 0.9990149169715733, 0.01852172595206651},
    {10, 0, 0, 10, INFINITY, 1.082508822446903e-05, 5.412544112234515e-06, 1.0},
    {2, 3, 3, 2, 0.4444444444444444, 1.0, 0.8968253968253967, 0.5000000000000001},
    {7, 1, 2, 9, 31.5, 0.005477494641581329, 0.004882114789235533, 0.9998809240295309},
    {100, 200, 150, 120, 0.4, 9.654218494855555e-08, 0.9999999736951672, 6.774818945025899e-08},
    {1000, 1100, 1050, 990, 0.8571428571428571, 0.01404471119735359, 0.9939530757260433, 0.007198621269744229},
    {5000, 5200, 5300, 4900, 0.8889695210449927, 2.8226570666646198e-05, 0.9999875295889407, 1.4113285333323099e-05},
    // Symmetric margins: the mirrored outcome has exactly the observed probability and must be counted.
    {480, 520, 520, 480, 0.8520710059171598, 0.08111006057913307, 0.9666548918351519, 0.040555030289566536},
    // Column sums equal, row sums not: x and (a + b) - x tie exactly. With log C(n, k) rounded
    // differently for k and n - k the mirrored term is lost (p 0.065, 0.0013, 2.5e-11 instead).
    {21, 13, 15, 23, 2.476923076923077, 0.09778849754535712, 0.048894248772678554, 0.9835502615343162},
    {10, 24, 27, 13, 0.2006172839506173, 0.002196691723545906, 0.9998053059994841, 0.001098345861772953},
    {5, 36, 41, 10, 0.03387533875338753, 4.815326107192286e-11, 0.9999999999992333, 2.407663053596143e-11},
    // 800,000 runs: about 200,000 log-factorial terms, no overflow, no loss of the tail.
    {200000, 201000, 199000, 200500, 1.002525063126578, 0.5732195821620494, 0.2871102790607906, 0.7144109628509565},
    {12345, 23456, 22222, 11111, 0.26315228512960437, 0.0, 1.0, 0.0},
};

// p-values to 1e-9 relative: lgamma-based and Boost-based probabilities agree far closer than that,
// while any wrong tail (a missed tie, an off-by-one in the support) moves p by much more.
void expect_p(double got, double want, const char* what, const FisherRef& r) {
  EXPECT_NEAR(got, want, 1e-9 * want + 1e-300)
      << what << " for [[" << r.a << ", " << r.b << "], [" << r.c << ", " << r.d << "]]";
}

}  // namespace

TEST(StatsDistFisher, MatchesScipyOnKnownTables) {
  for (const FisherRef& r : refs) {
    const FisherResult f = fisher_exact(r.a, r.b, r.c, r.d);
    if (std::isinf(r.odds_ratio)) {
      EXPECT_TRUE(std::isinf(f.odds_ratio) && f.odds_ratio > 0);
    } else {
      EXPECT_DOUBLE_EQ(f.odds_ratio, r.odds_ratio);
    }
    expect_p(f.p_two_sided, r.p_two_sided, "two-sided", r);
    expect_p(f.p_greater, r.p_greater, "greater", r);
    expect_p(f.p_less, r.p_less, "less", r);
  }
}

TEST(StatsDistFisher, EmptyRowOrColumnGivesNanOddsAndPOne) {
  for (auto [a, b, c, d] : {std::array<std::uint64_t, 4>{0, 0, 3, 4}, {3, 4, 0, 0}, {0, 3, 0, 4}, {3, 0, 4, 0},
                            {0, 0, 0, 0}}) {
    const FisherResult f = fisher_exact(a, b, c, d);
    EXPECT_TRUE(std::isnan(f.odds_ratio));
    EXPECT_EQ(f.p_two_sided, 1.0);
    EXPECT_EQ(f.p_greater, 1.0);
    EXPECT_EQ(f.p_less, 1.0);
  }
}

TEST(StatsDistFisher, TransposedAndMirroredTablesAgree) {
  // Swapping rows turns "greater" into "less" and leaves the two-sided p alone.
  const FisherResult f = fisher_exact(2, 7, 8, 2);
  const FisherResult swapped = fisher_exact(8, 2, 2, 7);
  EXPECT_NEAR(f.p_less, swapped.p_greater, 1e-15);
  EXPECT_NEAR(f.p_two_sided, swapped.p_two_sided, 1e-15);
  const FisherResult transposed = fisher_exact(2, 8, 7, 2);
  EXPECT_NEAR(f.p_two_sided, transposed.p_two_sided, 1e-15);
}
