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

namespace abvm {

// The kinds plot.py draws per metric, in the order the report shows them.
inline constexpr const char* kPlotKinds[] = {"runs", "order", "distribution", "effect"};

struct Plot {
  std::size_t metric = 0;   // index into report["metrics"]
  std::string kind;         // one of kPlotKinds
  std::string title;        // plot.py's caption
  std::string png;          // the PNG file's bytes
};

struct MissingPlot {
  std::optional<std::size_t> metric;   // nullopt: every plot of every metric
  std::string kind;                    // one of kPlotKinds, or "all"
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

// Runs plot.py on `report` (the JSON report, schema_version 1) in a fresh temporary directory,
// which is removed afterwards. Every (metric, kind) pair ends up either in `plots` or in
// `missing`.
PlotSet make_plots(const nlohmann::json& report, const PlotOptions& options);

// Removes the plot directories ("abvm-plots-<pid>-XXXXXX") in `tmp` whose abvm process is dead
// (killed while plotting) and returns them; make_plots calls it first. Others are left alone.
std::vector<std::filesystem::path> remove_stale_plot_directories(const std::filesystem::path& tmp);


}  // namespace abvm
