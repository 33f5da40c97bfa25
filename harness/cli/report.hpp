#pragma once
// `abvm report DIR`: the HTML report (and optionally JUnit XML) of a results directory, from its
// analysis.json plus what lies next to it: config.toml (the sides and what differs),
// kernels.json, environment.json (host, accelerator), trials/<id>/console.log of failed trials.
// The report's context (report/html.hpp ReportContext) is made here for every command: from memory
// at the end of `abvm run`, from the directory's files otherwise.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/analyze.hpp"
#include "config/experiment.hpp"
#include "report/html.hpp"
#include "report/plots.hpp"
#include "results/directory.hpp"
#include "run/runner.hpp"

namespace abvm::cli {

Command add_report(CLI::App& app);

// The context of a run's report from what the run holds in memory: its experiment and what its
// session wrote beside the journal (run/runner.hpp RunEnd::records). Nothing is read from disk;
// `dir` gives the title when there is no experiment and names the files in messages.
ReportContext run_report_context(const Experiment& experiment, const RunRecords& records, const ResultsDir& dir);

// The same context from a results directory's files, each through its one strict reader:
// config.toml (as `abvm analyze DIR` and `--resume` load it, results/directory.hpp
// load_saved_experiment; `experiment` when the caller has loaded it already), kernels.json and
// environment.json (report/report_data.hpp). A missing file is left out; one that is unreadable or
// invalid is an Error naming it.
ReportContext read_report_context(const ResultsDir& dir, const Experiment* experiment = nullptr);

// The HTML's inputs for results directory `dir`: its report model (the one a run or `abvm analyze
// DIR` has in memory, or dir/analysis.json read back for `abvm report DIR`), its context, the failed
// trials with the console logs found in `dir`, and the plots made with `plots` (a side effect: runs
// report/plot.py).
HtmlInputs results_dir_html_inputs(const ResultsDir& dir, const ReportModel& report, ReportContext context,
                                   const PlotOptions& plots);

// Writes dir/report.html of `report` and `context` and returns its path; for `abvm run` to call
// at its end.
std::filesystem::path write_results_dir_report(const ResultsDir& dir, const ReportModel& report,
                                               ReportContext context);

// The inputs for a report over plain measurement files (`abvm analyze --a ... --b ... --html`).
HtmlInputs files_html_inputs(const ReportModel& report, const PlotOptions& plots);

}  // namespace abvm::cli
