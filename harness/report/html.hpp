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

// What a bisection of the run's regression found, for the run's report (abvm nightly bisects a night
// that regressed after its report is written, and names the culprit in it).
struct ReportCommit {
  std::string commit, subject;             // the full sha (shown short) and the subject line
};
struct ReportBisection {
  std::string outcome;                     // "culprits", "no-regression", "unsettled", "stopped" ...
  std::string end;                         // why it ended: "searched", "wall time (3h spent)" ...
  std::vector<std::vector<ReportCommit>> culprits;  // each the culprit (one commit) or the range that holds it
  int steps = 0, boots_per_side = 0;
  std::string href;                        // the bisection's page, relative to the report
};

// `report_html` (html_report's) with a section after the verdict that names the bisection's culprit,
// or the range it left and why it ended, and links its page; a section written before is replaced.
// Error when the report has no verdict section.
std::string with_bisection_section(std::string report_html, const ReportBisection& bisection);

// The template with `title` (escaped here) and `body` (HTML) in its placeholders, as html_report
// fills it; for the other pages abvm writes (bisect.html). Error when a placeholder is missing.
std::string fill_html_template(const std::string& template_html, std::string_view title, const std::string& body);

}  // namespace abvm
