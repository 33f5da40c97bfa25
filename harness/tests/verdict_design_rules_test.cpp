// Tests of verdict/design_rules.hpp: the analysis options each design fixes, the lanes and the
// wall time of a block.
#include "verdict/design_rules.hpp"

#include <gtest/gtest.h>

namespace abvm {
namespace {

ScheduleSettings schedule_of(Design design) {
  ScheduleSettings s;
  s.design = design;
  s.max_start_skew = std::chrono::milliseconds(30);
  return s;
}

TEST(DesignRules, DesignsThatPairTheSidesAreAnalysedAsPairs) {
  EXPECT_FALSE(with_design_rules({}, schedule_of(Design::sequential_blocks)).paired_primary);
  EXPECT_TRUE(with_design_rules({}, schedule_of(Design::co_scheduled)).paired_primary);
  EXPECT_TRUE(with_design_rules({}, schedule_of(Design::lockstep)).paired_primary);
  EXPECT_TRUE(with_design_rules({}, schedule_of(Design::same_guest)).paired_primary);
}

TEST(DesignRules, OnlyDesignsWhoseRunsOverlapByIntentLeavePairsOut) {
  EXPECT_EQ(with_design_rules({}, schedule_of(Design::co_scheduled)).max_start_skew_ms, 30.0);
  for (Design d : {Design::sequential_blocks, Design::lockstep, Design::same_guest}) {
    AnalysisOptions given;
    given.max_start_skew_ms = 5;  // whatever was there: the design decides
    EXPECT_FALSE(with_design_rules(given, schedule_of(d)).max_start_skew_ms.has_value()) << to_string(d);
  }
}

TEST(DesignRules, KeepTheOtherOptions) {
  AnalysisOptions given;
  given.margin = 0.1;
  given.confidence = 0.99;
  given.seed = 7;
  given.verdict_only = true;
  const AnalysisOptions o = with_design_rules(given, schedule_of(Design::co_scheduled));
  EXPECT_EQ(o.margin, 0.1);
  EXPECT_EQ(o.confidence, 0.99);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.verdict_only);
}

TEST(DesignRules, OneLanePerCpuSetAndOneWithout) {
  ScheduleSettings s;
  EXPECT_EQ(lane_count(s), 1u);
  s.cpu_sets = {"0", "1", "2-3"};
  EXPECT_EQ(lane_count(s), 3u);
}

TEST(DesignRules, ABlockTakesItsTrialsInBlockTimeOverTheLanes) {
  EXPECT_EQ(seconds_per_block({}, schedule_of(Design::sequential_blocks)), 0);
  // Trials of 10 s and 20 s: 15 s on average.
  EXPECT_DOUBLE_EQ(seconds_per_block({10, 20}, schedule_of(Design::sequential_blocks)), 30);  // one after the other
  EXPECT_DOUBLE_EQ(seconds_per_block({10, 20}, schedule_of(Design::co_scheduled)), 15);       // together
  EXPECT_DOUBLE_EQ(seconds_per_block({10, 20}, schedule_of(Design::same_guest)), 15);         // one guest
  ScheduleSettings two_lanes = schedule_of(Design::sequential_blocks);
  two_lanes.cpu_sets = {"0", "1"};
  EXPECT_DOUBLE_EQ(seconds_per_block({10, 20}, two_lanes), 15);
}

}  // namespace
}  // namespace abvm
