#pragma once
// `abvm history DIR`: the nightly's history (history.hpp) as one self-contained HTML page, a section
// per tree and branch it follows. In each, per metric a plot of each night's effect B/A with its
// interval against the margin (judged regressions marked, each bisection's culprit written by its
// night; report/history_plot.py draws it with matplotlib, embedded as PNG), then one row per night:
// its date, A and B, the commits between them, the outcome, each metric's estimate and interval (a
// metric reported, not judged, said to be so and never marked as a regression: its verdict was no
// part of the night's), the bisection's culprit or the range it left, the drift comparison, and
// links to the night's report and bisection while they exist (a CI keeps them as the night's
// artifact, for a while).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nightly/history.hpp"

namespace abvm {

struct HistoryPlot {
  std::size_t metric = 0;   // index into history_metrics()
  std::string png;          // the file's bytes
};

struct HistoryPlots {
  std::vector<HistoryPlot> plots;
  std::vector<std::string> missing;  // why a plot is not there, in plain words
};

// The metrics of the history, in the order they first appear.
std::vector<std::string> history_metrics(const std::vector<NightRecord>& lines);

// Runs report/history_plot.py (ABVM_PYTHON, else /usr/bin/python3) on the history. Never throws for
// a plotting problem: it becomes an entry of `missing`.
HistoryPlots history_plots(const std::vector<NightRecord>& lines);

// Where the page links a file of the history (a path relative to the history directory, as the
// lines hold them), or nullopt when it is no longer kept.
using HistoryHref = std::function<std::optional<std::string>(const std::string& in_history)>;

// One tree's branch: its nights in the history's order, and their plots. A history may follow several
// (one history directory for more than one experiment file): each is a section of its own, so that no
// plot or table mixes two trees' nights.
struct HistorySeries {
  std::vector<NightRecord> nights;
  HistoryPlots plots;
};

// The history's nights per tree (its URL) and branch, in the order each first appears.
std::vector<std::vector<NightRecord>> history_series(const std::vector<NightRecord>& lines);

// The page.
std::string history_html(const std::vector<HistorySeries>& series, const HistoryHref& href,
                         const std::string& template_html);

}  // namespace abvm
