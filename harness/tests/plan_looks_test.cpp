#include "plan/looks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace abvm {
namespace {

TEST(Looks, BonferroniSplitsAlphaEquallyOverThePlannedLooks) {
  // 10 boots, then every 5 up to 32: looks at 10, 15, 20, 25, 30 and the budget 32.
  const LookSchedule s = make_look_schedule(10, 5, 32, 0.95, LookCorrection::bonferroni);
  ASSERT_EQ(s.looks.size(), 6u);
  const int expected_boots[] = {10, 15, 20, 25, 30, 32};
  for (std::size_t i = 0; i < s.looks.size(); ++i) {
    EXPECT_EQ(s.looks[i].index, static_cast<int>(i));
    EXPECT_EQ(s.looks[i].boots_per_side, expected_boots[i]);
    EXPECT_DOUBLE_EQ(s.looks[i].alpha, 0.05 / 6);
    EXPECT_DOUBLE_EQ(s.looks[i].confidence, 1 - 0.05 / 6);
  }
}

TEST(Looks, PocockSpendingMatchesTheSpendingFunction) {
  // Reference: /usr/bin/python3, for n in 10,15,...,40:
  //   now = 0.05*math.log(1+(math.e-1)*n/40); print(now - prev); prev = now
  const double expected[] = {0.01786870097543942,  0.00699873037696299,  0.0061382939955114645,
                             0.005466449560770352, 0.004927272053459261, 0.004484972770306468,
                             0.004115580267550045};
  const LookSchedule s = make_look_schedule(10, 5, 40, 0.95, LookCorrection::pocock_spending);
  ASSERT_EQ(s.looks.size(), 7u);
  double total = 0;
  for (std::size_t i = 0; i < s.looks.size(); ++i) {
    EXPECT_NEAR(s.looks[i].alpha, expected[i], 1e-15) << i;
    EXPECT_EQ(s.looks[i].boots_per_side, 10 + 5 * static_cast<int>(i));
    total += s.looks[i].alpha;
  }
  // The union bound: all looks together spend exactly alpha.
  EXPECT_NEAR(total, 0.05, 1e-15);
  EXPECT_DOUBLE_EQ(s.overall_alpha, 1 - 0.95);
  // Early looks get more than Bonferroni's equal share, later ones less.
  EXPECT_GT(s.looks.front().alpha, 0.05 / 7);
  EXPECT_LT(s.looks.back().alpha, 0.05 / 7);
}

TEST(Looks, LanDeMetsLooksUseTheGroupSequentialBoundaries) {
  // 8 boots, then every 8 up to 40: five equally spaced looks, the published K = 5 boundaries
  // (plan_group_sequential_test.cpp).
  const double obf[] = {4.877, 3.357, 2.680, 2.290, 2.031};
  const double poc[] = {2.438, 2.427, 2.410, 2.397, 2.386};
  const LookSchedule o = make_look_schedule(8, 8, 40, 0.95, LookCorrection::obrien_fleming);
  const LookSchedule p = make_look_schedule(8, 8, 40, 0.95, LookCorrection::pocock);
  ASSERT_EQ(o.looks.size(), 5u);
  ASSERT_EQ(p.looks.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(o.looks[i].boundary, obf[i], 0.0005) << i;
    EXPECT_NEAR(p.looks[i].boundary, poc[i], 0.0005) << i;
    EXPECT_DOUBLE_EQ(o.looks[i].fraction, 0.2 * static_cast<double>(i + 1));
    for (const LookSchedule* s : {&o, &p}) {
      const Look& l = s->looks[i];
      EXPECT_NEAR(l.alpha, std::erfc(l.boundary / std::sqrt(2.0)), 1e-12) << i;
      EXPECT_DOUBLE_EQ(l.confidence, 1 - l.alpha);
      // The correlation between looks buys a wider level than the increment alone.
      if (i > 0) {
        EXPECT_GT(l.alpha, l.spent) << i;
      }
    }
  }
  // The last look: O'Brien-Fleming-type near the fixed-sample 95 %, Pocock-type at about 98.3 %.
  EXPECT_NEAR(o.looks.back().confidence, 0.9577, 0.0001);
  EXPECT_NEAR(p.looks.back().confidence, 0.9830, 0.0001);
  // The old union-bound share of the same last look was much tighter.
  const LookSchedule old = make_look_schedule(8, 8, 40, 0.95, LookCorrection::pocock_spending);
  EXPECT_GT(old.looks.back().confidence, 0.99);
}

TEST(Looks, FarEarlyLooksKeepALevelBelowOne) {
  // O'Brien-Fleming-type at 2 of 200 boots may spend about 1e-80: the level is kept at 1e-12.
  const LookSchedule s = make_look_schedule(2, 1, 200, 0.95, LookCorrection::obrien_fleming);
  ASSERT_EQ(s.looks.size(), 199u);
  EXPECT_EQ(s.looks.front().alpha, 1e-12);
  EXPECT_LT(s.looks.front().confidence, 1);
  EXPECT_TRUE(std::isfinite(s.looks.front().boundary));
  // 199 looks cost more than 5: the last one at about 97.2 %, still wider than alpha / 199.
  EXPECT_GT(s.looks.back().confidence, 0.95);
  EXPECT_LT(s.looks.back().confidence, 0.98);
}

TEST(Looks, OneLookWithoutSequentialStopping) {
  for (auto correction : {LookCorrection::obrien_fleming, LookCorrection::pocock, LookCorrection::bonferroni,
                          LookCorrection::pocock_spending}) {
    const LookSchedule s = make_look_schedule(12, 1, 12, 0.9, correction);
    ASSERT_EQ(s.looks.size(), 1u);
    EXPECT_EQ(s.looks[0].boots_per_side, 12);
    EXPECT_NEAR(s.looks[0].confidence, 0.9, 1e-15);
  }
}

TEST(Looks, LookAtFindsOnlyPlannedLooks) {
  const LookSchedule s = make_look_schedule(10, 5, 20, 0.95, LookCorrection::bonferroni);
  ASSERT_NE(look_at(s, 15), nullptr);
  EXPECT_EQ(look_at(s, 15)->index, 1);
  EXPECT_EQ(look_at(s, 14), nullptr);
  EXPECT_EQ(look_at(s, 25), nullptr);
}

TEST(Looks, ImpossibleArgumentsThrow) {
  EXPECT_THROW(make_look_schedule(10, 5, 9, 0.95, LookCorrection::bonferroni), std::invalid_argument);
  EXPECT_THROW(make_look_schedule(10, 0, 20, 0.95, LookCorrection::bonferroni), std::invalid_argument);
  EXPECT_THROW(make_look_schedule(10, 5, 20, 1.0, LookCorrection::bonferroni), std::invalid_argument);
}

}  // namespace
}  // namespace abvm
