#pragma once
// The metrics an experiment asks to decide on ([analysis] metrics): only those, in that order,
// each with the direction the experiment gives it (or its natural one).
#include <vector>

#include "config/experiment.hpp"
#include "samples/sample.hpp"

namespace abvm {

// `selection` empty: every metric, unchanged.
SampleSet select_metrics(SampleSet samples, const std::vector<MetricSelection>& selection);

}  // namespace abvm
