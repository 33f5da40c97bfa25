#pragma once
// A sequential run's look (plan/looks.hpp), `abvm run`'s and each `abvm bisect` step's: the verdict
// alone. It is the verdict of the run's full analysis (`abvm run`'s final one, `abvm analyze
// RESULTS_DIR`) of the same results at the same confidence, computed without what does not decide
// it (AnalysisOptions::verdict_only) from the journal read as it grows (samples/load.hpp
// JournalSamplesReader): a look costs about the runs added since the last one, not a parse of the
// whole run so far and its reports.
#include <filesystem>
#include <optional>

#include "config/experiment.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

namespace abvm {

class LookDecider {
 public:
  // `e` must outlive the decider.
  explicit LookDecider(const Experiment& e) : e_(e) {}
  // The experiment's analysis of what `results_dir` holds at `confidence`, verdict_only: the
  // verdicts and the primary effects of the full analysis, nothing else (what `abvm bisect`'s
  // looks judge a step by). Error when its journal holds no run yet or is damaged, as for the full
  // analysis.
  Analysis analysis(const std::filesystem::path& results_dir, double confidence);
  // Its verdict (what `abvm run`'s looks decide by).
  Verdict verdict(const std::filesystem::path& results_dir, double confidence) {
    return analysis(results_dir, confidence).verdict;
  }

 private:
  const Experiment& e_;
  std::filesystem::path results_dir_;
  std::optional<JournalSamplesReader> journal_;  // of results_dir_, kept from look to look
};

}  // namespace abvm
