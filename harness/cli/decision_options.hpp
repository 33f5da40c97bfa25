#pragma once
// Options shared by the subcommands that decide from saved measurements (`abvm analyze`,
// `abvm compare`): the analysis settings and the report files to write, declared once so that
// both take the same flags with the same defaults and help.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "core/decision_defaults.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {

// The exit codes of a subcommand that ends in a verdict, for --help footers.
inline constexpr const char* kVerdictExitCodes =
    "Exit codes: 0 no_change or improvement, 1 regression, 2 usage or input error, 3 infrastructure error, "
    "4 inconclusive";

// Defaults from core/decision_defaults.hpp, the same as an experiment file's [analysis].
struct DecisionArgs {
  double margin = kDefaultMargin;
  double confidence = kDefaultConfidence;
  std::uint64_t seed = kDefaultAnalysisSeed;
  std::string json_path, html_path, junit_path;

  AnalysisOptions analysis_options() const;
};

// --margin, --confidence, --seed, --json, --html, --junit.
void add_decision_options(CLI::App& sub, DecisionArgs& args);

}  // namespace abvm::cli
