#include "samples/select.hpp"

namespace abvm {

SampleSet select_metrics(SampleSet samples, const std::vector<MetricSelection>& selection) {
  if (selection.empty()) return samples;
  std::vector<MetricSamples> chosen;
  for (const auto& sel : selection) {
    for (const auto& m : samples.metrics) {
      if (m.name != sel.name) continue;
      chosen.push_back(m);
      if (sel.better) chosen.back().better = *sel.better;
    }
  }
  samples.metrics = std::move(chosen);
  return samples;
}

}  // namespace abvm
