// A bisection directory's files read back (bisect/directory.hpp): bisect-plan.json and the step
// ledger round-trip, and a damaged one is an Error naming the file (and line), the field and what
// it must be.
#include "bisect/directory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "samples_test_util.hpp"

namespace abvm {
namespace {

BisectPlan plan() {
  return {.abvm_version = "0.1.0", .experiment = "e", .config = "/c.toml", .config_dir = "/", .uri = "",
          .started = "2026-12-01T20:00:00Z", .base_recipe = "base", .tip_recipe = "tip", .base_label = "6.1",
          .patches = {{.index = 1, .name = "0001.patch", .sha256 = "ab", .commit = ""}}, .max_steps = 3,
          .confidence = 0.95, .step_confidence = 0.98, .margin = 0.05, .seed = 7};
}

StepRecord step(int i) {
  StepRecord r{.step = i, .question = {.kernel = 1, .reference = 0}, .results_dir = "steps/e-step1", .boots_per_side = 4,
               .confidence = 0.98, .stop_reason = "", .detail = "", .trial_seconds = 60};
  r.judgement = {.finding = StepFinding::slower, .verdict = Verdict::regression, .reason = "slower"};
  r.judgement.effects.push_back({.metric = "m", .unit = "B/s", .estimate = std::numeric_limits<double>::quiet_NaN(),
                                 .confidence = 0.98, .estimate_kind = "paired", .verdict = Verdict::regression});
  return r;
}

std::string error_of(const auto& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BisectDirectory, ThePlanAndTheLedgerReadBackAsWritten) {
  test::TempDir tmp("bisect-dir");
  const BisectDir dir(tmp.path());
  write_bisect_plan(dir, plan());
  const BisectPlan back = read_bisect_plan(dir);
  EXPECT_EQ(back.patches.size(), 1u);
  EXPECT_EQ(back.seed, 7u);
  EXPECT_FALSE(back.max_boots_per_side.has_value());
  append_line_durable(dir.ledger(), to_step_line(step(1)));
  const auto steps = read_step_ledger(dir);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].judgement.finding, StepFinding::slower);
  EXPECT_TRUE(std::isnan(steps[0].judgement.effects[0].estimate));  // written as null
}

TEST(BisectDirectory, ADamagedFileNamesTheFieldAndWhatItMustBe) {
  test::TempDir tmp("bisect-damaged");
  const BisectDir dir(tmp.path());
  const std::string damaged = "; the bisect directory is damaged (start a new bisection)";
  write_file_atomic(dir.plan(), R"({"abvm_version": "0.1.0"})");
  EXPECT_EQ(error_of([&] { read_bisect_plan(dir); }),
            dir.plan().string() + ": field \"experiment\" is missing (a string)" + damaged);
  std::string line = to_step_line(step(1));
  line.replace(line.find("\"finding\":\"slower\""), 18, "\"finding\":\"faster\"");
  write_file_atomic(dir.ledger(), line + "\n");
  EXPECT_EQ(error_of([&] { read_step_ledger(dir); }),
            dir.ledger().string() + ":1: field \"finding\" must be one of slower, not-slower, unknown, not \"faster\"" +
                damaged);
  write_file_atomic(dir.ledger(), to_step_line(step(1)) + "\n" + to_step_line(step(3)) + "\n");
  EXPECT_EQ(error_of([&] { read_step_ledger(dir); }),
            dir.ledger().string() + ":2: field \"step\" is 3, but it follows step 1" + damaged);
}

}  // namespace
}  // namespace abvm
