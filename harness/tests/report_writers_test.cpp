// Golden and structural tests of the pure report writers: JSON (json_report), JUnit, HTML.
// Inputs are the seed (real dd output) and the results-demo fixture (a synthetic journal, see
// data/report/README.md). Goldens: data/report/*.golden.*; ABVM_UPDATE_GOLDEN=1 rewrites them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "core/error.hpp"
#include "core/process.hpp"
#include "report/html.hpp"
#include "report/json_report.hpp"
#include "report_model_support.hpp"
#include "report/junit.hpp"
#include "report/plots.hpp"
#include "report/terminal.hpp"
#include "report_test_support.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

using namespace abvm;
using namespace abvm::test;
using abvm::test::expect_golden;
using abvm::test::report_data;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

namespace {

// The tool version changes with every release; the goldens pin everything else.
json pinned(json j) {
  j["tool"]["version"] = "pinned";
  return j;
}

json seed_report() {
  const SampleSet s = load_side_files({report_data("seed/dd-without-patches.txt")},
                                      {report_data("seed/dd-with-patches.txt")}, {});
  ReportSource src{.kind = "files", .a = {"seed/dd-without-patches.txt"}, .b = {"seed/dd-with-patches.txt"}};
  return pinned(json_report(analyze(s, {}), src));
}

json demo_report() {
  const SampleSet s = load_results_dir(report_data("report/results-demo"));
  ReportSource src{.kind = "results", .results_dir = "results-demo", .a_label = "direct",
                   .b_label = "<script>alert(1)</script>"};
  return pinned(json_report(analyze(s, {}), src));
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A valid 1x1 PNG (made with zlib/struct in Python), to stand in for plot.py's output in pure-writer tests.
constexpr char kTinyPngBytes[] =
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52"
    "\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4"
    "\x89\x00\x00\x00\x0b\x49\x44\x41\x54\x78\x9c\x63\x60\x00\x02\x00"
    "\x00\x05\x00\x01\x7a\x5e\xab\x3f\x00\x00\x00\x00\x49\x45\x4e\x44"
    "\xae\x42\x60\x82";
const std::string kTinyPng(kTinyPngBytes, sizeof kTinyPngBytes - 1);

}  // namespace

// ---- JSON ----------------------------------------------------------------------------------

TEST(ReportJson, SeedMatchesGolden) { expect_golden(seed_report().dump(2) + "\n", "report/seed-analysis.golden.json"); }

TEST(ReportJson, ResultsDirKeepsBootsBlocksAndFailures) {
  const json j = demo_report();
  ASSERT_EQ(j["metrics"].size(), 2u);
  const json& dd = j["metrics"][0];
  EXPECT_EQ(dd["name"], "dd-write.bandwidth");
  EXPECT_EQ(dd["a"]["unit_kind"], "boot");
  EXPECT_EQ(dd["a"]["units"], 7);  // 8 boots, t0005 panicked
  EXPECT_EQ(dd["a"]["n"], 21);
  EXPECT_EQ(j["failed_runs"]["a"], 1);
  EXPECT_EQ(j["failures"][0]["source"], "trial t0005 run 0");
  EXPECT_FALSE(dd["a"]["runs"][0]["boot"].is_null());
  EXPECT_FALSE(dd["a"]["runs"][0]["block"].is_null());
}

// Issue 11 item 7: analysis.json listed every run (353 MB at 2 x 1M). It lists up to
// kMaxListedRuns per side, evenly spaced over the input order, each with its index, and says how
// many it left out.
TEST(ReportJson, RunsAreListedUpToALimitEvenlySpacedWithTheirIndex) {
  const std::size_t n = kMaxListedRuns + 3001;
  SampleSet s;
  MetricSamples m{.name = "m", .unit = "B/s", .better = Better::higher};
  for (std::size_t i = 0; i < n; ++i) {
    const double v = 1000 + static_cast<double>((i * 7919) % 1000);
    m.a.push_back({.value = v, .order = static_cast<std::int64_t>(2 * i)});
    m.b.push_back({.value = v * 0.9, .order = static_cast<std::int64_t>(2 * i + 1)});
  }
  s.metrics.push_back(std::move(m));
  const json j = json_report(analyze(s, {}), {.kind = "files"});
  const json& a = j["metrics"][0]["a"];
  ASSERT_EQ(a["runs"].size(), kMaxListedRuns);
  EXPECT_EQ(a["runs_omitted"], 3001);
  EXPECT_EQ(a["n"], n);
  EXPECT_EQ(a["runs"][0]["index"], 0);
  EXPECT_EQ(a["runs"][kMaxListedRuns - 1]["index"], n - 1);
  EXPECT_EQ(a["runs"][1]["order"], 2 * a["runs"][1]["index"].get<std::int64_t>());
  EXPECT_LT(j.dump(2).size(), 2'000'000u);
  // Below the limit every run is listed.
  const json seed = seed_report();
  EXPECT_EQ(seed["metrics"][0]["a"]["runs"].size(), seed["metrics"][0]["a"]["n"]);
  EXPECT_EQ(seed["metrics"][0]["a"]["runs_omitted"], 0);
  EXPECT_EQ(seed["metrics"][0]["a"]["runs"][3]["index"], 3);
}

// ---- JUnit ---------------------------------------------------------------------------------

TEST(ReportJunit, SeedMatchesGolden) { expect_golden(junit_report(seed_report()), "report/seed-junit.golden.xml"); }

TEST(ReportJunit, ResultsDemoMatchesGolden) {
  expect_golden(junit_report(demo_report(), {.suite = "demo-report"}), "report/results-demo-junit.golden.xml");
}

TEST(ReportJunit, OneCasePerMetricFailureOnRegressionSkippedOnInconclusive) {
  json j = seed_report();
  json regress = j["metrics"][0], inconclusive = j["metrics"][0], same = j["metrics"][0];
  regress["name"] = "m.regress";
  regress["verdict"] = "regression";
  inconclusive["name"] = "m.unsure";
  inconclusive["runs_needed"] = 42;
  same["name"] = "m.same";
  same["verdict"] = "no_change";
  j["metrics"] = json::array({regress, inconclusive, same});
  const std::string x = junit_report(j, {.suite = "nightly"});
  EXPECT_THAT(x, HasSubstr("<testsuites name=\"abvm\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"0\">"));
  EXPECT_THAT(x, HasSubstr("<testsuite name=\"nightly\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  EXPECT_EQ(count(x, "<testcase "), 3);
  EXPECT_EQ(count(x, "<failure "), 1);
  EXPECT_EQ(count(x, "<skipped "), 1);
  // The failure sits in the regression's case, the skip (with runs needed) in the inconclusive one.
  EXPECT_TRUE(std::regex_search(x, std::regex("name=\"m.regress\" time=\"0\">\\s*<failure type=\"regression\"")));
  EXPECT_TRUE(std::regex_search(
      x, std::regex("name=\"m.unsure\" time=\"0\">\\s*<skipped message=\"[^\"]*about 42 runs per side would likely")));
  EXPECT_TRUE(std::regex_search(x, std::regex("name=\"m.same\" time=\"0\">\\s*<system-out>")));
}

TEST(ReportJunit, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(xml_text("a<b>&\"c'\x01\x1b[0m\td\n\xff."), "a<b>&\"c'[0m\td\n\xEF\xBF\xBD.");
  json j = seed_report();
  j["metrics"][0]["name"] = "<evil attr=\"x\">&";
  // Guest output reaches JUnit in a failed run's description.
  j["failures"] = json::array({{{"side", "A"}, {"outcome", "panic"}, {"what", "console said \x07<panic> \xc3("},
                                {"source", "t0001"}}});
  const std::string x = junit_report(j);
  EXPECT_THAT(x, HasSubstr("name=\"&lt;evil attr=&quot;x&quot;>&amp;\""));  // ">" may stay in attributes
  EXPECT_THAT(x, HasSubstr("console said &lt;panic&gt; \xEF\xBF\xBD("));
  EXPECT_THAT(x, Not(HasSubstr("<evil")));
  EXPECT_THAT(x, Not(HasSubstr("\x07")));
}

// What CI systems read: every JUnit document abvm writes (pass, failure, skip, hostile text) is
// valid against the Ant/Jenkins JUnit schema (data/report/junit.xsd names its public source).
TEST(ReportJunit, ValidAgainstTheJunitSchema) {
  json mixed = seed_report();
  json regress = mixed["metrics"][0], same = mixed["metrics"][0];
  regress["name"] = "m.regress <&>";
  regress["verdict"] = "regression";
  same["name"] = "m.same";
  same["verdict"] = "no_change";
  mixed["metrics"] = json::array({regress, mixed["metrics"][0], same});
  mixed["warnings"] = json::array({"console said \x07<panic> \xc3("});
  const std::vector<std::pair<std::string, std::string>> documents = {
      {"seed", junit_report(seed_report())},
      {"demo", junit_report(demo_report(), {.suite = "demo-report"})},
      {"mixed", junit_report(mixed, {.suite = "nightly \"1\""})}};
  const std::string xsd = report_data("report/junit.xsd").string();
  for (const auto& [what, xml] : documents) {
    const auto r = abvm::run_process({"xmllint", "--noout", "--schema", xsd, "-"}, {.stdin_data = xml});
    EXPECT_EQ(r.exit_code, 0) << what << " (xmllint from libxml2-utils, harness/setup.sh installs it):\n"
                              << r.err << "\n"
                              << xml;
  }
}

// ---- A workload with no valid run on either side (issue 20) ----------------------------------

// The demo's analysis with a read workload every run of which failed, as load_journal_samples
// records it: the verdict is inconclusive, and every reporter names the workload.
Analysis demo_with_a_broken_read() {
  SampleSet s = load_results_dir(report_data("report/results-demo"));
  s.missing = {{.workload = "dd-read", .runs_a = 6, .runs_b = 6,
                .first_failure = "dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: "
                                 "dd: failed to open '/dev/null': Invalid argument"}};
  return analyze(s, {});
}

TEST(ReportMissing, JsonNamesTheWorkloadItsRunsAndItsFirstFailure) {
  const json j = json_report(demo_with_a_broken_read(), {.kind = "results", .results_dir = "r"});
  EXPECT_EQ(j["verdict"], "inconclusive");
  ASSERT_EQ(j["missing"].size(), 1u);
  EXPECT_EQ(j["missing"][0], json::parse(R"({"workload": "dd-read", "metrics": [], "runs": {"a": 6, "b": 6},
      "first_failure": "dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: dd: failed to open '/dev/null': Invalid argument",
      "reported": []})"));
  EXPECT_THAT(j["warnings"].back().get<std::string>(), HasSubstr("Workload dd-read has no valid run on either side"));
  // Read back as the HTML report reads it; absent in reports of older abvm.
  const ReportModel r = read_report_data(j, {.file = "analysis.json", .advice = "regenerate it"});
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0].runs_b, 6u);
  EXPECT_TRUE(read_report_data(demo_report(), {.file = "analysis.json", .advice = "x"}).missing.empty());
  json damaged = j;
  damaged["missing"][0].erase("runs");
  try {
    read_report_data(damaged, {.file = "analysis.json", .advice = "regenerate it"});
    ADD_FAILURE() << "a damaged entry was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "analysis.json: field \"missing[0].runs\" is missing (an object); regenerate it");
  }
}

TEST(ReportMissing, TerminalShowsTheWorkloadFirstAndTheVerdictInconclusive) {
  const std::string t = terminal_report(demo_with_a_broken_read(), {.a_label = "A", .b_label = "B"});
  EXPECT_THAT(t, HasSubstr("\ndd-read: no valid run on either side (every run failed: 6 on A, 6 on B): inconclusive\n"
                           "  first failure: dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with "
                           "status 1: dd: failed to open '/dev/null': Invalid argument\n"));
  EXPECT_LT(t.find("dd-read: no valid run"), t.find("dd-write.bandwidth")) << "before the metrics";
  EXPECT_THAT(t, HasSubstr("warning: Workload dd-read has no valid run on either side"));
  EXPECT_TRUE(t.ends_with("\nverdict: inconclusive\n")) << t;
}

// A CI job must not pass on a question it never measured: the workload is a failing test case.
TEST(ReportMissing, JunitHasAFailingCaseForTheWorkload) {
  const std::string x = junit_report(json_report(demo_with_a_broken_read(), {.kind = "results", .results_dir = "r"}),
                                     {.suite = "nightly"});
  // The demo's two metrics are regressions; the overall verdict is still inconclusive.
  EXPECT_THAT(x, HasSubstr("<testsuite name=\"nightly\" tests=\"3\" failures=\"3\""));
  EXPECT_THAT(x, HasSubstr("<property name=\"verdict\" value=\"inconclusive\" />"));
  EXPECT_TRUE(std::regex_search(
      x, std::regex("<testcase classname=\"nightly\" name=\"dd-read\" time=\"0\">\\s*<failure type=\"no-data\" "
                    "message=\"dd-read: no valid run on either side \\(every run failed: 6 on A, 6 on B\\): "
                    "inconclusive\">first failure: dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited "
                    "with status 1: dd: failed to open '/dev/null': Invalid argument")))
      << x;
  const auto r = abvm::run_process({"xmllint", "--noout", "--schema", report_data("report/junit.xsd").string(), "-"},
                                   {.stdin_data = x});
  EXPECT_EQ(r.exit_code, 0) << r.err << x;
}

TEST(ReportMissing, HtmlNamesTheWorkloadFirstInTheVerdict) {
  HtmlInputs in;
  in.report = read_report_data(json_report(demo_with_a_broken_read(), {.kind = "results", .results_dir = "r"}),
                               {.file = "analysis.json", .advice = "regenerate it"});
  in.template_html = load_html_template();
  in.context.title = "broken";
  const std::string h = html_report(in);
  EXPECT_THAT(h, HasSubstr("Verdict: <strong>inconclusive"));
  EXPECT_THAT(h, HasSubstr("<ul class=\"headlines\">\n<li class=\"decides missing\">dd-read: no valid run on either "
                           "side (every run failed: 6 on A, 6 on B): inconclusive<br><span class=\"first-failure\">First "
                           "failure: dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: "
                           "dd: failed to open &#39;/dev/null&#39;: Invalid argument</span></li>\n"));
}

// ---- HTML ----------------------------------------------------------------------------------

TEST(ReportHtml, EscapesEveryEntity) {
  EXPECT_EQ(html_escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
}

TEST(ReportHtml, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(ReportWording, TheSentenceSaysHowMuchSlowerWithTheIntervalAndTheVerdict) {
  ReportMetric m{.name = "dd write bandwidth", .unit = "B/s", .better = Better::higher, .verdict = Verdict::regression,
                 .effect = {.estimate = 0.951, .low = 0.924, .high = 0.979, .confidence = 0.95}};
  EXPECT_EQ(headline(m, "B", 0.05),
            "B is 4.9 % slower than A in dd write bandwidth (95 % CI 2.1 to 7.6 % slower): regression");
  m.effect = {.estimate = 1.02, .low = 0.97, .high = 1.06, .confidence = 0.975};
  m.verdict = Verdict::inconclusive;
  EXPECT_EQ(headline(m, "dma", 0.05), "dma (B) is 2.0 % faster than A in dd write bandwidth (97.5 % CI from 3.0 % "
                                      "slower to 6.0 % faster): inconclusive");
  // Paired, with what would settle it.
  m.primary_estimate = Estimate::paired;
  m.runs_needed = 30;
  EXPECT_EQ(headline(m, "dma", 0.05), "dma (B) is 2.0 % faster than A in dd write bandwidth (paired, 97.5 % CI from "
                                      "3.0 % slower to 6.0 % faster): inconclusive; about 30 A/B blocks would likely "
                                      "settle it");
  // Latency: a higher ratio is slower.
  m = {.name = "clat", .unit = "ns", .better = Better::lower, .verdict = Verdict::regression,
       .effect = {.estimate = 1.10, .low = 1.05, .high = 1.20, .confidence = 0.95}};
  EXPECT_EQ(headline(m, "B", 0.05), "B is 10.0 % slower than A in clat (95 % CI 5.0 to 20.0 % slower): regression");
}

// A reader of the verdict word alone sees the significant shift behind a no_change or an inconclusive
// (issue 20), in the one sentence every output shows.
TEST(ReportWording, ASignificantShiftInsideTheMarginIsSaidWithTheVerdict) {
  ReportMetric m{.name = "bw", .unit = "B/s", .better = Better::higher, .verdict = Verdict::no_change,
                 .effect = {.estimate = 0.98, .low = 0.965, .high = 0.995, .confidence = 0.95}};
  EXPECT_EQ(headline(m, "B", 0.05),
            "B is 2.0 % slower than A in bw (95 % CI 0.5 to 3.5 % slower): no_change (a significant shift, inside "
            "the ±5.0 % margin)");
  // Latency, inconclusive: significant, estimated inside the margin, interval past it.
  m = {.name = "clat", .unit = "ns", .better = Better::lower, .verdict = Verdict::inconclusive,
       .effect = {.estimate = 1.03, .low = 1.01, .high = 1.07, .confidence = 0.95}};
  EXPECT_EQ(headline(m, "B", 0.05),
            "B is 3.0 % slower than A in clat (95 % CI 1.0 to 7.0 % slower): inconclusive (a significant shift, "
            "estimated inside the ±5.0 % margin; its interval reaches past it)");
  // Not significant, or a margin the estimate is beyond: the verdict alone.
  m.effect.low = 0.99;
  EXPECT_EQ(headline(m, "B", 0.05).find("significant"), std::string::npos);
  m.effect.low = 1.01;
  EXPECT_EQ(headline(m, "B", 0.02).find("significant"), std::string::npos);
}

TEST(ReportTerminal, ASignificantShiftInsideTheMarginIsSaidInTheSentenceAndTheVerdict) {
  Analysis a;
  a.options.margin = 0.05;
  MetricAnalysis m;
  m.name = "dd-write.bandwidth";
  m.unit = "B/s";
  m.verdict = Verdict::no_change;
  m.effect = {.estimate = 0.98, .low = 0.965, .high = 0.995, .confidence = 0.95};
  a.metrics = {m};
  m.name = "fio.bandwidth";
  m.effect = {.estimate = 1.0, .low = 0.98, .high = 1.02, .confidence = 0.95};
  a.metrics.push_back(m);
  a.verdict = Verdict::no_change;
  const std::string text = terminal_report(a);
  EXPECT_THAT(text, HasSubstr("\n  B is 2.0 % slower than A in dd-write.bandwidth (95 % CI 0.5 to 3.5 % slower): "
                              "no_change (a significant shift, inside the ±5.0 % margin)\n"));
  EXPECT_THAT(text, HasSubstr("\nverdict: no_change (dd-write.bandwidth: a significant shift, inside the ±5.0 % "
                              "margin)\n"));
  a.metrics.erase(a.metrics.begin());
  EXPECT_THAT(terminal_report(a), HasSubstr("\nverdict: no_change\n"));
}

// The terminal says what the sentence's blocks would take at the run's pace, after the sentence
// (which every output shows alike, so without what only the run knows).
TEST(ReportTerminal, TheBlocksThatWouldSettleItComeWithTheirTimeAtThisRunsPace) {
  ReportModel r{.verdict = Verdict::inconclusive, .margin = 0.05};
  r.metrics = {{.name = "bw", .unit = "B/s", .better = Better::higher, .verdict = Verdict::inconclusive,
                .effect = {.estimate = 0.97, .low = 0.9, .high = 1.04, .confidence = 0.95},
                .primary_estimate = Estimate::paired, .runs_needed = 30}};
  const std::string sentence = abvm::headline(r.metrics[0], r);
  EXPECT_THAT(sentence, HasSubstr("; about 30 A/B blocks would likely settle it"));
  EXPECT_THAT(terminal_report(r, {.seconds_per_block = 24}),
              HasSubstr("\n  " + sentence + "\n  30 blocks at this run's pace (~12 min)\n"));
  EXPECT_THAT(terminal_report(r), HasSubstr("\n  " + sentence + "\n"));
  EXPECT_THAT(terminal_report(r), Not(HasSubstr("this run's pace")));
  // Runs that are not boots are not blocks: no time for them.
  r.metrics[0].primary_estimate = Estimate::unpaired;
  EXPECT_THAT(terminal_report(r, {.seconds_per_block = 24}), Not(HasSubstr("this run's pace")));
}

class ReportHtmlDemo : public ::testing::Test {
 protected:
  void SetUp() override {
    in_.report = read_report_data(demo_report(), {.file = "analysis.json", .advice = "regenerate it"});
    in_.template_html = load_html_template();
    in_.context.title = "demo-report";
    in_.context.description = "a <b>bold</b> & risky description";
    in_.context.sides = {{.letter = "A", .label = "direct", .settings = {{"kernel", "debian-cloud"}, {"device.iommu_platform", "false"}}},
                 {.letter = "B", .label = "<script>alert(1)</script>",
                  .settings = {{"kernel", "debian-cloud"}, {"device.iommu_platform", "true"}}}};
    in_.context.environment = read_host_environment(json::parse(read_file(report_data("report/results-demo/environment.json"))),
                                            {.file = "environment.json", .advice = "restore it"});
    in_.failures = failures_from_report(in_.report);
    in_.failures[0].console_log = "trials/t0005/console.log";
    for (std::size_t m = 0; m < 2; ++m) {
      for (const char* kind : kPlotKinds) in_.plots.plots.push_back({m, kind, std::string("title <") + kind + ">", kTinyPng});
    }
  }
  HtmlInputs in_;
};

TEST_F(ReportHtmlDemo, HasTheVerdictSidesHostMetricsPlotsAndFailures) {
  const std::string h = html_report(in_);
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(h, HasSubstr("<title>abvm: demo-report</title>"));
  EXPECT_THAT(h, HasSubstr("id=\"verdict\""));
  EXPECT_THAT(h, HasSubstr(std::string("Verdict: <strong>") + to_string(in_.report.verdict)));
  EXPECT_EQ(count(h, "<section class=\"metric\""), 2);
  EXPECT_THAT(h, HasSubstr("id=\"metric-0\""));
  EXPECT_THAT(h, HasSubstr("id=\"metric-1\""));
  // The two sides with what differs highlighted.
  EXPECT_THAT(h, HasSubstr("<tr class=\"differs\"><th>device.iommu_platform</th>"));
  EXPECT_THAT(h, HasSubstr("What differs: device.iommu_platform."));
  EXPECT_THAT(h, Not(HasSubstr("<tr class=\"differs\"><th>kernel</th>")));
  // Host, accelerator and the TCG warning.
  EXPECT_THAT(h, HasSubstr("Intel(R) Xeon(R) CPU @ 2.20GHz"));
  EXPECT_THAT(h, HasSubstr("class=\"warning tcg\""));
  // Eight plots, embedded.
  EXPECT_EQ(count(h, "<img src=\"data:image/png;base64," + base64_encode(kTinyPng) + "\""), 8);
  EXPECT_THAT(h, Not(HasSubstr("Plots missing")));
  // The failed trial with its console log.
  EXPECT_THAT(h, HasSubstr("<a href=\"trials/t0005/console.log\">console.log</a>"));
  EXPECT_THAT(h, HasSubstr("panic"));
  // No network, no script.
  EXPECT_THAT(h, Not(HasSubstr("http://")));
  EXPECT_THAT(h, Not(HasSubstr("https://")));
  EXPECT_THAT(h, Not(HasSubstr("<script")));
}

// Issue 27: a cost metric not named in [analysis] metrics is reported everywhere a metric is, and
// says so, and its own verdict (here a regression) is no part of the experiment's: no JUnit failure.
TEST_F(ReportHtmlDemo, ACostMetricNotJudgedIsShownEverywhereAndFailsNothing) {
  json j = demo_report();
  json judged = j["metrics"][0];
  judged["verdict"] = "no_change";
  json cost = judged;
  const std::string workload = judged["name"].get<std::string>().substr(0, judged["name"].get<std::string>().find('.'));
  cost["name"] = workload + ".host_cpu_per_gib";
  cost["unit"] = "s/GiB";
  cost["better"] = "lower";
  cost["judged"] = false;
  cost["verdict"] = "regression";
  j["metrics"] = json::array({judged, cost});
  j["verdict"] = "no_change";
  const ReportModel model = read_model(j);
  ASSERT_FALSE(model.metrics[1].judged);

  const std::string terminal = abvm::terminal_report(model);
  const auto at = terminal.find("\n" + workload + ".host_cpu_per_gib (s/GiB, lower is better)\n  " + kNotJudgedWords);
  EXPECT_NE(at, std::string::npos) << terminal;
  EXPECT_EQ(count(terminal, kNotJudgedWords), 1) << terminal;

  const std::string junit = abvm::junit_report(model, {.suite = "nightly"});
  EXPECT_THAT(junit, HasSubstr("tests=\"2\" failures=\"0\""));
  EXPECT_EQ(count(junit, "<failure "), 0) << junit;
  EXPECT_TRUE(std::regex_search(junit, std::regex("name=\"" + workload + "\\.host_cpu_per_gib\" time=\"0\">\\s*"
                                                  "<system-out>[^<]*" + std::string(kNotJudgedWords).substr(0, 20))))
      << junit;

  in_.report = model;
  const std::string h = html_report(in_);
  EXPECT_EQ(count(h, "<section class=\"metric\""), 2);
  const auto section = h.find("id=\"metric-1\"");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(h.find(html_escape(kNotJudgedWords), section), std::string::npos);
  EXPECT_EQ(h.find(html_escape(kNotJudgedWords)), h.find(html_escape(kNotJudgedWords), section));
  EXPECT_THAT(h, HasSubstr(std::string("Verdict: <strong>no_change")));
}

// What differs first, then what is set, and the keys no side sets folded into one line.
TEST_F(ReportHtmlDemo, TheSidesTableShowsWhatDiffersFirstAndFoldsWhatNoSideSets) {
  for (auto& side : in_.context.sides) {
    side.settings = {{"kernel", "debian-cloud"},
                     {"device.queues", "unset"},
                     {"device.iotune.read_bytes_sec", "unset"},
                     {"device.iommu_platform", side.letter == "A" ? "false" : "true"},
                     {"device.iotune.total_iops_sec", side.letter == "A" ? "unset" : "194"}};
  }
  in_.context.sides[0].settings.push_back({"guest.vcpus", "1"});  // B does not record it: "(default)" there
  const std::string h = html_report(in_);
  const auto at = [&](const std::string& row) { return h.find(row); };
  const auto iommu = at("<tr class=\"differs\"><th>device.iommu_platform</th>");
  const auto iops = at("<tr class=\"differs\"><th>device.iotune.total_iops_sec</th><td>unset</td><td>194</td>");
  const auto vcpus = at("<tr class=\"differs\"><th>guest.vcpus</th><td>1</td><td>(default)</td>");
  const auto kernel = at("<tr><th>kernel</th>");
  const auto folded = at("<tr class=\"unset\"><th>unset on every side (2)</th><td colspan=\"2\">device.queues, "
                         "device.iotune.read_bytes_sec</td></tr>");
  for (auto p : {iommu, iops, vcpus, kernel, folded}) ASSERT_NE(p, std::string::npos) << h.substr(at("<section class=\"sides\">"), 2000);
  EXPECT_LT(iommu, kernel);
  EXPECT_LT(iops, kernel);
  EXPECT_LT(vcpus, kernel);
  EXPECT_LT(kernel, folded);
  EXPECT_THAT(h, Not(HasSubstr("<th>device.queues</th>")));
  EXPECT_THAT(h, HasSubstr("What differs: device.iommu_platform, device.iotune.total_iops_sec, guest.vcpus."));
}

TEST_F(ReportHtmlDemo, EveryOutsideStringIsEscaped) {
  const std::string h = html_report(in_);
  EXPECT_THAT(h, Not(HasSubstr("<script>")));
  EXPECT_THAT(h, Not(HasSubstr("<b>bold</b>")));
  EXPECT_THAT(h, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; (B)"));
  EXPECT_THAT(h, HasSubstr("a &lt;b&gt;bold&lt;/b&gt; &amp; risky description"));
  EXPECT_THAT(h, HasSubstr("Unable to mount root fs &lt;vda&gt; &amp; more"));
  EXPECT_THAT(h, HasSubstr("title &lt;runs&gt;"));
}

TEST_F(ReportHtmlDemo, SaysWhichPlotsAreMissingAndWhy) {
  in_.plots = {};
  in_.plots.missing.push_back({std::nullopt, "all", "matplotlib cannot be imported <here>"});
  std::string h = html_report(in_);
  EXPECT_THAT(h, HasSubstr("No plots: matplotlib cannot be imported &lt;here&gt;"));
  EXPECT_EQ(count(h, "<img "), 0);
  in_.plots.missing = {{1, "effect", "plot.py failed: ValueError"}};
  h = html_report(in_);
  EXPECT_THAT(h, HasSubstr("Plots missing:"));
  EXPECT_THAT(h, HasSubstr("effect (effect with its interval against the margin): plot.py failed: ValueError"));
}

// abvm nightly names a night's culprit in the night's report once its bisection has ended: one
// section after the verdict, written again in place, every outside string escaped.
TEST_F(ReportHtmlDemo, ABisectionSectionGoesAfterTheVerdictOnceAndIsEscaped) {
  const std::string c1(40, 'c'), c2(40, 'd');
  ReportBisection b{.outcome = "culprits", .end = "searched", .culprits = {{{.commit = c1, .subject = "bounce <every> io"}}},
                    .steps = 3, .boots_per_side = 33, .href = "../../bisect/x/bisect.html"};
  const std::string once = with_bisection_section(html_report(in_), b);
  EXPECT_EQ(count(once, "id=\"bisection\""), 1);
  EXPECT_LT(once.find("id=\"verdict\""), once.find("id=\"bisection\""));
  EXPECT_LT(once.find("id=\"bisection\""), once.find("<section class=\"sides\""));
  EXPECT_THAT(once, HasSubstr("names the commit that made it:"));
  EXPECT_THAT(once, HasSubstr("<li class=\"culprit\"><code title=\"" + c1 + "\">cccccccccccc</code> bounce &lt;every&gt; io</li>"));
  EXPECT_THAT(once, HasSubstr("3 steps, 33 boots per side: <a href=\"../../bisect/x/bisect.html\">"));
  b = {.outcome = "stopped", .end = "wall time (3h spent)",
       .culprits = {{{.commit = c1, .subject = "one"}, {.commit = c2, .subject = "two"}}}, .href = "b.html"};
  const std::string twice = with_bisection_section(once, b);
  EXPECT_EQ(count(twice, "id=\"bisection\""), 1) << "written again in place";
  EXPECT_THAT(twice, Not(HasSubstr("bounce")));
  EXPECT_THAT(twice, HasSubstr("ended before naming one commit (stopped: wall time (3h spent))"));
  EXPECT_THAT(twice, HasSubstr("one of these 2 commits"));
  EXPECT_THAT(twice, HasSubstr("<code title=\"" + c2 + "\">dddddddddddd</code> two"));
  EXPECT_EQ(twice, with_bisection_section(html_report(in_), b)) << "nothing of the first section is left";
  b = {.outcome = "no-regression", .end = "searched", .href = "b.html"};
  EXPECT_THAT(with_bisection_section(once, b), HasSubstr("named no commit (no-regression: searched)"));
  EXPECT_THROW(with_bisection_section("<html><body></body></html>", b), Error);
}

TEST_F(ReportHtmlDemo, TemplateWithoutPlaceholderIsAnError) {
  in_.template_html = "<html>{{body}}</html>";
  EXPECT_THROW(html_report(in_), Error);
}

// ---- overlap of A's and B's runs (co-scheduled) ---------------------------------------------
// The results-co-scheduled fixture (data/report/README.md): dd-write.bandwidth has 24 pairs, two of
// them drifted apart to 0.62 (block 2 run 1) and 0.9 (block 5 run 0), every other one at 0.9969-0.9992,
// median 0.997; fio-seqwrite.write.clat_mean 8 pairs at 0.997. Figures read off the journal, not
// off abvm's output.

namespace {

Analysis co_scheduled_analysis() {
  AnalysisOptions options;
  options.paired_primary = true;
  options.max_start_skew_ms = 50;
  return analyze(load_results_dir(report_data("report/results-co-scheduled")), options);
}

json co_scheduled_report() {
  return pinned(json_report(co_scheduled_analysis(),
                            {.kind = "results", .results_dir = "results-co-scheduled", .a_label = "direct",
                             .b_label = "dma-api", .design = "co-scheduled"}));
}

}  // namespace

TEST(ReportJson, OverlapPerMetricAndTimingPerRun) {
  const json j = co_scheduled_report();
  const json& dd = j["metrics"][0];
  ASSERT_EQ(dd["name"], "dd-write.bandwidth");
  // The two drifted pairs started 371 and 100 ms apart (B after A; every other pair 3 ms), with
  // clock errors of 0.5 ms: both beyond 50 ms. Read off the journal with Python:
  // sorted(abs(A.start - B.start)) per (block, run).
  const json& o = dd["overlap"];
  EXPECT_EQ(o.size(), 7u) << o.dump();
  EXPECT_EQ(o["pairs"], 24);
  EXPECT_EQ(o["min"], 0.62);
  EXPECT_EQ(o["median"], 0.997);
  EXPECT_EQ(o["voided"], 2);
  EXPECT_EQ(o["max_start_skew_ms"], 50.0);
  EXPECT_NEAR(o["start_skew_median_ms"].get<double>(), 3.0, 1e-4);
  EXPECT_NEAR(o["start_skew_max_ms"].get<double>(), 371.192, 1e-3);
  EXPECT_FALSE(o.contains("threshold")) << "the old overlap rule is gone";
  // Beside the decided estimate, the one over every pair (here: 24 pairs, the decided one 22).
  ASSERT_TRUE(dd["all_pairs_effect"].is_object());
  EXPECT_NE(dd["all_pairs_effect"]["estimate"], dd["effect"]["estimate"]);
  EXPECT_EQ(j["metrics"][1]["all_pairs_effect"], j["metrics"][1]["effect"]) << "nothing of fio left out";
  // 8 boots x 3 runs per side, 2 runs of each side left out and listed apart.
  EXPECT_EQ(dd["a"]["n"], 22);
  EXPECT_EQ(dd["a"]["runs"].size(), 22u);
  ASSERT_EQ(dd["a"]["voided_runs"].size(), 2u);
  ASSERT_EQ(dd["b"]["voided_runs"].size(), 2u);
  EXPECT_EQ(dd["a"]["voided_runs"][0]["block"], 2);
  EXPECT_EQ(dd["a"]["voided_runs"][0]["run_in_boot"], 1);
  EXPECT_EQ(dd["a"]["voided_runs"][0]["overlap"], 0.62);
  EXPECT_EQ(dd["b"]["voided_runs"][1]["block"], 5);
  EXPECT_EQ(dd["b"]["voided_runs"][1]["overlap"], 0.9);
  EXPECT_TRUE(std::any_of(dd["warnings"].begin(), dd["warnings"].end(), [](const json& w) {
    return w.get<std::string>().starts_with("2 of 24 pairs of runs of dd-write.bandwidth started further apart than "
                                            "the 50 ms schedule.max_start_skew allows, beyond both runs' clock errors "
                                            "(the worst 371 ms)");
  }));
  // The journal's first line: t0000 (A) run 0 of block 0.
  const json& first = dd["a"]["runs"][0];
  EXPECT_EQ(first["overlap"], 0.9969);
  EXPECT_EQ(first["timing"], json::parse(R"({"go": 1764446405.0, "start": 1764446405.001, "end": 1764446405.979769,
                                              "load_end": 1764446406.07121, "clock_error": 0.0005})"));
  const json& fio = j["metrics"][1];
  EXPECT_EQ(fio["overlap"]["pairs"], 8);
  EXPECT_EQ(fio["overlap"]["voided"], 0);
  EXPECT_EQ(fio["overlap"]["min"], 0.997);
  EXPECT_EQ(fio["a"]["voided_runs"], json::array());

  // Runs that record nothing: no "overlap", no "timing", no "voided_runs" (the seed golden is unchanged).
  const json demo = demo_report();
  EXPECT_FALSE(demo["metrics"][0].contains("overlap"));
  EXPECT_FALSE(demo["metrics"][0]["a"].contains("voided_runs"));
  EXPECT_FALSE(demo["metrics"][0]["a"]["runs"][0].contains("timing"));
}

TEST(ReportTerminal, OneLinePerMetricOnTheOverlap) {
  const std::string text = terminal_report(co_scheduled_analysis());
  EXPECT_THAT(text, HasSubstr("\n  overlap of A's and B's runs: min 62.0 %, median 99.7 % over 24 pairs; starts apart: "
                              "median 3 ms, max 371 ms; 2 started more than 50 ms apart beyond the clock errors, left "
                              "out\n  every pair, none left out: paired B/A "));
  EXPECT_THAT(text, HasSubstr("\n  overlap of A's and B's runs: min 99.7 %, median 99.7 % over 8 pairs; starts apart: "
                              "median 3 ms, max 3 ms; none started more than 50 ms apart: nothing left out\n"));
  EXPECT_THAT(terminal_report(analyze(load_results_dir(report_data("report/results-demo")), {})),
              Not(HasSubstr("overlap of A's and B's runs")));
  // A design whose runs alternate by intent: shown, nothing left out.
  AnalysisOptions lockstep;
  lockstep.paired_primary = true;
  EXPECT_THAT(terminal_report(analyze(load_results_dir(report_data("report/results-co-scheduled")), lockstep)),
              HasSubstr("max 371 ms; nothing left out (only co-scheduled runs must start together)\n"));
}

TEST(ReportHtml, SaysHowMuchTheRunsOverlappedAndShowsTheTimeline) {
  HtmlInputs in;
  in.report = read_report_data(co_scheduled_report(), {.file = "analysis.json", .advice = "regenerate it"});
  in.template_html = load_html_template();
  in.context.title = "co-scheduled";
  in.plots.plots.push_back({0, "timeline", "A's and B's runs on the host's clock (blocks 0, 2)", kTinyPng});
  const std::string h = html_report(in);
  EXPECT_THAT(h, HasSubstr("<p class=\"overlap\">Overlap of A&#39;s and B&#39;s runs: min 62.0 %, median 99.7 % over 24 "
                           "pairs; starts apart: median 3 ms, max 371 ms; 2 started more than 50 ms apart beyond the "
                           "clock errors, left out.</p>"));
  EXPECT_THAT(h, HasSubstr("over 8 pairs; starts apart: median 3 ms, max 3 ms; none started more than 50 ms apart: "
                           "nothing left out.</p>"));
  EXPECT_THAT(h, HasSubstr("<tr><th>every pair, none left out</th>"));
  EXPECT_THAT(h, HasSubstr("<figure class=\"plot plot-timeline\">"));
  EXPECT_THAT(h, HasSubstr("dd-write.bandwidth: A&#39;s and B&#39;s runs on the host&#39;s clock (blocks 0, 2)"));
  EXPECT_THAT(h, HasSubstr("started further apart than the 50 ms schedule.max_start_skew allows"));
}
