#include "plan/looks.hpp"

#include <gtest/gtest.h>

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

TEST(Looks, OneLookWithoutSequentialStopping) {
  for (auto correction : {LookCorrection::bonferroni, LookCorrection::pocock_spending}) {
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
