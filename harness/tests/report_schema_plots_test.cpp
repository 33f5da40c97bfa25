// report/schema.json validates the JSON reports abvm produces (python3-jsonschema as the
// independent validator), and report/plot.py makes every plot from the JSON alone, or says why not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "environment_skip.hpp"
#include "core/process.hpp"
#include "report/json_report.hpp"
#include "report_model_support.hpp"
#include "report/plots.hpp"
#include "report_test_support.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

using namespace abvm;
using namespace abvm::test;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

const std::string kSchema = std::string(ABVM_SOURCE_DIR) + "/report/schema.json";

json seed_report() {
  const SampleSet s = load_side_files({report_data("seed/dd-without-patches.txt")},
                                      {report_data("seed/dd-with-patches.txt")}, {});
  return json_report(analyze(s, {}), {.kind = "files", .a = {"a.txt"}, .b = {"b.txt"}});
}

json demo_report() {
  const SampleSet s = load_results_dir(report_data("report/results-demo"));
  return json_report(analyze(s, {}), {.kind = "results", .results_dir = "results-demo"});
}

// Validates with jsonschema's Draft 2020-12 validator; "" when valid, else its message.
// The validator itself must be importable: callers skip otherwise.
const char* kValidate =
    "import json, sys, jsonschema\n"
    "schema = json.load(open(sys.argv[1]))\n"
    "jsonschema.Draft202012Validator.check_schema(schema)\n"
    "errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)\n"
    "print('\\n'.join(f'{list(e.absolute_path)}: {e.message}' for e in errors))\n"
    "sys.exit(1 if errors else 0)\n";

bool have_jsonschema() { return run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code == 0; }
bool have_matplotlib() { return run_process({"/usr/bin/python3", "-c", "import matplotlib"}).exit_code == 0; }

std::string validate(const json& report, const ReportTempDir& tmp) {
  const auto path = tmp / "report.json";
  write_file_atomic(path, report.dump());
  const auto r = run_process({"/usr/bin/python3", "-c", kValidate, kSchema, path.string()});
  return r.exit_code == 0 ? "" : r.out + r.err;
}

}  // namespace

TEST(ReportSchema, ProducedReportsAreValid) {
  if (!have_jsonschema()) ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh installs it)");
  ReportTempDir tmp;
  EXPECT_EQ(validate(seed_report(), tmp), "");
  EXPECT_EQ(validate(demo_report(), tmp), "");
}

TEST(ReportSchema, RejectsReportsMissingOrMistypingStableFields) {
  if (!have_jsonschema()) ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh installs it)");
  ReportTempDir tmp;
  json j = seed_report();
  j["metrics"][0].erase("verdict");
  EXPECT_THAT(validate(j, tmp), HasSubstr("'verdict' is a required property"));
  j = seed_report();
  j["verdict"] = "maybe";
  EXPECT_THAT(validate(j, tmp), HasSubstr("'maybe' is not one of"));
  j = seed_report();
  j["metrics"][0]["a"]["outliers"] = json::array({-1});
  EXPECT_THAT(validate(j, tmp), HasSubstr("less than the minimum of 0"));
  j = seed_report();
  j["schema_version"] = 2;
  EXPECT_NE(validate(j, tmp), "");
}

TEST(ReportPlots, MakesFourPngsPerMetricFromTheJson) {
  if (!have_matplotlib()) ABVM_SKIP_WITHOUT("python3-matplotlib is not installed (harness/setup.sh installs it)");
  PlotOptions o = default_plot_options();
  o.python = "/usr/bin/python3";
  const PlotSet set = make_plots(demo_report(), o);
  for (const auto& m : set.missing) ADD_FAILURE() << m.kind << ": " << m.reason;
  ASSERT_EQ(set.plots.size(), 8u);
  for (std::size_t i = 0; i < set.plots.size(); ++i) {
    const Plot& p = set.plots[i];
    EXPECT_EQ(p.metric, i / 4);
    EXPECT_EQ(p.kind, kPlotKinds[i % 4]);
    ASSERT_GT(p.png.size(), 5000u) << p.kind;  // a drawn figure, not an empty canvas
    EXPECT_EQ(p.png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    // IHDR: width and height, big-endian, at bytes 16..23: 640 x (some height) at 100 dpi.
    const auto be32 = [&](std::size_t at) {
      return (static_cast<unsigned char>(p.png[at]) << 24) | (static_cast<unsigned char>(p.png[at + 1]) << 16) |
             (static_cast<unsigned char>(p.png[at + 2]) << 8) | static_cast<unsigned char>(p.png[at + 3]);
    };
    EXPECT_EQ(be32(16), 640u) << p.kind;
    EXPECT_GT(be32(20), 100u) << p.kind;
  }
  EXPECT_THAT(set.plots[0].title, HasSubstr("lines join the runs of one boot"));
  EXPECT_THAT(set.plots[2].title, HasSubstr("Distributions"));
}

TEST(ReportPlots, WithoutMatplotlibEveryPlotIsMissingWithTheReason) {
  ReportTempDir tmp;
  // Python without site-packages: the standard library (json) is there, matplotlib is not.
  const auto python = tmp / "python-without-matplotlib";
  std::ofstream(python) << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  PlotOptions o = default_plot_options();
  o.python = python;
  const PlotSet set = make_plots(seed_report(), o);
  EXPECT_TRUE(set.plots.empty());
  ASSERT_EQ(set.missing.size(), 1u);
  EXPECT_FALSE(set.missing[0].metric.has_value());
  EXPECT_THAT(set.missing[0].reason, HasSubstr("matplotlib cannot be imported"));
  EXPECT_THAT(set.missing[0].reason, HasSubstr("install python3-matplotlib"));
}

TEST(ReportPlots, MissingInterpreterOrScriptIsAReasonNotAnError) {
  PlotOptions o = default_plot_options();
  o.python = "/nonexistent/python3";
  PlotSet set = make_plots(seed_report(), o);
  ASSERT_EQ(set.missing.size(), 1u);
  EXPECT_THAT(set.missing[0].reason, HasSubstr("/nonexistent/python3 does not exist"));
  o = default_plot_options();
  o.python = "/usr/bin/python3";
  o.script = "/nonexistent/plot.py";
  set = make_plots(seed_report(), o);
  ASSERT_EQ(set.missing.size(), 1u);
  EXPECT_THAT(set.missing[0].reason, HasSubstr("ABVM_PLOT_SCRIPT"));
}

TEST(ReportPlots, AScriptThatCrashesIsReportedWithItsStderr) {
  ReportTempDir tmp;
  const auto script = tmp / "crash.py";
  std::ofstream(script) << "import sys\nsys.stderr.write('boom: no such thing\\n')\nsys.exit(3)\n";
  PlotOptions o = default_plot_options();
  o.python = "/usr/bin/python3";
  o.script = script;
  const PlotSet set = make_plots(seed_report(), o);
  ASSERT_EQ(set.missing.size(), 1u);
  EXPECT_THAT(set.missing[0].reason, HasSubstr("exited with status 3: boom: no such thing"));
}

// An abvm killed while plotting leaves its temporary directory behind; the next make_plots
// removes those of dead processes, and only those (the host-fault test that kills abvm at random
// moments found the leftover).
TEST(ReportPlots, DirectoriesLeftByADeadAbvmAreRemovedOthersKept) {
  ReportTempDir tmp;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // its pid is now dead
  const auto dead = tmp / fmt::format("abvm-plots-{}-aB3xYz", child);
  const auto live = tmp / fmt::format("abvm-plots-{}-Qw9rTy", ::getpid());
  const auto foreign = tmp / "abvm-plots-notapid";
  const auto other = tmp / "something-else";
  for (const auto& d : {dead, live, foreign, other}) {
    std::filesystem::create_directories(d / "png");
    std::ofstream(d / "analysis.json") << "{}";
  }

  // Through make_plots, with TMPDIR pointing at our directory.
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  PlotOptions o = default_plot_options();
  o.python = "/usr/bin/python3";
  o.script = tmp / "crash.py";
  std::ofstream(o.script) << "import sys\nsys.exit(3)\n";
  const PlotSet set = make_plots(seed_report(), o);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1); else ::unsetenv("TMPDIR");

  EXPECT_EQ(set.missing.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dead)) << "a dead abvm's plot directory is left";
  EXPECT_TRUE(std::filesystem::exists(live / "analysis.json"));
  EXPECT_TRUE(std::filesystem::exists(foreign / "analysis.json"));
  EXPECT_TRUE(std::filesystem::exists(other / "analysis.json"));
  // make_plots removed its own directory too: only the three others are left.
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) n += e.is_directory();
  EXPECT_EQ(n, 3u);
}

namespace {

json co_scheduled_report() {
  AnalysisOptions options;
  options.paired_primary = true;
  options.max_start_skew_ms = 50;
  const SampleSet s = load_results_dir(report_data("report/results-co-scheduled"));
  return json_report(analyze(s, options), {.kind = "results", .results_dir = "results-co-scheduled",
                                           .design = "co-scheduled"});
}

}  // namespace

// A workload with no valid run on either side (issue 20): valid, and strict.
TEST(ReportSchema, AWorkloadWithoutDataIsValidAndChecked) {
  if (!have_jsonschema()) ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh installs it)");
  ReportTempDir tmp;
  SampleSet s = load_results_dir(report_data("report/results-demo"));
  s.missing = {{.workload = "dd-read", .runs_a = 2, .runs_b = 2, .first_failure = "dd: failed"}};
  const json good = json_report(analyze(s, {}), {.kind = "results", .results_dir = "results-demo"});
  ASSERT_EQ(good["missing"].size(), 1u);
  EXPECT_EQ(validate(good, tmp), "");
  json j = good;
  j["missing"][0].erase("first_failure");
  EXPECT_THAT(validate(j, tmp), HasSubstr("'first_failure' is a required property"));
  j = good;
  j["missing"][0]["runs"]["a"] = -1;
  EXPECT_THAT(validate(j, tmp), HasSubstr("less than the minimum of 0"));
  j = good;
  j.erase("missing");
  EXPECT_EQ(validate(j, tmp), "") << "reports of older abvm have none";
}

// The overlap per metric, the timing and overlap per run, the voided runs: valid, and strict.
TEST(ReportSchema, OverlapAndTimingAreValidAndChecked) {
  if (!have_jsonschema()) ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh installs it)");
  ReportTempDir tmp;
  const json good = co_scheduled_report();
  ASSERT_TRUE(good["metrics"][0].contains("overlap"));
  EXPECT_EQ(validate(good, tmp), "");
  json j = good;
  j["metrics"][0]["overlap"]["voided"] = -1;
  EXPECT_THAT(validate(j, tmp), HasSubstr("less than the minimum of 0"));
  j = good;
  j["metrics"][0]["overlap"].erase("pairs");
  EXPECT_THAT(validate(j, tmp), HasSubstr("'pairs' is a required property"));
  j = good;
  j["metrics"][0]["a"]["runs"][0]["overlap"] = 1.5;
  EXPECT_THAT(validate(j, tmp), HasSubstr("1.5 is greater than the maximum of 1"));
  j = good;
  j["metrics"][0]["a"]["voided_runs"][0]["timing"].erase("load_end");
  EXPECT_THAT(validate(j, tmp), HasSubstr("'load_end' is a required property"));
  j = good;
  j["source"]["design"] = "lockstep";
  EXPECT_EQ(validate(j, tmp), "") << "every design is a valid source";
}

// A metric whose runs carry their timing gets a fifth plot: its blocks on the host's clock, A above
// B; with more than three blocks, the first one and the one with the worst overlap (dd: block 2, at
// 0.62). The other metrics' kinds are unchanged.
TEST(ReportPlots, TimelineOfTheFirstAndTheWorstBlockWhenRunsCarryTheirTiming) {
  if (!have_matplotlib()) ABVM_SKIP_WITHOUT("python3-matplotlib is not installed (harness/setup.sh installs it)");
  const json report = co_scheduled_report();
  EXPECT_EQ(expected_plot_kinds(report["metrics"][0]),
            (std::vector<std::string>{"runs", "order", "distribution", "effect", "timeline"}));
  EXPECT_EQ(expected_plot_kinds(demo_report()["metrics"][0]).size(), 4u);
  PlotOptions o = default_plot_options();
  o.python = "/usr/bin/python3";
  const PlotSet set = make_plots(report, o);
  for (const auto& m : set.missing) ADD_FAILURE() << m.kind << ": " << m.reason;
  ASSERT_EQ(set.plots.size(), 10u);
  const Plot& timeline = set.plots[4];
  EXPECT_EQ(timeline.metric, 0u);
  EXPECT_EQ(timeline.kind, "timeline");
  EXPECT_EQ(timeline.title, "A's and B's runs on the host's clock (blocks 0, 2)");
  ASSERT_GT(timeline.png.size(), 5000u);
  EXPECT_EQ(timeline.png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(set.plots[9].kind, "timeline");

  // A plot.py that draws no timeline: the report says it is missing, with the reason.
  ReportTempDir tmp;
  const auto script = tmp / "no-timeline.py";
  std::ofstream(script) << "import json, os, sys\n"
                           "os.makedirs(sys.argv[2])\n"
                           "plots = []\n"
                           "for i in range(2):\n"
                           "    for kind in ('runs', 'order', 'distribution', 'effect'):\n"
                           "        name = f'm{i}-{kind}.png'\n"
                           "        open(os.path.join(sys.argv[2], name), 'wb').write(b'png')\n"
                           "        plots.append({'metric': i, 'kind': kind, 'title': kind, 'file': name})\n"
                           "print(json.dumps({'plots': plots, 'missing': []}))\n";
  o.script = script;
  const PlotSet partial = make_plots(report, o);
  EXPECT_EQ(partial.plots.size(), 8u);
  ASSERT_EQ(partial.missing.size(), 2u);
  EXPECT_EQ(partial.missing[0].kind, "timeline");
  EXPECT_EQ(partial.missing[0].reason, "plot.py did not produce it");
}

// Issue 27: a cost metric gets a sixth plot, its runs against their throughput per side (the same run
// found by its order); one whose workload has no bandwidth metric says so instead. Valid by the schema,
// with "judged": false.
TEST(ReportPlots, ACostMetricIsPlottedAgainstItsWorkloadsThroughput) {
  if (!have_matplotlib()) ABVM_SKIP_WITHOUT("python3-matplotlib is not installed (harness/setup.sh installs it)");
  json report = demo_report();
  const std::string bandwidth = report["metrics"][0]["name"].get<std::string>();
  ASSERT_TRUE(bandwidth.ends_with(".bandwidth")) << bandwidth;
  json cost = report["metrics"][0];
  cost["name"] = bandwidth.substr(0, bandwidth.find('.')) + ".host_cpu_per_gib";
  cost["unit"] = "s/GiB";
  cost["better"] = "lower";
  cost["judged"] = false;
  json orphan = cost;
  orphan["name"] = "elsewhere.guest_cpu_per_gib";
  report["metrics"].push_back(cost);
  report["metrics"].push_back(orphan);
  EXPECT_EQ(expected_plot_kinds(cost), (std::vector<std::string>{"runs", "order", "distribution", "effect", "cost"}));
  if (have_jsonschema()) {
    ReportTempDir tmp;
    EXPECT_EQ(validate(report, tmp), "");
  }
  PlotOptions o = default_plot_options();
  o.python = "/usr/bin/python3";
  const PlotSet set = make_plots(report, o);
  const std::size_t at = report["metrics"].size() - 2;
  const auto plot = std::find_if(set.plots.begin(), set.plots.end(),
                                 [&](const Plot& p) { return p.metric == at && p.kind == "cost"; });
  ASSERT_NE(plot, set.plots.end());
  EXPECT_EQ(plot->title, "Cost against throughput, per side");
  EXPECT_GT(plot->png.size(), 5000u);
  ASSERT_EQ(set.missing.size(), 1u);
  EXPECT_EQ(set.missing[0].kind, "cost");
  EXPECT_THAT(set.missing[0].reason, HasSubstr("the report has no bandwidth metric of workload elsewhere"));
}
