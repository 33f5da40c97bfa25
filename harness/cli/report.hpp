#pragma once
// `abvm report DIR`: the HTML report (and optionally JUnit XML) of a results directory, from its
// analysis.json plus what lies next to it: config.toml (the sides and what differs),
// kernels.json, environment.json (host, accelerator), trials/<id>/console.log of failed trials.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/analyze.hpp"
#include "report/html.hpp"
#include "report/plots.hpp"

namespace abvm::cli {

Command add_report(CLI::App& app);

// The report's inputs for results directory `dir` and its report model `report` (the one a run or
// `abvm analyze DIR` has in memory, or dir/analysis.json read back for `abvm report DIR`), with
// the sides' labels and settings from the experiment file next to it. Files that are missing are
// left out; one that is unreadable or invalid is an Error naming it; environment.json is read
// strictly (report/report_data.hpp). Plots are made with `plots` (a side effect: runs
// report/plot.py).
HtmlInputs results_dir_html_inputs(const std::filesystem::path& dir, const ReportModel& report,
                                   const PlotOptions& plots);

// Writes dir/report.html of `report` and returns its path; for `abvm run` to call at its end.
std::filesystem::path write_results_dir_report(const std::filesystem::path& dir, const ReportModel& report);

// The inputs for a report over plain measurement files (`abvm analyze --a ... --b ... --html`).
HtmlInputs files_html_inputs(const ReportModel& report, const PlotOptions& plots);

}  // namespace abvm::cli
