#include "cli/results_analysis.hpp"

#include <fmt/format.h>

#include "report/terminal.hpp"
#include "samples/load.hpp"
#include "samples/select.hpp"

namespace abvm::cli {

Decision decide(const Experiment& e, const ResultsDir& dir, double confidence, const AnalysisOverrides& overrides) {
  AnalysisOptions options;
  options.margin = overrides.margin.value_or(e.analysis.margin);
  options.confidence = overrides.confidence.value_or(confidence);
  options.seed = overrides.seed.value_or(e.analysis.seed);
  Decision d{.analysis = analyze(select_metrics(load_results_dir(dir.root()), e.analysis.metrics), options),
             .source = {.kind = "results", .results_dir = dir.root().string(), .a_label = e.a.label,
                        .b_label = e.b.label}};
  d.json_text = json_report_text(d.analysis, d.source);
  d.summary = terminal_report(d.analysis, {.a_label = e.a.label, .b_label = e.b.label, .color = false});
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
