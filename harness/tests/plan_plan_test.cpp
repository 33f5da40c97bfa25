#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "config/experiment.hpp"
#include "core/error.hpp"

namespace abvm {
namespace {

Experiment experiment(int boots, const char* order = "interleaved") {
  return load_experiment_text(
      std::string("name = \"p\"\n[sides.A]\nlabel = \"base\"\n[sides.B]\nlabel = \"new\"\n"
                  "device.iommu_platform = true\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n"
                  "[schedule]\nboots_per_side = ") +
          std::to_string(boots) + "\norder = \"" + order + "\"\n",
      "p.toml", ".");
}

std::string sides(const Plan& plan) {
  std::string out;
  for (const Trial& t : plan.trials) out += to_string(t.side);
  return out;
}

TEST(Plan, InterleavedBlocksHoldOneBootOfEachSide) {
  const Plan plan = make_plan(experiment(10), 42);
  ASSERT_EQ(plan.trials.size(), 20u);
  EXPECT_EQ(plan.blocks, 10);
  EXPECT_EQ(plan.seed, 42u);
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const Trial& t = plan.trials[i];
    EXPECT_EQ(t.position, static_cast<int>(i));
    EXPECT_EQ(t.block, static_cast<int>(i / 2));
    EXPECT_EQ(t.id, (i < 10 ? "t000" : "t00") + std::to_string(i));
    if (i % 2 == 1) {
      EXPECT_NE(t.side, plan.trials[i - 1].side) << "block " << t.block;
    }
  }
}

TEST(Plan, OrderInsideBlocksIsRandomisedFromTheSeed) {
  // Pinned so that a change of the mixer (which would silently change recorded experiments)
  // fails here.
  EXPECT_EQ(sides(make_plan(experiment(10), 42)), sides(make_plan(experiment(10), 42)));
  const std::string s1 = sides(make_plan(experiment(10), 1));
  const std::string s2 = sides(make_plan(experiment(10), 2));
  EXPECT_NE(s1, s2);
  // Over many blocks both orders occur about equally often.
  const Plan big = make_plan(experiment(2000), 7);
  int a_first = 0;
  for (int b = 0; b < big.blocks; ++b) a_first += big.trials[2 * b].side == Side::a;
  EXPECT_GT(a_first, 900);
  EXPECT_LT(a_first, 1100);
}

TEST(Plan, PinnedOrderForARecordedSeed) {
  EXPECT_EQ(sides(make_plan(experiment(6), 42)), "ABABABABBABA");
}

TEST(Plan, SequentialRunsAllOfAThenAllOfB) {
  const Plan plan = make_plan(experiment(3, "sequential"), 9);
  EXPECT_EQ(sides(plan), "AAABBB");
  EXPECT_EQ(plan.trials[3].block, 0);
  EXPECT_EQ(plan.trials[5].block, 2);
  const Plan longer = extend_plan(plan, 2);
  EXPECT_EQ(sides(longer), "AAABBBAABB");
  EXPECT_EQ(longer.trials[6].block, 3);
}

TEST(Plan, ExtensionKeepsTrialsAndEqualsALongerPlan) {
  const Plan plan = make_plan(experiment(10), 123);
  const Plan extended = extend_plan(plan, 5);
  ASSERT_EQ(extended.trials.size(), 30u);
  for (std::size_t i = 0; i < plan.trials.size(); ++i) EXPECT_EQ(extended.trials[i], plan.trials[i]);
  EXPECT_EQ(extended, make_plan(experiment(15), 123));
  EXPECT_EQ(extend_plan(extend_plan(plan, 2), 3), extended);
}

TEST(Plan, JsonRoundTrips) {
  const Plan plan = make_plan(experiment(4), 18446744073709551615ULL);
  const nlohmann::json json = plan_to_json(plan);
  EXPECT_EQ(json["plan_schema_version"], 1);
  EXPECT_EQ(json["trials"][0]["id"], "t0000");
  EXPECT_EQ(json["labels"]["B"], "new");
  EXPECT_EQ(plan_from_json(nlohmann::json::parse(json.dump())), plan);
}

std::string json_error(const nlohmann::json& json) {
  try {
    plan_from_json(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Plan, DamagedOrNewerJsonIsRefused) {
  const nlohmann::json good = plan_to_json(make_plan(experiment(2), 5));
  nlohmann::json newer = good;
  newer["plan_schema_version"] = 2;
  EXPECT_EQ(json_error(newer),
            "plan.json: schema version 2 is newer than this abvm understands (1): resume with a newer abvm");
  nlohmann::json reordered = good;
  std::swap(reordered["trials"][0], reordered["trials"][1]);
  EXPECT_EQ(json_error(reordered),
            "plan.json: field \"trials[0]\" (trial t0001) at position 0 is out of order; the results directory is damaged; "
            "start a new run");
  nlohmann::json truncated = good;
  truncated["trials"].erase(3);
  EXPECT_EQ(json_error(truncated),
            "plan.json: 3 trials for 2 blocks; the results directory is damaged; start a new run");
  nlohmann::json missing = good;
  missing.erase("seed");
  EXPECT_EQ(json_error(missing), "plan.json: field \"seed\" is missing (an integer >= 0); the results directory is damaged; "
                                 "start a new run");
  nlohmann::json mistyped = good;
  mistyped["trials"][1]["side"] = 2;
  EXPECT_EQ(json_error(mistyped), "plan.json: field \"trials[1].side\" must be \"A\" or \"B\", not 2; the results directory "
                                  "is damaged; start a new run");
}

TEST(Plan, DescribeShowsTheTrialOrder) {
  const Plan plan = make_plan(experiment(2, "sequential"), 3);
  EXPECT_EQ(describe_plan(plan),
            "plan for p: 4 trials, 2 boots per side, order sequential, design sequential-blocks, seed 3\n"
            "trial   block  side\n"
            "t0000       0  A (base)\n"
            "t0001       1  A (base)\n"
            "t0002       0  B (new)\n"
            "t0003       1  B (new)\n");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// The plan records its design and CPU sets; a plan.json of an abvm without designs reads as
// sequential blocks, unpinned (what it ran), and one of an abvm with one CPU set ("cpu_set") as
// that set.
TEST(Plan, DesignIsRecordedAndOlderPlansReadAsWhatTheyRan) {
  Experiment e = experiment(3);
  e.schedule.design = Design::co_scheduled;
  e.schedule.cpu_sets = {"1", "2-3"};
  const Plan plan = make_plan(e, 7);
  EXPECT_EQ(plan.design, Design::co_scheduled);
  nlohmann::json json = plan_to_json(plan);
  EXPECT_EQ(json["design"], "co-scheduled");
  EXPECT_EQ(json["cpu_sets"], nlohmann::json::array({"1", "2-3"}));
  EXPECT_EQ(plan_from_json(json), plan);
  EXPECT_NE(describe_plan(plan).find("design co-scheduled on host CPUs 1 | 2-3"), std::string::npos);
  json.erase("cpu_sets");
  json["cpu_set"] = "1";
  EXPECT_EQ(plan_from_json(json).cpu_sets, std::vector<std::string>{"1"});
  json.erase("design");
  json.erase("cpu_set");
  const Plan old = plan_from_json(json);
  EXPECT_EQ(old.design, Design::sequential_blocks);
  EXPECT_TRUE(old.cpu_sets.empty());
  json["design"] = "sideways";
  EXPECT_EQ(json_error(json), "plan.json: field \"design\" must be one of \"sequential-blocks\", \"co-scheduled\", "
                              "\"lockstep\", \"same-guest\", not \"sideways\"; the results directory is damaged; start a new run");
}

// Same-guest: one trial per block (one guest measures both sides), the side that runs first in it
// drawn from the seed as the order of the other designs' blocks is.
TEST(Plan, SameGuestHasOneTrialPerBlockWhoseSideRunsFirst) {
  Experiment e = experiment(6);
  const Plan two = make_plan(e, 11);
  e.schedule.design = Design::same_guest;
  const Plan one = make_plan(e, 11);
  ASSERT_EQ(one.trials.size(), 6u);
  for (int b = 0; b < 6; ++b) {
    EXPECT_EQ(one.trials[b].block, b);
    EXPECT_EQ(one.trials[b].position, b);
    EXPECT_EQ(one.trials[b].side, two.trials[2 * b].side) << b;
  }
  EXPECT_EQ(extend_plan(make_plan(e, 11), 0), one);
  e.schedule.boots_per_side = 8;
  EXPECT_EQ(extend_plan(one, 2), make_plan(e, 11));
  EXPECT_EQ(plan_from_json(plan_to_json(one)), one);
  EXPECT_NE(describe_plan(one).find("sides (first runs first)"), std::string::npos);
  nlohmann::json json = plan_to_json(one);
  json["blocks"] = 7;
  EXPECT_EQ(json_error(json), "plan.json: 6 trials for 7 blocks; the results directory is damaged; start a new run");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

Experiment three_workloads(int boots, bool drawn) {
  std::string text =
      "name = \"p\"\n[sides.A]\nlabel = \"base\"\n[sides.B]\nlabel = \"new\"\ndevice.iommu_platform = true\n"
      "[[workload]]\nname = \"w0\"\ntype = \"dd\"\n[[workload]]\nname = \"w1\"\ntype = \"dd\"\n"
      "[[workload]]\nname = \"w2\"\ntype = \"dd\"\n[schedule]\nboots_per_side = " +
      std::to_string(boots) + "\ndesign = \"co-scheduled\"\n";
  if (drawn) text += "workload_order = \"drawn\"\n";
  return load_experiment_text(text, "p.toml", ".");
}

// schedule.workload_order = "drawn": each block's order is a permutation drawn from (seed, block),
// the same for both of its trials, stable under extension and recorded in plan.json.
TEST(Plan, DrawnWorkloadOrdersArePerBlockPermutationsRecordedInThePlan) {
  EXPECT_TRUE(make_plan(three_workloads(4, false), 9).trials[0].workload_order.empty());
  const Plan plan = make_plan(three_workloads(300, true), 9);
  std::map<std::vector<int>, int> seen;
  for (std::size_t i = 0; i < plan.trials.size(); i += 2) {
    const Trial& first = plan.trials[i];
    EXPECT_EQ(first.workload_order, plan.trials[i + 1].workload_order) << "block " << first.block;
    std::vector<int> sorted = first.workload_order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2}));
    ++seen[first.workload_order];
  }
  // All 6 orders occur, each about 50 times in 300 blocks.
  EXPECT_EQ(seen.size(), 6u);
  for (const auto& [order, n] : seen) EXPECT_GT(n, 25) << ::testing::PrintToString(order);
  EXPECT_EQ(extend_plan(make_plan(three_workloads(10, true), 9), 5), make_plan(three_workloads(15, true), 9));
  EXPECT_EQ(plan_from_json(plan_to_json(plan)), plan);
  nlohmann::json tampered = plan_to_json(plan);
  // A hand-edited order the seed does not give is refused (block 0's order reversed).
  std::vector<int> reversed(plan.trials[0].workload_order.rbegin(), plan.trials[0].workload_order.rend());
  tampered["trials"][0]["workload_order"] = reversed;
  EXPECT_THROW(plan_from_json(tampered), Error);
  EXPECT_NE(describe_plan(make_plan(three_workloads(2, true), 9)).find("workloads"), std::string::npos);
}

}  // namespace
}  // namespace abvm
