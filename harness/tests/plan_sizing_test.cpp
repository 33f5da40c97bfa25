// plan/sizing: google/benchmark's rule for how much longer a run must be, as a whole factor.
// Reference values are google/benchmark's PredictNumItersNeeded (src/benchmark_runner.cc) worked
// by hand: multiplier = min_time * 1.4 / seconds when seconds / min_time > 0.1, else 10.
#include <gtest/gtest.h>

#include <limits>

#include "plan/sizing.hpp"

namespace abvm {
namespace {

constexpr std::uint64_t kNoCap = std::numeric_limits<std::uint64_t>::max();

TEST(PlanSizing, MultiplierIsGoogleBenchmarks) {
  EXPECT_DOUBLE_EQ(sizing_multiplier(0.5, 1.0), 2.8);   // 1.4 / 0.5
  EXPECT_DOUBLE_EQ(sizing_multiplier(0.2, 1.0), 7.0);   // 1.4 / 0.2
  EXPECT_DOUBLE_EQ(sizing_multiplier(0.11, 1.0), 1.4 / 0.11);  // just significant: above 10 is allowed
  EXPECT_DOUBLE_EQ(sizing_multiplier(0.1, 1.0), 10.0);  // not more than a tenth: grow 10x
  EXPECT_DOUBLE_EQ(sizing_multiplier(0.001, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(sizing_multiplier(1.0, 2.0), 2.8);   // scales with the minimum
}

TEST(PlanSizing, FactorIsTheMultiplierRoundedUp) {
  EXPECT_EQ(sizing_factor(0.5, 1.0, kNoCap), 3u);   // 2.8
  EXPECT_EQ(sizing_factor(0.2, 1.0, kNoCap), 7u);   // 7.0 exactly stays 7
  EXPECT_EQ(sizing_factor(0.3, 1.0, kNoCap), 5u);   // 4.67
  EXPECT_EQ(sizing_factor(0.11, 1.0, kNoCap), 13u); // 12.7
  EXPECT_EQ(sizing_factor(0.05, 1.0, kNoCap), 10u); // capped growth
  EXPECT_EQ(sizing_factor(0.0, 1.0, kNoCap), 10u);  // no time at all
}

TEST(PlanSizing, LongEnoughRunsAndAnOffMinimumStayAsWritten) {
  EXPECT_EQ(sizing_factor(1.0, 1.0, kNoCap), 1u);
  EXPECT_EQ(sizing_factor(2.4, 1.0, kNoCap), 1u);
  EXPECT_EQ(sizing_factor(0.2, 0.0, kNoCap), 1u);
}

TEST(PlanSizing, AShortRunGrowsAtLeastTwofold) {
  EXPECT_EQ(sizing_factor(0.95, 1.0, kNoCap), 2u);  // 1.47 rounds up to 2
}

TEST(PlanSizing, TheDiskCapsTheFactor) {
  EXPECT_EQ(sizing_factor(0.2, 1.0, 4), 4u);
  EXPECT_EQ(sizing_factor(0.2, 1.0, 0), 1u);  // not even the size as written fits: never below 1
}

}  // namespace
}  // namespace abvm
