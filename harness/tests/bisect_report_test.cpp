// The bisection's writers (bisect/report.hpp): goldens of bisect.json, the terminal summary and
// bisect.html for a four-patch bisection with one culprit and one with an unknown step (a range),
// report/bisect_schema.json against what they write (and against reports it must refuse), the
// sentences of every outcome, and the exit codes. Goldens: data/bisect/*.golden.*;
// ABVM_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "environment_skip.hpp"
#include "bisect/directory.hpp"
#include "bisect/report.hpp"
#include "bisect/strategy.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "report/html.hpp"
#include "report_test_support.hpp"

namespace abvm {
namespace {
using json = nlohmann::json;
using test::expect_golden;

BisectPlan plan4() {
  return {.abvm_version = "pinned",
          .experiment = "bisect-control",
          .config = "/src/configs/bisect-control.toml",
          .config_dir = "/src/configs",
          .started = "2026-12-01T20:00:00Z",
          .base_recipe = "linux-6.1-virtio",
          .tip_recipe = "linux-6.1-virtio-bisect-control",
          .base_label = "6.1",
          .patches = {{1, "0001-harmless.patch", "aaaaaaaaaaaaaaaa", ""},
                      {2, "0002-harmless.patch", "bbbbbbbbbbbbbbbb", ""},
                      {3, "0003-bounce <every> request.patch", "cccccccccccccccc", ""},
                      {4, "0004-comment.patch", "dddddddddddddddd", ""}},
          .max_steps = 7,
          .confidence = 0.95,
          .step_confidence = step_confidence(0.95, 7),
          .margin = 0.15,
          .seed = 42};
}

StepRecord step(int n, StepQuestion q, StepFinding f, double est, double lo, double hi) {
  StepRecord r{.step = n, .question = q, .results_dir = "steps/bisect-control-step" + std::to_string(n) + "-20261201T200000Z",
               .boots_per_side = f == StepFinding::slower ? 4 : 8, .confidence = 0.9971,
               .stop_reason = "verdict " + std::string(to_string(f)) + " at look 1 of 3", .trial_seconds = 60};
  r.judgement.finding = f;
  r.judgement.verdict = f == StepFinding::slower ? Verdict::regression : Verdict::no_change;
  r.judgement.reason = std::string(to_string(f)) + ": as the analysis says";
  r.judgement.effects.push_back({.metric = "dd-write.bandwidth", .unit = "B/s", .estimate = est, .low = lo, .high = hi,
                                 .confidence = 0.9971, .estimate_kind = "paired",
                                 .verdict = r.judgement.verdict});
  return r;
}

struct Case {
  BisectPlan plan = plan4();
  std::vector<StepRecord> steps;
  BisectState state;
  BisectReport report() const { return {.plan = plan, .steps = steps, .state = state}; }
};

Case one_culprit() {
  Case c;
  c.steps = {step(1, {4, 0}, StepFinding::slower, 0.571, 0.540, 0.602),
             step(2, {2, 0}, StepFinding::not_slower, 1.004, 0.981, 1.020),
             step(3, {3, 0}, StepFinding::slower, 0.566, 0.530, 0.610),
             step(4, {4, 3}, StepFinding::not_slower, 0.998, 0.975, 1.018)};
  c.state = bisect_state({4, 7}, answers_of(c.steps));
  return c;
}

Case with_a_range() {
  Case c;
  c.steps = {step(1, {4, 0}, StepFinding::slower, 0.571, 0.540, 0.602),
             step(2, {2, 0}, StepFinding::unknown, 0.93, 0.80, 1.05),
             step(3, {1, 0}, StepFinding::not_slower, 1.0, 0.97, 1.03),
             step(4, {3, 0}, StepFinding::slower, 0.566, 0.530, 0.610),
             step(5, {4, 3}, StepFinding::not_slower, 0.998, 0.975, 1.018)};
  c.steps[1].judgement.verdict = Verdict::inconclusive;
  c.state = bisect_state({4, 7}, answers_of(c.steps));
  return c;
}

json pinned(json j) {
  j["tool"]["version"] = "pinned";
  return j;
}

std::string pinned_html(std::string html) {
  const std::string v = std::string("abvm ") + ABVM_VERSION + ";";
  if (const auto at = html.find(v); at != std::string::npos) html.replace(at, v.size(), "abvm pinned;");
  return html;
}

TEST(BisectReport, OneCulpritMatchesTheGoldens) {
  const Case c = one_culprit();
  ASSERT_EQ(c.state.outcome, BisectOutcome::culprits);
  expect_golden(pinned(bisect_json(c.report())).dump(2) + "\n", "bisect/one-culprit.golden.json");
  expect_golden(bisect_summary(c.report()), "bisect/one-culprit.golden.txt");
  expect_golden(pinned_html(bisect_html(c.report(), load_html_template())), "bisect/one-culprit.golden.html");
}

TEST(BisectReport, ARangeMatchesTheGoldens) {
  const Case c = with_a_range();
  ASSERT_EQ(c.state.culprits.size(), 1u);
  EXPECT_FALSE(c.state.culprits[0].exact());
  expect_golden(pinned(bisect_json(c.report())).dump(2) + "\n", "bisect/range.golden.json");
  expect_golden(bisect_summary(c.report()), "bisect/range.golden.txt");
}

TEST(BisectReport, TheAnswerSaysWhatWasFound) {
  const Case c = one_culprit();
  EXPECT_EQ(bisect_sentence(c.report()),
            "Patch 3 (0003-bounce <every> request.patch) makes it slower (kernel 3 (6.1+3) against kernel 0 (6.1, the "
            "base): dd-write.bandwidth B/A 0.566 [0.530, 0.610] (paired, 99.71 %)). The patches after patch 3 add no "
            "share of their own (not slower by more than 15 %).");
  EXPECT_EQ(bisect_sentence(with_a_range().report()),
            "One of patches 2-3 (0002-harmless.patch, 0003-bounce <every> request.patch) makes it slower (kernel 3 "
            "(6.1+3) against kernel 0 (6.1, the base): dd-write.bandwidth B/A 0.566 [0.530, 0.610] (paired, 99.71 %)); "
            "the steps of kernel(s) 2 stayed unknown, so this is the narrowest range that holds it. The patches after "
            "patch 3 add no share of their own (not slower by more than 15 %).");
  Case none;
  none.steps = {step(1, {4, 0}, StepFinding::not_slower, 1.0, 0.98, 1.02)};
  none.state = bisect_state({4, 7}, answers_of(none.steps));
  EXPECT_EQ(bisect_sentence(none.report()),
            "The whole series is not slower than the base by more than 15 % (dd-write.bandwidth B/A 1.000 [0.980, "
            "1.020] (paired, 99.71 %)): no patch to blame.");
  EXPECT_EQ(bisect_exit_code(none.state), 0);
  EXPECT_EQ(bisect_exit_code(one_culprit().state), 1);
  none.steps[0].judgement.finding = StepFinding::unknown;
  none.state = bisect_state({4, 7}, answers_of(none.steps));
  EXPECT_EQ(bisect_exit_code(none.state), 4);
  EXPECT_EQ(bisect_sentence(none.report()).rfind("Whether the whole series is slower than the base could not be settled", 0), 0u);
}

TEST(BisectReport, TheHtmlLinksEveryStepsReportAndEscapesNames) {
  const std::string html = bisect_html(one_culprit().report(), load_html_template());
  for (int i = 1; i <= 4; ++i) {
    EXPECT_NE(html.find("href=\"steps/bisect-control-step" + std::to_string(i) + "-20261201T200000Z/report.html\""),
              std::string::npos) << i;
  }
  EXPECT_NE(html.find("0003-bounce &lt;every&gt; request.patch"), std::string::npos);
  EXPECT_EQ(html.find("<every>"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// jsonschema's Draft 2020-12 validator, as report_schema_plots_test does it.
std::string validate(const json& j) {
  const test::ReportTempDir tmp;
  write_file_atomic(tmp / "bisect.json", j.dump());
  const auto r = run_process({"/usr/bin/python3", "-c",
                              "import json, sys, jsonschema\n"
                              "schema = json.load(open(sys.argv[1]))\n"
                              "jsonschema.Draft202012Validator.check_schema(schema)\n"
                              "errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors("
                              "json.load(open(sys.argv[2]))), key=str)\n"
                              "print('\\n'.join(f'{list(e.absolute_path)}: {e.message}' for e in errors))\n"
                              "sys.exit(1 if errors else 0)\n",
                              std::string(ABVM_SOURCE_DIR) + "/report/bisect_schema.json", (tmp / "bisect.json").string()});
  return r.exit_code == 0 ? "" : r.out + r.err;
}

TEST(BisectReport, TheSchemaTakesWhatIsWrittenAndRefusesWhatIsNot) {
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh installs it)");
  }
  EXPECT_EQ(validate(bisect_json(one_culprit().report())), "");
  EXPECT_EQ(validate(bisect_json(with_a_range().report())), "");
  Case running = one_culprit();
  running.steps.resize(2);
  running.state = bisect_state({4, 7}, answers_of(running.steps));
  EXPECT_EQ(validate(bisect_json(running.report())), "");
  json bad = bisect_json(one_culprit().report());
  bad["steps"][0]["finding"] = "slow";
  EXPECT_NE(validate(bad), "");
  bad = bisect_json(one_culprit().report());
  bad.erase("culprits");
  EXPECT_NE(validate(bad), "");
}

}  // namespace
}  // namespace abvm
