// The report model (verdict/report_model.hpp) is what every reporter takes: made in memory from an
// analysis, written as analysis.json, and read back by the one strict reader to the same model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/json_report.hpp"
#include "report/report_data.hpp"
#include "report_test_support.hpp"
#include "samples/load.hpp"
#include "verdict/report_model.hpp"

using namespace abvm;
using abvm::test::report_data;

namespace {

const JsonOrigin kOrigin{.file = "analysis.json", .advice = "regenerate it"};

// Every field of the model is written, so two models whose JSON is equal are equal, NaN included
// (null both times), which operator== cannot say.
void expect_round_trip(const ReportModel& model) {
  const nlohmann::json written = json_report(model);
  const ReportModel read = read_report_data(written, kOrigin);
  EXPECT_EQ(json_report(read), written);
  // And field by field where NaN cannot stand in the way.
  EXPECT_EQ(read.source, model.source);
  EXPECT_EQ(read.verdict, model.verdict);
  EXPECT_EQ(read.primary_estimate, model.primary_estimate);
  EXPECT_EQ(read.context_a, model.context_a);
  EXPECT_EQ(read.failures, model.failures);
  EXPECT_EQ(read.missing, model.missing);
  EXPECT_EQ(read.findings, model.findings);
  ASSERT_EQ(read.metrics.size(), model.metrics.size());
  for (std::size_t i = 0; i < model.metrics.size(); ++i) {
    const ReportMetric &r = read.metrics[i], &m = model.metrics[i];
    EXPECT_EQ(r.a.runs, m.a.runs);
    EXPECT_EQ(r.b.voided_runs, m.b.voided_runs);
    EXPECT_EQ(r.effect, m.effect);
    EXPECT_EQ(r.modes, m.modes);
    EXPECT_EQ(r.overlap.has_value(), m.overlap.has_value());
    EXPECT_EQ(r.findings, m.findings);
  }
}

}  // namespace

TEST(ReportModel, ModelThenJsonThenModelIsUnchanged) {
  const ReportSource results{.kind = "results", .results_dir = "r", .a_label = "direct", .b_label = "dma",
                             .design = "co-scheduled", .decided_by = "look 2"};
  expect_round_trip(report_model(analyze(load_results_dir(report_data("report/results-demo")), {}), results));
  // Paired, with each run's timing and its pair's overlap, two pairs left out.
  AnalysisOptions paired{.paired_primary = true, .max_start_skew_ms = 50};
  const ReportModel co = report_model(analyze(load_results_dir(report_data("report/results-co-scheduled")), paired),
                                      results);
  ASSERT_TRUE(co.metrics[0].overlap && co.metrics[0].overlap->voided > 0) << "the fixture should void pairs";
  ASSERT_TRUE(co.metrics[0].a.runs[0].timing.has_value());
  expect_round_trip(co);
  expect_round_trip(report_model(analyze(load_results_dir(report_data("report/results-slower")), {}),
                                 {.kind = "files", .a = {"a.txt"}, .b = {"b.txt"}}));
}

TEST(ReportModel, ListsAtMostTheLimitOfRunsEvenlyAndSaysHowManyItLeftOut) {
  SampleSet s;
  MetricSamples m{.name = "x", .unit = "B/s"};
  for (int i = 0; i < 2500; ++i) {
    m.a.push_back({.value = 100.0 + i % 7, .order = 2 * i});
    m.b.push_back({.value = 101.0 + i % 5, .order = 2 * i + 1});
  }
  s.metrics.push_back(m);
  const ReportModel r = report_model(analyze(s, {}), {.kind = "files"});
  const ReportSide& a = r.metrics[0].a;
  ASSERT_EQ(a.runs.size(), kMaxListedRuns);
  EXPECT_EQ(a.runs_omitted, 500u);
  EXPECT_EQ(a.runs.front().index, 0u);
  EXPECT_EQ(a.runs.back().index, 2499u);
  expect_round_trip(r);
}
