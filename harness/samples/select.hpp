#pragma once
// The metrics an experiment asks to decide on ([analysis] metrics): only those, in that order,
// each with the direction the experiment gives it (or its natural one).
#include <vector>

#include "config/experiment.hpp"
#include "samples/sample.hpp"

namespace abvm {

// Cost metrics (samples/cost.hpp) are always kept, and judged only when `selection` names them.
// `selection` empty: every metric, unchanged but for that. A metric asked for that the samples lack is kept as
// MissingData (with the metrics its workload does report, if any), never dropped; workloads without
// data that no selected metric names are not asked for and go.
SampleSet select_metrics(SampleSet samples, const std::vector<MetricSelection>& selection);

}  // namespace abvm
