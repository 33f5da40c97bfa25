#include "verdict/design_rules.hpp"

#include <algorithm>
#include <numeric>

#include "config/design.hpp"

namespace abvm {

AnalysisOptions with_design_rules(AnalysisOptions options, const ScheduleSettings& schedule) {
  const DesignTraits& design = traits(schedule.design);
  options.paired_primary = design.pairs_sides;
  options.max_start_skew_ms = design.overlap_by_intent
                                  ? std::optional<double>(static_cast<double>(schedule.max_start_skew.count()))
                                  : std::nullopt;
  return options;
}

AnalysisOptions experiment_analysis_options(const Experiment& e, double confidence) {
  AnalysisOptions options;
  options.margin = e.analysis.margin;
  options.confidence = confidence;
  options.seed = e.analysis.seed;
  return with_design_rules(options, e.schedule);
}

std::size_t lane_count(const ScheduleSettings& schedule) { return std::max<std::size_t>(1, schedule.cpu_sets.size()); }

double seconds_per_block(const std::vector<double>& trial_seconds, const ScheduleSettings& schedule) {
  if (trial_seconds.empty()) return 0;
  const double mean_trial = std::accumulate(trial_seconds.begin(), trial_seconds.end(), 0.0) /
                            static_cast<double>(trial_seconds.size());
  return traits(schedule.design).trials_in_block_time * mean_trial / static_cast<double>(lane_count(schedule));
}

}  // namespace abvm
