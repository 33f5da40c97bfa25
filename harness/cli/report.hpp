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

// The report's inputs for results directory `dir` and its JSON report `report` (which need not
// be dir/analysis.json: `abvm analyze DIR --html` passes the one it just made). Files that are
// missing are left out; one that is unreadable or invalid is an Error naming it. The report and
// environment.json are read strictly (report/report_data.hpp): a missing or mistyped field is an
// Error naming the file and the field. Plots are made with `plots` (a side effect: runs
// report/plot.py).
HtmlInputs results_dir_html_inputs(const std::filesystem::path& dir, const nlohmann::json& report,
                                   const PlotOptions& plots);

// Writes dir/report.html from dir/analysis.json and returns its path; for `abvm run` to call
// at its end.
std::filesystem::path write_results_dir_report(const std::filesystem::path& dir);

// The inputs for a report over plain measurement files (`abvm analyze --a ... --b ... --html`).
HtmlInputs files_html_inputs(const nlohmann::json& report, const PlotOptions& plots);

}  // namespace abvm::cli
