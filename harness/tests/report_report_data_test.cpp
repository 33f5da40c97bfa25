// The strict readers of report/report_data.hpp: what json_report() writes reads back field for
// field, and a missing or mistyped field is an Error naming the file and the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "core/error.hpp"
#include "core/files.hpp"
#include "report/html.hpp"
#include "report/json_report.hpp"
#include "report_model_support.hpp"
#include "report/report_data.hpp"
#include "report/terminal.hpp"
#include "report/wording.hpp"
#include "report_test_support.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

using namespace abvm;
using namespace abvm::test;
using abvm::test::report_data;
using json = nlohmann::json;

namespace {

const JsonOrigin kAnalysis{.file = "r/analysis.json", .advice = "regenerate it with abvm analyze r"};
const JsonOrigin kEnvironment{.file = "r/environment.json", .advice = "restore it"};

Analysis demo_analysis() { return analyze(load_results_dir(report_data("report/results-demo")), {}); }

json demo_json(const Analysis& a) {
  return json_report(a, {.kind = "results", .results_dir = "r", .a_label = "direct", .b_label = "dma"});
}

json demo_environment() { return json::parse(read_file(report_data("report/results-demo/environment.json"))); }

// The message read_report_data throws for `report`, or "" when it reads.
std::string report_error(const json& report) {
  try {
    read_report_data(report, kAnalysis);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string environment_error(const json& env) {
  try {
    read_host_environment(env, kEnvironment);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ReportData, ReadsBackWhatJsonReportWrote) {
  const Analysis a = demo_analysis();
  const ReportModel r = read_report_data(demo_json(a), kAnalysis);
  EXPECT_EQ(r.schema_version, 1);
  EXPECT_EQ(r.tool_version, ABVM_VERSION);
  EXPECT_EQ(r.verdict, a.verdict);
  EXPECT_EQ(r.margin, a.options.margin);
  EXPECT_EQ(r.interval_confidence, a.interval_confidence);
  EXPECT_EQ(r.seed, a.options.seed);
  EXPECT_EQ(r.source.kind, "results");
  EXPECT_EQ(r.source.results_dir, "r");
  EXPECT_EQ(r.source.b_label, "dma");
  EXPECT_EQ(r.context_a.hosts, a.context_a.hosts);
  EXPECT_EQ(r.context_b.accelerators, a.context_b.accelerators);
  EXPECT_EQ(r.failed_a, a.failed_a);
  ASSERT_EQ(r.failures.size(), a.failures.size());
  EXPECT_EQ(r.failures[0].side, a.failures[0].side);
  EXPECT_EQ(r.failures[0].source, a.failures[0].source);
  EXPECT_EQ(r.findings, a.findings);
  ASSERT_EQ(r.metrics.size(), a.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    const ReportMetric& m = r.metrics[i];
    const MetricAnalysis& x = a.metrics[i];
    EXPECT_EQ(m.name, x.name);
    EXPECT_EQ(m.better, x.better);
    EXPECT_EQ(m.verdict, x.verdict);
    EXPECT_EQ(m.a.n, x.a.summary.n);
    EXPECT_EQ(m.b.median, x.b.summary.median);
    EXPECT_EQ(m.a.per_boot, x.a.per_boot);
    EXPECT_EQ(m.a.units, x.a.units.size());
    EXPECT_EQ(m.effect.estimate, x.effect.estimate);
    EXPECT_EQ(m.effect.high, x.effect.high);
    EXPECT_EQ(m.effect.method, x.effect.method);
    EXPECT_EQ(m.paired_effect.has_value(), x.paired.has_value());
    EXPECT_EQ(m.mann_whitney.exact, x.mw_exact);
    EXPECT_EQ(m.modes.size(), x.modes.split.modes.size());
    EXPECT_EQ(m.mode_test.has_value(), x.modes.fisher.has_value());
    EXPECT_EQ(m.runs_needed, x.runs_needed);
    EXPECT_EQ(m.findings, x.findings);
    EXPECT_TRUE(std::isnan(m.bootstrap_median_ratio.achieved_confidence));
  }
}

TEST(ReportData, AMissingFieldIsAnErrorNamingTheFileAndThePath) {
  const json good = demo_json(demo_analysis());
  json j = good;
  j["metrics"][1]["effect"].erase("ci_low");
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[1].effect.ci_low\" is missing (a number or null); "
                             "regenerate it with abvm analyze r");
  // Each field the report shows, wherever it sits, and what it must be.
  const std::pair<const char*, const char*> fields[] = {
      {"/verdict", "one of regression, improvement, no_change, inconclusive"},
      {"/tool/version", "a string"},
      {"/options/margin", "a number"},
      {"/options/seed", "an integer >= 0"},
      {"/source/b_label", "a string"},
      {"/source/results_dir", "a string"},
      {"/context/b/accelerators", "a list"},
      {"/failed_runs/a", "an integer >= 0"},
      {"/failures/0/outcome", "a string"},
      {"/findings", "a list"},
      {"/metrics/0/unit", "a string"},
      {"/metrics/0/a/mad", "a number or null"},
      {"/metrics/0/b/unit_kind", "\"boot\" or \"run\""},
      {"/metrics/0/paired_effect", "an object or null"},
      {"/metrics/0/mann_whitney/p_holm", "a number or null"},
      {"/metrics/0/bootstrap_median_ratio/confidence", "a number or null"},
      {"/metrics/0/modes/1/dominant", "true or false"},
      {"/metrics/0/mode_test/alpha", "a number or null"},
      {"/metrics/1/runs_needed", "an integer >= 0 or null"},
      {"/metrics/1/findings", "a list"}};
  for (const auto& [pointer, expected] : fields) {
    json damaged = good;
    const json::json_pointer p(pointer);
    ASSERT_TRUE(damaged.contains(p)) << pointer;
    damaged[p.parent_pointer()].erase(p.back());
    std::string path = std::string(pointer).substr(1);
    for (auto at = path.find('/'); at != std::string::npos; at = path.find('/')) path[at] = '.';
    path = std::regex_replace(path, std::regex("\\.([0-9]+)"), "[$1]");
    EXPECT_EQ(report_error(damaged),
              fmt::format("r/analysis.json: field \"{}\" is missing ({}); regenerate it with abvm analyze r", path, expected));
  }
}

TEST(ReportData, AMistypedFieldIsAnErrorSayingWhatItIsAndWhatItShouldBe) {
  const json good = demo_json(demo_analysis());
  json j = good;
  j["metrics"][0]["a"]["n"] = "21";
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[0].a.n\" must be an integer >= 0, not \"21\"; regenerate "
                             "it with abvm analyze r");
  j = good;
  j["metrics"][1]["effect"]["estimate"] = "fast";
  EXPECT_EQ(report_error(j),
            "r/analysis.json: field \"metrics[1].effect.estimate\" must be a number or null, not \"fast\"; regenerate it with "
            "abvm analyze r");
  j = good;
  j["metrics"][0]["a"] = json::array();
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[0].a\" must be an object, not []; regenerate it with abvm "
                             "analyze r");
  j = good;
  j["metrics"][0]["verdict"] = "worse";
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[0].verdict\" must be one of regression, improvement, "
                             "no_change, inconclusive, not \"worse\"; regenerate it with abvm analyze r");
  j = good;
  j["failed_runs"]["b"] = -1;
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"failed_runs.b\" must be an integer >= 0, not -1" + std::string("; regenerate it with abvm analyze r"));
  j = good;
  j["schema_version"] = 2;
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"schema_version\" is 2, and this abvm reads schema_version 1; "
                             "regenerate it with abvm analyze r");
  EXPECT_EQ(report_error(json::array()), "r/analysis.json: the file must be an object, not []; regenerate it with abvm "
                                         "analyze r");
}

TEST(ReportData, NullIsANumberThatWasNotFiniteNotAMissingOne) {
  json j = demo_json(demo_analysis());
  j["metrics"][0]["effect"]["estimate"] = nullptr;
  j["metrics"][0]["a"]["cv"] = nullptr;
  const ReportModel r = read_report_data(j, kAnalysis);
  EXPECT_TRUE(std::isnan(r.metrics[0].effect.estimate));
  EXPECT_TRUE(std::isnan(r.metrics[0].a.cv));
  EXPECT_EQ(headline(r.metrics[0], "B", 0.05), "dd-write.bandwidth: no estimate: " +
                                                std::string(to_string(r.metrics[0].verdict)));
  // Where null is not allowed, it is named.
  j["metrics"][0]["name"] = nullptr;
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[0].name\" must be a string, not null; regenerate it with abvm "
                             "analyze r");
}

TEST(ReportData, OneMetricReadsStrictlyToo) {
  json m = demo_json(demo_analysis())["metrics"][0];
  const ReportMetric read = read_report_metric(m, kAnalysis, "metrics[0]");
  EXPECT_EQ(read.name, "dd-write.bandwidth");
  EXPECT_EQ(read.a.runs.size(), m["a"]["runs"].size());
  m.erase("unit");
  EXPECT_THROW(read_report_metric(m, kAnalysis, "metrics[0]"), Error);
}

TEST(ReportData, EnvironmentReadsWithItsOptionalFields) {
  json env = demo_environment();
  HostEnvironment e = read_host_environment(env, kEnvironment);
  EXPECT_EQ(e.hostname, "bench-host");
  ASSERT_TRUE(e.host_kernel.has_value());
  EXPECT_EQ(e.host_kernel->release, "6.1.0-27-amd64");
  EXPECT_EQ(e.cpus_online, 2u);
  EXPECT_FALSE(e.cpufreq_governor.has_value());   // null: no cpufreq
  EXPECT_EQ(e.load_average, (std::vector<double>{0.41, 0.38, 0.30}));
  EXPECT_EQ(e.accelerator, Accelerator::tcg);
  // What the host may not have said.
  env["cpufreq_governor"] = "performance";
  env.erase("host_kernel");
  env.erase("load_average");
  e = read_host_environment(env, kEnvironment);
  EXPECT_EQ(e.cpufreq_governor, "performance");
  EXPECT_FALSE(e.host_kernel.has_value());
  EXPECT_FALSE(e.load_average.has_value());
}

TEST(ReportData, EnvironmentMissingOrMistypedFieldsAreErrors) {
  json env = demo_environment();
  env.erase("qemu_version");
  EXPECT_EQ(environment_error(env), "r/environment.json: field \"qemu_version\" is missing (a string); restore it");
  env = demo_environment();
  env.erase("cpufreq_governor");   // null says "no cpufreq"; absent says nothing
  EXPECT_EQ(environment_error(env), "r/environment.json: field \"cpufreq_governor\" is missing (a string or null); restore it");
  env = demo_environment();
  env["accelerator"] = "hvf";
  EXPECT_EQ(environment_error(env), "r/environment.json: field \"accelerator\" must be \"kvm\" or \"tcg\", not \"hvf\"; restore it");
  env = demo_environment();
  env["load_average"][2] = "high";
  EXPECT_EQ(environment_error(env), "r/environment.json: field \"load_average[2]\" must be a number, not \"high\"; restore it");
}

// kernels.json: what a preparer recorded of each side's kernel; a side or field it did not record is
// absent, one of the wrong type names the file and the field.
TEST(ReportData, KernelsReadWithWhatEachSideRecordedAndRefuseMistypedFields) {
  const JsonOrigin origin{.file = "r/kernels.json", .advice = "restore it"};
  json kernels = json::parse(read_file(report_data("report/results-demo/kernels.json")));
  std::map<Side, SideKernel> read = read_side_kernels(kernels, origin);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read.at(Side::b).release, "6.1.0-27-cloud-amd64");
  EXPECT_EQ(read.at(Side::a).cmdline, "console=ttyS0 panic=-1 quiet");
  kernels.erase("A");
  kernels["B"].erase("cmdline");
  read = read_side_kernels(kernels, origin);
  EXPECT_FALSE(read.contains(Side::a));
  EXPECT_EQ(read.at(Side::b).release, "6.1.0-27-cloud-amd64");
  EXPECT_FALSE(read.at(Side::b).cmdline.has_value());
  const auto error = [&](const json& j) {
    try {
      read_side_kernels(j, origin);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  kernels["B"]["release"] = 61;
  EXPECT_EQ(error(kernels), "r/kernels.json: field \"B.release\" must be a string, not 61; restore it");
  EXPECT_EQ(error(json::array()), "r/kernels.json: the file must be an object, not []; restore it");
}

// The module parameters the guests reported (analysis.json context.<side>.module_params) read
// back and appear in the report's host section per side; reports without them still read.
TEST(ReportData, ModuleParametersPerSideReadBackAndShowInTheHtml) {
  Analysis a = demo_analysis();
  a.context_b.module_params["virtio_blk.queue_depth"]["1"] = 12;
  a.context_a.module_params["virtio_blk.queue_depth"]["0"] = 11;
  a.context_a.module_params["virtio_blk.queue_depth"]["1"] = 1;
  const ReportModel r = read_report_data(demo_json(a), kAnalysis);
  EXPECT_EQ(r.context_b.module_params, a.context_b.module_params);
  EXPECT_EQ(r.context_a.module_params, a.context_a.module_params);

  HtmlInputs in;
  in.report = r;
  in.template_html = "<title>{{title}}</title>{{body}}";
  const std::string html = html_report(in);
  EXPECT_NE(html.find("<tr><th>side A module parameters</th><td>virtio_blk.queue_depth=0 (11 boots); "
                      "virtio_blk.queue_depth=1 (1 boot)</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><th>side B module parameters</th><td>virtio_blk.queue_depth=1 (12 boots)</td></tr>"),
            std::string::npos);

  json without = demo_json(demo_analysis());
  without["context"]["a"].erase("module_params");
  EXPECT_EQ(report_error(without), "");
}

// A run whose every trial failed has no metric: its report still reads back and renders, with the
// family's confidence as the interval level (it once wrote 1 - (1 - 0.95) / 0 = -inf, i.e. null,
// and the HTML report refused its own analysis.json).
TEST(ReportData, ARunWithOnlyFailedTrialsReadsBackAndRenders) {
  SampleSet failed_only;
  failed_only.failures.push_back({.side = Side::a, .what = "bad checksum", .outcome = "invalid-output", .source = "t0000"});
  failed_only.failures.push_back({.side = Side::b, .what = "foreign nonce", .outcome = "invalid-output", .source = "t0001"});
  const Analysis a = analyze(failed_only, {});
  EXPECT_TRUE(a.metrics.empty());
  EXPECT_EQ(a.interval_confidence, a.options.confidence);
  const json j = demo_json(a);
  ASSERT_EQ(report_error(j), "");
  HtmlInputs in;
  in.report = read_report_data(j, kAnalysis);
  in.template_html = "<title>{{title}}</title>{{body}}";
  EXPECT_NE(html_report(in).find("inconclusive"), std::string::npos);
}

// A co-scheduled run's report: the paired estimate decides and says so, the unpaired figures and
// the noise anatomy read back, and the design and the deciding look show in the HTML.
TEST(ReportData, APairedPrimaryEstimateAndTheNoiseAnatomyReadBackAndShow) {
  Analysis a = demo_analysis();
  MetricAnalysis& m = a.metrics[0];
  m.paired = Effect{.estimate = 0.99, .low = 0.97, .high = 1.01, .confidence = 0.95, .achieved_confidence = 0.96,
                    .method = "hodges-lehmann paired"};
  m.effect = *m.paired;
  m.primary = Estimate::paired;
  m.noise = {.between_boot_sd = 0.15, .within_boot_sd = 0.07, .pair_sd = 0.05, .pair_correlation = 0.89,
             .drift_rho = 0.1, .pairs = 12, .blocks_unpaired = 240, .blocks_paired = 15};
  json j = json_report(a, {.kind = "results", .results_dir = "r", .a_label = "direct", .b_label = "dma",
                           .design = "co-scheduled", .decided_by = "verdict no_change at look 2 of 5"});
  const ReportModel r = read_report_data(j, kAnalysis);
  const ReportMetric& rm = r.metrics[0];
  EXPECT_EQ(rm.primary_estimate, Estimate::paired);
  EXPECT_EQ(rm.effect.estimate, 0.99);
  ASSERT_TRUE(rm.unpaired_effect.has_value());
  EXPECT_EQ(rm.unpaired_effect->high, m.unpaired.high);
  ASSERT_TRUE(rm.noise.has_value());
  EXPECT_EQ(rm.noise->pair_correlation, 0.89);
  EXPECT_EQ(rm.noise->blocks_paired, 15u);
  EXPECT_EQ(r.source.design, "co-scheduled");

  HtmlInputs in;
  in.report = r;
  in.template_html = "<title>{{title}}</title>{{body}}";
  const std::string html = html_report(in);
  EXPECT_NE(html.find("paired effect (decides: the design pairs A and B)"), std::string::npos);
  EXPECT_NE(html.find("unpaired effect"), std::string::npos);
  EXPECT_NE(html.find("per-block B/A 0.050 (pairing correlation 0.89, 12 blocks)"), std::string::npos) << html;
  EXPECT_NE(html.find("Design co-scheduled; sequential stopping: verdict no_change at look 2 of 5."), std::string::npos);

  // Reports of an abvm before designs: no primary_estimate, noise or unpaired_effect.
  for (const char* key : {"primary_estimate", "noise", "unpaired_effect"}) j["metrics"][0].erase(key);
  const ReportModel old = read_report_data(j, kAnalysis);
  EXPECT_EQ(old.metrics[0].primary_estimate, Estimate::unpaired);
  EXPECT_FALSE(old.metrics[0].noise.has_value());
  j["metrics"][0]["primary_estimate"] = "both";
  EXPECT_EQ(report_error(j), "r/analysis.json: field \"metrics[0].primary_estimate\" must be \"paired\" or \"unpaired\", not "
                             "\"both\"; regenerate it with abvm analyze r");
}

// Trials whose guest was not its side (outcome mismatch) put a warning before all others and a
// word next to the verdict itself (issue 11 item 2).
TEST(ReportData, MismatchedSidesAreSaidFirstAndWithTheVerdict) {
  SampleSet s;
  MetricSamples m{.name = "bw", .unit = "B/s", .better = Better::higher};
  for (int i = 0; i < 10; ++i) {
    m.a.push_back({.value = 100.0 + i % 3, .order = 2 * i});
    m.b.push_back({.value = 100.0 + (i + 1) % 3, .order = 2 * i + 1});
  }
  s.metrics.push_back(m);
  s.failures.push_back({.side = Side::b, .what = "dd-write run 0 of boot t0001: mismatch: side B booted something else",
                        .outcome = "mismatch", .source = "trial t0001 run 0"});
  s.context_b.facts["kernel_version"]["#1 SMP foreign-build"] = 3;
  const Analysis a = analyze(s, {});
  const auto warnings = sentences(a.findings, Severity::warning);
  ASSERT_FALSE(warnings.empty());
  EXPECT_TRUE(warnings[0].starts_with("THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS: 1 run(s)")) << warnings[0];
  const std::string text = terminal_report(a);
  EXPECT_NE(text.find("(BUT THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS: see the mismatch warning)\n"), std::string::npos)
      << text;
  // The facts travel through analysis.json into the HTML.
  const ReportModel r = read_report_data(demo_json(a), kAnalysis);
  EXPECT_EQ(r.context_b.facts.at("kernel_version").at("#1 SMP foreign-build"), 3);
  s.failures[0].outcome = "timeout";
  EXPECT_EQ(terminal_report(analyze(s, {})).find("BUT THE SIDES"), std::string::npos);
}

// The overlap of a co-scheduled run's pairs reads back; absent in reports of runs that record none;
// strict when present.
TEST(ReportData, OverlapReadsBackAndIsStrict) {
  AnalysisOptions options;
  options.paired_primary = true;
  options.max_start_skew_ms = 50;
  const json j = demo_json(analyze(load_results_dir(report_data("report/results-co-scheduled")), options));
  const ReportModel r = read_report_data(j, kAnalysis);
  ASSERT_TRUE(r.metrics[0].overlap.has_value());
  EXPECT_EQ(r.metrics[0].overlap->pairs, 24u);
  EXPECT_EQ(r.metrics[0].overlap->voided, 2u);
  EXPECT_EQ(r.metrics[0].overlap->min, 0.62);
  EXPECT_EQ(r.metrics[0].overlap->median, 0.997);
  EXPECT_EQ(r.metrics[0].overlap->max_start_skew_ms, 50.0);
  EXPECT_NEAR(r.metrics[0].overlap->skew_max_ms, 371.192, 1e-3);
  EXPECT_FALSE(r.metrics[0].overlap->threshold.has_value());
  ASSERT_TRUE(r.metrics[0].all_pairs_effect.has_value());
  EXPECT_EQ(r.metrics[0].all_pairs_effect->estimate, j["metrics"][0]["all_pairs_effect"]["estimate"].get<double>());
  EXPECT_FALSE(read_report_data(demo_json(demo_analysis()), kAnalysis).metrics[0].overlap.has_value());

  json bad = j;
  bad["metrics"][0]["overlap"]["voided"] = "two";
  EXPECT_EQ(report_error(bad), "r/analysis.json: field \"metrics[0].overlap.voided\" must be an integer >= 0, not \"two\"; "
                               "regenerate it with abvm analyze r");
  bad = j;
  bad["metrics"][0]["overlap"]["max_start_skew_ms"] = "50ms";
  EXPECT_EQ(report_error(bad), "r/analysis.json: field \"metrics[0].overlap.max_start_skew_ms\" must be a number or null, "
                               "not \"50ms\"; regenerate it with abvm analyze r");
  bad = j;
  bad["metrics"][0]["overlap"]["max_start_skew_ms"] = nullptr;
  EXPECT_FALSE(read_report_data(bad, kAnalysis).metrics[0].overlap->max_start_skew_ms.has_value());

  // A report of abvm before issue 26: the old rule's threshold, no skews, no estimate over every pair.
  json old = j;
  old["metrics"][0]["overlap"] = json::parse(R"({"pairs": 24, "min": 0.62, "median": 0.997, "voided": 2, "threshold": 0.95})");
  old["metrics"][0].erase("all_pairs_effect");
  const ReportModel before = read_report_data(old, kAnalysis);
  EXPECT_EQ(before.metrics[0].overlap->threshold, 0.95);
  EXPECT_FALSE(before.metrics[0].overlap->max_start_skew_ms.has_value());
  EXPECT_TRUE(std::isnan(before.metrics[0].overlap->skew_max_ms));
  EXPECT_FALSE(before.metrics[0].all_pairs_effect.has_value());
}
