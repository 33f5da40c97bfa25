// Tests of run/first_block.hpp: the rule that stops a run after its first block when a workload
// failed in every run of it on both sides (issue 20), on journal lines as any design writes them,
// and the message the run ends with.
#include "run/first_block.hpp"

#include <gtest/gtest.h>

#include "config/experiment.hpp"

namespace abvm {
namespace {

JournalEntry entry(const std::string& workload, Side side, Outcome outcome, int block = 0, std::int64_t order = 0,
                   const std::string& trial = "t0000") {
  return {.trial = trial, .side = side, .boot = trial, .run = 0, .order = order, .block = block, .workload = workload,
          .outcome = outcome,
          .detail = outcome == Outcome::ok ? "" : workload + " run 0 exited with status 1: dd: failed to open '/dev/null'"};
}

const std::vector<Workload> kWorkloads = {{.name = "dd-write", .spec = DdWorkload{}},
                                          {.name = "dd-read", .spec = DdWorkload{}}};

TEST(FirstBlock, AWorkloadThatFailedInEveryRunOnBothSidesIsBroken) {
  const std::vector<JournalEntry> block = {
      entry("dd-write", Side::b, Outcome::ok, 0, 0, "t0000"),
      entry("dd-read", Side::b, Outcome::workload_failed, 0, 1, "t0000"),
      entry("dd-read", Side::b, Outcome::workload_failed, 0, 2, "t0000"),
      entry("dd-write", Side::a, Outcome::ok, 0, 3, "t0001"),
      entry("dd-read", Side::a, Outcome::workload_failed, 0, 4, "t0001"),
      entry("dd-read", Side::a, Outcome::workload_failed, 1, 9, "t0002"),  // another block: not counted
  };
  const auto broken = broken_workload(block, 0, kWorkloads);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->workload, "dd-read");
  EXPECT_EQ(broken->runs_a, 1u);
  EXPECT_EQ(broken->runs_b, 2u);
  ASSERT_NE(broken->first, nullptr);
  EXPECT_EQ(broken->first->order, 1) << "the first failed run in the run order";
  EXPECT_EQ(broken->first->trial, "t0000");
}

// A finding, not a broken experiment: the run goes on.
TEST(FirstBlock, FailuresOnOneSideInSomeRunsOrOfAnotherKindAreNotBroken) {
  using E = std::vector<JournalEntry>;
  const E one_side = {entry("dd-read", Side::a, Outcome::ok), entry("dd-read", Side::b, Outcome::workload_failed)};
  EXPECT_FALSE(broken_workload(one_side, 0, kWorkloads));
  const E some_runs = {entry("dd-read", Side::a, Outcome::workload_failed), entry("dd-read", Side::a, Outcome::ok),
                       entry("dd-read", Side::b, Outcome::workload_failed)};
  EXPECT_FALSE(broken_workload(some_runs, 0, kWorkloads));
  const E a_timed_out = {entry("dd-read", Side::a, Outcome::timeout), entry("dd-read", Side::b, Outcome::workload_failed)};
  EXPECT_FALSE(broken_workload(a_timed_out, 0, kWorkloads));
  const E both_panicked = {entry("dd-read", Side::a, Outcome::panic), entry("dd-read", Side::b, Outcome::panic)};
  EXPECT_FALSE(broken_workload(both_panicked, 0, kWorkloads));
  const E b_missing = {entry("dd-read", Side::a, Outcome::workload_failed)};  // B's trial not in the block (yet)
  EXPECT_FALSE(broken_workload(b_missing, 0, kWorkloads));
  EXPECT_FALSE(broken_workload({}, 0, kWorkloads));
}

TEST(FirstBlock, TheFirstBrokenWorkloadInTheExperimentsOrderIsNamed) {
  const std::vector<JournalEntry> block = {
      entry("dd-read", Side::a, Outcome::workload_failed, 0, 0), entry("dd-write", Side::a, Outcome::workload_failed, 0, 1),
      entry("dd-read", Side::b, Outcome::workload_failed, 0, 2), entry("dd-write", Side::b, Outcome::workload_failed, 0, 3)};
  EXPECT_EQ(broken_workload(block, 0, kWorkloads)->workload, "dd-write");
}

// The message: the workload, the runs, the tool's own words (the run's detail), where its output is,
// and what to do. One guest measuring both sides names each side's output file apart.
TEST(FirstBlock, TheMessageQuotesTheToolAndSaysWhatToDo) {
  Experiment e;
  e.source = "exp.toml";
  e.workloads = kWorkloads;
  const ResultsDir dir("/r/exp-1");
  const std::vector<JournalEntry> block = {entry("dd-read", Side::b, Outcome::workload_failed, 0, 0, "t0000"),
                                           entry("dd-read", Side::a, Outcome::workload_failed, 0, 1, "t0001")};
  const auto broken = broken_workload(block, 0, kWorkloads);
  ASSERT_TRUE(broken);
  EXPECT_EQ(describe_broken_workload(*broken, e, dir),
            "workload \"dd-read\" failed in every run of the first block on both sides (1 run on A, 1 on B), so no "
            "block can measure it: dd-read run 0 exited with status 1: dd: failed to open '/dev/null' "
            "(trials/t0000/dd-read-run0.out). The run stopped after the first block instead of spending its budget: "
            "fix the workload in exp.toml (abvm config show exp.toml prints what it runs) and start a new run; the "
            "first block is kept in /r/exp-1");
  e.schedule.design = Design::same_guest;
  EXPECT_NE(describe_broken_workload(*broken, e, dir).find("(trials/t0000/dd-read.B-run0.out)"), std::string::npos);
}

}  // namespace
}  // namespace abvm
