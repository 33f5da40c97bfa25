#pragma once
// What the analysis makes of an experiment: the rules its design fixes before any data is seen
// (config/design.hpp holds the designs' facts), the options it asks for, and the pace of its
// blocks. `abvm run`'s looks and final analysis, `abvm analyze RESULTS_DIR` and `abvm bisect` all
// ask here.
#include <cstddef>
#include <vector>

#include "config/experiment.hpp"
#include "verdict/analysis.hpp"

namespace abvm {

// `options` with the design's rules applied: designs that pair A with B are analysed as pairs
// (paired_primary); designs whose A and B runs are meant to overlap leave out the pairs whose runs
// started too far apart (max_start_skew_ms = schedule.max_start_skew), while those that alternate
// them by intent (lockstep, same-guest, sequential blocks) leave nothing out and only show the
// overlaps and skews.
AnalysisOptions with_design_rules(AnalysisOptions options, const ScheduleSettings& schedule);

// The analysis an experiment asks for at `confidence`: its [analysis] margin and seed, its
// design's rules.
AnalysisOptions experiment_analysis_options(const Experiment& e, double confidence);

// The lanes that run blocks side by side: one per host CPU set, one when none is given.
std::size_t lane_count(const ScheduleSettings& schedule);

// The wall time one A/B block costs, from the seconds each trial done took (the ledger's): a
// sequential block is two trials one after the other, a block of two guests at once or of one
// guest lasts about as long as one of its trials (DesignTraits::trials_in_block_time), and the
// lanes run their blocks side by side. 0 when no trial is done.
double seconds_per_block(const std::vector<double>& trial_seconds, const ScheduleSettings& schedule);

}  // namespace abvm
