#include "verdict/look.hpp"

#include "samples/select.hpp"
#include "verdict/design_rules.hpp"

namespace abvm {

Analysis LookDecider::analysis(const std::filesystem::path& results_dir, double confidence) {
  if (!journal_ || results_dir_ != results_dir) {
    results_dir_ = results_dir;
    journal_.emplace(results_dir_);
  }
  AnalysisOptions options = experiment_analysis_options(e_, confidence);
  options.verdict_only = true;
  return analyze(select_metrics(journal_->samples(), e_.analysis.metrics), options);
}

}  // namespace abvm
