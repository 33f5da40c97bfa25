#include "cli/results_analysis.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "report/json_report.hpp"
#include "report/terminal.hpp"
#include "samples/load.hpp"
#include "samples/select.hpp"
#include "verdict/design_rules.hpp"
#include "verdict/look.hpp"

namespace abvm::cli {

namespace {

AnalysisOptions analysis_options(const Experiment& e, double confidence, const AnalysisOverrides& overrides) {
  AnalysisOptions options = experiment_analysis_options(e, overrides.confidence.value_or(confidence));
  if (overrides.margin) options.margin = *overrides.margin;
  if (overrides.seed) options.seed = *overrides.seed;
  return options;
}

}  // namespace

Decision decide(const Experiment& e, const ResultsDir& dir, const RunEnd& end, const AnalysisOverrides& overrides) {
  // In the stages' order, each once (ARCHITECTURE.md counts it): samples, verdict, report.
  SampleSet samples = select_metrics(load_results_dir(dir.root()), e.analysis.metrics);
  Decision d{.analysis = analyze(std::move(samples), analysis_options(e, end.final_confidence, overrides)),
             .source = {.kind = "results", .results_dir = dir.root().string(), .a_label = e.a.label,
                        .b_label = e.b.label, .design = to_string(e.schedule.design),
                        .decided_by = end.stop_reason}};
  d.report = report_model(d.analysis, d.source);
  d.seconds_per_block = seconds_per_block(end.trial_seconds, e.schedule);
  d.json_text = json_report_text(d.report);
  d.summary = terminal_report(d.report, {.a_label = e.a.label, .b_label = e.b.label, .color = false,
                                           .seconds_per_block = d.seconds_per_block});
  return d;
}

LookDecision sequential_looks(const Experiment& e) {
  // Shared: a std::function copies what it holds, and every copy must keep the one reader.
  auto looks = std::make_shared<LookDecider>(e);
  return [looks](const ResultsDir& dir, double confidence) -> std::optional<std::string> {
    const Verdict v = looks->verdict(dir.root(), confidence);
    if (v == Verdict::inconclusive) return std::nullopt;
    return std::string(to_string(v));
  };
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
