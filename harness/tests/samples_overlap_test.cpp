// Tests of samples/overlap.hpp: a run's share of overlap with its partner's load, by hand.
#include "samples/overlap.hpp"

#include <gtest/gtest.h>

namespace abvm {
namespace {

RunTiming timing(double start, double end, double load_end) {
  return {.go = std::nullopt, .start = start, .end = end, .load_end = load_end, .clock_error = 0.001};
}

TEST(Overlap, ShareOfTheRunDuringWhichThePartnerWasUnderLoad) {
  // Run [10, 12]; the partner under load over [11, 14]: 1 s of 2.
  EXPECT_DOUBLE_EQ(overlap_share(timing(10, 12, 12), timing(11, 13, 14)), 0.5);
  // The partner's filler (its load until 14) covers the run's end: the whole run.
  EXPECT_DOUBLE_EQ(overlap_share(timing(11, 13.5, 13.5), timing(11, 12, 14)), 1.0);
  // Without the filler, the partner stopped at 12: 1 s of 2.5.
  EXPECT_DOUBLE_EQ(overlap_share(timing(11, 13.5, 13.5), timing(11, 12, 12)), 0.4);
  // Apart: nothing; the partner's load entirely inside the run: its length over the run's.
  EXPECT_DOUBLE_EQ(overlap_share(timing(0, 1, 1), timing(2, 3, 3)), 0.0);
  EXPECT_DOUBLE_EQ(overlap_share(timing(0, 4, 4), timing(1, 2, 2)), 0.25);
  // A run of no duration: overlapped or not.
  EXPECT_DOUBLE_EQ(overlap_share(timing(5, 5, 5), timing(4, 6, 6)), 1.0);
  EXPECT_DOUBLE_EQ(overlap_share(timing(7, 7, 7), timing(4, 6, 6)), 0.0);
}

TEST(Overlap, APairIsJudgedByItsSmallerShareOnBothLines) {
  // t0001 runs [10, 12] and keeps its load to 12.5; t0002 runs [11, 13]. t0001's share: [11, 12] of
  // [10, 12] = 0.5; t0002's: [11, 12.5] of [11, 13] = 0.75.
  const auto [first, second] = pair_overlap(timing(10, 12, 12.5), "t0001", timing(11, 13, 13), "t0002");
  EXPECT_EQ(first.partner, "t0002");
  EXPECT_EQ(second.partner, "t0001");
  EXPECT_DOUBLE_EQ(first.run, 0.5);
  EXPECT_DOUBLE_EQ(second.run, 0.75);
  EXPECT_DOUBLE_EQ(first.pair, 0.5);
  EXPECT_DOUBLE_EQ(second.pair, 0.5);
}

}  // namespace
}  // namespace abvm
