#include "cli/decision_options.hpp"

namespace abvm::cli {

AnalysisOptions DecisionArgs::analysis_options() const {
  AnalysisOptions options;
  options.margin = margin;
  options.confidence = confidence;
  options.seed = seed;
  return options;
}

void add_decision_options(CLI::App& sub, DecisionArgs& args) {
  sub.add_option("--margin", args.margin, "Margin of practical interest, as a fraction (0.05 = 5 %)")
      ->capture_default_str();
  sub.add_option("--confidence", args.confidence, "Family-wise confidence level")->capture_default_str();
  sub.add_option("--seed", args.seed, "Seed of the bootstrap interval")->capture_default_str();
  sub.add_option("--json", args.json_path, "Write the JSON report to this path");
  sub.add_option("--html", args.html_path, "Write the HTML report (self-contained, with plots) to this path");
  sub.add_option("--junit", args.junit_path, "Write JUnit XML (one test case per metric) to this path");
}

}  // namespace abvm::cli
