#pragma once
// The writers' tests hold an Analysis (made from their data) or a JSON report (made, then changed to
// probe the reader): these give the writers the report model of either, the one through
// report_model(), the other through the one strict reader, as abvm itself does.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/html.hpp"
#include "report/json_report.hpp"
#include "report/junit.hpp"
#include "report/plots.hpp"
#include "report/report_data.hpp"
#include "report/terminal.hpp"
#include "report/wording.hpp"

namespace abvm::test {

inline const JsonOrigin kTestReport{.file = "the test's report", .advice = "fix the test"};

inline ReportModel read_model(const nlohmann::json& report) { return read_report_data(report, kTestReport); }
inline ReportMetric read_metric(const nlohmann::json& metric) { return read_report_metric(metric, kTestReport, "metric"); }

inline nlohmann::json json_report(const Analysis& analysis, const ReportSource& source) {
  return abvm::json_report(report_model(analysis, source));
}
inline std::string json_report_text(const Analysis& analysis, const ReportSource& source) {
  return abvm::json_report_text(report_model(analysis, source));
}
inline std::string terminal_report(const Analysis& analysis, const TerminalOptions& options = {}) {
  return abvm::terminal_report(report_model(analysis, {.kind = "files"}), options);
}
inline std::string junit_report(const nlohmann::json& report, const JunitOptions& options = {}) {
  return abvm::junit_report(read_model(report), options);
}
inline PlotSet make_plots(const nlohmann::json& report, const PlotOptions& options) {
  return abvm::make_plots(read_model(report), options);
}
inline std::vector<std::string> expected_plot_kinds(const nlohmann::json& metric) {
  return abvm::expected_plot_kinds(read_metric(metric));
}
// A metric's sentence (report/wording.hpp headline) in a report of `margin` whose side B is `b_label`.
inline std::string headline(const ReportMetric& metric, const std::string& b_label, double margin) {
  ReportModel report{.margin = margin};
  report.source.b_label = b_label;
  return abvm::headline(metric, report);
}

inline std::string headline(const MetricAnalysis& metric, double margin) {
  Analysis one;
  one.metrics.push_back(metric);
  return headline(report_model(one, {.kind = "files"}).metrics[0], "B", margin);
}

}  // namespace abvm::test
