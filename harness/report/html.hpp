#pragma once
// The HTML report: one self-contained file (inline CSS, PNG plots as data: URIs, no script, no
// network) that shows the evidence behind a verdict. A pure writer: html_report() turns its
// inputs into bytes; the caller writes them (core/files.hpp write_file_atomic).
//
// It works from typed data only: the report model and its context (the sides, the host), each
// either held in memory by the run that made them or read back by the strict readers of
// report/report_data.hpp (a missing field is an Error there, never a blank here), and the failed
// trials with their console logs. Every string that comes from outside (config, kernel, console
// log, file name, side label) is HTML-escaped.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/plots.hpp"
#include "report/report_data.hpp"

namespace abvm {

// One side of the experiment as configured: label and the settings that describe it.
struct SideInfo {
  std::string letter;                                          // "A" / "B"
  std::string label;
  std::vector<std::pair<std::string, std::string>> settings;   // key -> value ("kernel" -> "debian-cloud")
};

// A trial that produced no measurement.
struct FailedTrial {
  std::string side, outcome, what;
  std::string trial;         // trial id when known
  std::string console_log;   // href of its console log relative to the report ("" when none)
};

// What the report shows besides the report model: where the results come from. One value, made
// once by the caller from what it has: at the end of `abvm run` from memory (the experiment, the
// kernels and the host the run holds), from a results directory's files for `abvm report DIR`,
// `analyze DIR` and `--resume`, from the files' names for `analyze --a/--b` and `compare`
// (cli/report.hpp).
struct ReportContext {
  std::string title;                       // e.g. the experiment's name
  std::string description;                 // e.g. the experiment's description ("" when none)
  std::vector<SideInfo> sides;             // empty when there is no experiment to describe them
  std::optional<HostEnvironment> environment;   // environment.json, when there is one
};

struct HtmlInputs {
  ReportModel report;                       // the JSON report (read_report_data)
  ReportContext context;
  std::vector<FailedTrial> failures;       // see failures_from_report
  PlotSet plots;
  std::string template_html;               // report/template.html: holds {{title}} and {{body}}
};

// & < > " ' as entities: safe in text and in quoted attribute values.
std::string html_escape(std::string_view text);

// report/template.html of abvm's data (core/resources.hpp). Throws InfraError when it cannot be read.
std::string load_html_template();

// The report's failures; trial ids are taken from their source ("trial t0003 run 0"),
// console_log is left empty for the caller to fill.
std::vector<FailedTrial> failures_from_report(const ReportModel& report);

// Throws Error when the template lacks {{title}} or {{body}}.
std::string html_report(const HtmlInputs& inputs);

// The template with `title` (escaped here) and `body` (HTML) in its placeholders, as html_report
// fills it; for the other pages abvm writes (bisect.html). Error when a placeholder is missing.
std::string fill_html_template(const std::string& template_html, std::string_view title, const std::string& body);

}  // namespace abvm
