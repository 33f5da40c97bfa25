#pragma once
// The analysis of an abvm results directory as its experiment asks for it: the experiment's
// [analysis] margin, seed and metrics and its design's rules (verdict/design_rules.hpp), at the
// confidence the run decided with (its final look's, for a sequential run). `abvm run`'s final
// analysis and `abvm analyze RESULTS_DIR` both call decide(), so re-analysing a directory
// reproduces its analysis.json; `abvm run`'s looks compute the same verdict alone. Besides the
// journal, decide() takes how the run ended (run/runner.hpp RunEnd): from memory at the end of a
// run, as run.json and trials.jsonl record it otherwise (recorded_run_end).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "verdict/report_model.hpp"
#include "results/directory.hpp"
#include "run/runner.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {

// Settings given on the command line, each overriding the experiment's when present.
struct AnalysisOverrides {
  std::optional<double> margin, confidence;
  std::optional<std::uint64_t> seed;
};

struct Decision {
  Analysis analysis;
  ReportSource source;     // kind "results", with the sides' labels
  ReportModel report;      // what every reporter takes (report_model of analysis and source)
  std::string json_text;   // analysis.json
  std::string summary;     // summary.txt (the terminal report without colour)
  double seconds_per_block = 0;  // this run's pace (0: no trial done yet)
};

// The experiment's analysis of what `dir`'s journal holds at `end`'s final confidence, with `end`'s
// stop reason and pace (its trials' seconds) and `overrides` applied. Error when there is nothing
// to analyse.
Decision decide(const Experiment& e, const ResultsDir& dir, const RunEnd& end, const AnalysisOverrides& overrides = {});

// The Runner's look (run/runner.hpp): the verdict alone (verdict/look.hpp LookDecider, one for
// all the run's looks), nullopt while inconclusive. `e` must outlive it.
LookDecision sequential_looks(const Experiment& e);

// One line per override that changes the experiment's setting, e.g. "--margin 0.1 overrides the
// experiment's margin 0.05": what `abvm analyze RESULTS_DIR` prints on stderr.
std::vector<std::string> override_notes(const Experiment& e, double confidence, const AnalysisOverrides& overrides);

}  // namespace abvm::cli
