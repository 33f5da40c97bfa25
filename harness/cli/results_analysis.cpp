#include "cli/results_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/json_report.hpp"
#include "report/terminal.hpp"
#include "samples/load.hpp"
#include "samples/select.hpp"

namespace abvm::cli {

namespace {

// The wall time one A/B block costs in this run, from the ledger: a sequential block is two trials
// one after the other, a block of two guests at once or of one guest lasts about as long as one of
// its trials, and the lanes run their blocks side by side. 0 when no trial is done.
double seconds_per_block(const Experiment& e, const ResultsDir& dir) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& line : read_ledger(dir.ledger())) {
    sum += line.seconds;
    ++n;
  }
  if (n == 0) return 0;
  const double lanes = static_cast<double>(std::max<std::size_t>(1, e.schedule.cpu_sets.size()));
  return traits(e.schedule.design).trials_in_block_time * sum / static_cast<double>(n) / lanes;
}

}  // namespace

Decision decide(const Experiment& e, const ResultsDir& dir, double confidence, const AnalysisOverrides& overrides) {
  AnalysisOptions options;
  options.margin = overrides.margin.value_or(e.analysis.margin);
  options.confidence = overrides.confidence.value_or(confidence);
  options.seed = overrides.seed.value_or(e.analysis.seed);
  // Fixed by the design before any data was seen: designs that pair A with B are analysed as pairs.
  options.paired_primary = traits(e.schedule.design).pairs_sides;
  // Designs whose A and B runs are meant to overlap leave out the pairs that did not; those that
  // alternate them by intent (lockstep, same-guest, sequential blocks) only show the overlaps.
  if (traits(e.schedule.design).overlap_by_intent) options.min_overlap = e.schedule.min_overlap;
  Decision d{.analysis = analyze(select_metrics(load_results_dir(dir.root()), e.analysis.metrics), options),
             .source = {.kind = "results", .results_dir = dir.root().string(), .a_label = e.a.label,
                        .b_label = e.b.label, .design = to_string(e.schedule.design),
                        .decided_by = read_manifest(dir).stop_reason}};
  d.report = report_model(d.analysis, d.source);
  d.json_text = json_report_text(d.report);
  d.seconds_per_block = seconds_per_block(e, dir);
  d.summary = terminal_report(d.report, {.a_label = e.a.label, .b_label = e.b.label, .color = false,
                                           .seconds_per_block = d.seconds_per_block});
  return d;
}

double run_confidence(const Experiment& e, const RunManifest& manifest) {
  return manifest.final_confidence.value_or(e.analysis.confidence);
}

std::vector<std::string> override_notes(const Experiment& e, double confidence, const AnalysisOverrides& overrides) {
  std::vector<std::string> notes;
  auto note = [&](const char* flag, const char* what, auto given, auto saved) {
    if (given && *given != saved) {
      notes.push_back(fmt::format("{} {} overrides the experiment's {} {}", flag, *given, what, saved));
    }
  };
  note("--margin", "margin", overrides.margin, e.analysis.margin);
  note("--confidence", "confidence", overrides.confidence, confidence);
  note("--seed", "seed", overrides.seed, e.analysis.seed);
  return notes;
}

}  // namespace abvm::cli
