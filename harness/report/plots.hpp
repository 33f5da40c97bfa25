#pragma once
// Plots for the HTML report. A side effect kept behind one function: report/plot.py, run as
// `/usr/bin/python3 report/plot.py ANALYSIS_JSON OUT_DIR` (an argument vector through
// core/process.hpp), reads only the JSON report and writes PNGs; this returns their bytes.
//
// Never throws for a plotting problem: no Python, no matplotlib, a crash or a timeout of the
// script all become entries of PlotSet::missing with the reason in plain words, so that the
// report still renders and says which plots are missing and why.
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base64.hpp"
#include "verdict/report_model.hpp"

namespace abvm {

// The kinds plot.py draws for every metric, in the order the report shows them.
inline constexpr const char* kPlotKinds[] = {"runs", "order", "distribution", "effect"};
// Drawn after them for a metric whose runs carry their timing (analysis.json runs[].timing, in
// "runs" or "voided_runs" of either side): A's and B's runs of a few blocks on one time axis.
inline constexpr const char* kTimelineKind = "timeline";
// A cost metric's (samples/cost.hpp): its runs against their throughput, per side.
inline constexpr const char* kCostKind = "cost";

// The kinds of plot one metric of the report gets: kPlotKinds, kTimelineKind when its
// runs carry their timing, and kCostKind for a cost metric. Each ends up in PlotSet::plots or PlotSet::missing.
std::vector<std::string> expected_plot_kinds(const ReportMetric& metric);

struct Plot {
  std::size_t metric = 0;   // index into report["metrics"]
  std::string kind;         // one of kPlotKinds or kTimelineKind
  std::string title;        // plot.py's caption
  std::string png;          // the PNG file's bytes
};

struct MissingPlot {
  std::optional<std::size_t> metric;   // nullopt: every plot of every metric
  std::string kind;                    // one of kPlotKinds or kTimelineKind, or "all"
  std::string reason;                  // plain words, with what to do
};

struct PlotSet {
  std::vector<Plot> plots;
  std::vector<MissingPlot> missing;
};

struct PlotOptions {
  std::filesystem::path python = "/usr/bin/python3";
  std::filesystem::path script;        // report/plot.py of abvm's data (core/resources.hpp)
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

// The defaults, overridden by the environment: ABVM_PYTHON (the interpreter, e.g. one without
// matplotlib to see the report without plots) and ABVM_PLOT_SCRIPT.
PlotOptions default_plot_options();

// Runs plot.py on `report` (written as the JSON report, schema_version 1, for plot.py to read) in a fresh temporary directory,
// which is removed afterwards. Every (metric, kind) pair of expected_plot_kinds ends up either in
// `plots` or in `missing`.
PlotSet make_plots(const ReportModel& report, const PlotOptions& options);

// Removes the plot directories ("abvm-plots-<pid>-XXXXXX") in `tmp` whose abvm process is dead
// (killed while plotting) and returns them; make_plots calls it first. Others are left alone.
std::vector<std::filesystem::path> remove_stale_plot_directories(const std::filesystem::path& tmp);


}  // namespace abvm
