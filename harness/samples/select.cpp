#include "samples/select.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "samples/cost.hpp"

namespace abvm {

namespace {

// "<workload>.<metric>": workload names hold no '.' (config/keys.cpp).
std::string workload_of(const std::string& metric) { return metric.substr(0, metric.find('.')); }

}  // namespace

SampleSet select_metrics(SampleSet samples, const std::vector<MetricSelection>& selection) {
  const auto named = [&](const MetricSamples& m) {
    return std::any_of(selection.begin(), selection.end(), [&](const MetricSelection& s) { return s.name == m.name; });
  };
  if (selection.empty()) {
    for (auto& m : samples.metrics) m.judged = !is_cost_metric(m.name);
    return samples;
  }
  std::vector<MetricSamples> chosen;
  std::vector<MissingData> missing;
  for (const auto& sel : selection) {
    bool found = false;
    for (const auto& m : samples.metrics) {
      if (m.name != sel.name) continue;
      found = true;
      chosen.push_back(m);
      if (sel.better) chosen.back().better = *sel.better;
    }
    if (found) continue;
    // Asked for and absent: never left out in silence (issue 20).
    const std::string workload = workload_of(sel.name);
    auto it = std::find_if(missing.begin(), missing.end(), [&](const MissingData& d) { return d.workload == workload; });
    if (it == missing.end()) {
      const auto failed = std::find_if(samples.missing.begin(), samples.missing.end(),
                                       [&](const MissingData& d) { return d.workload == workload; });
      MissingData d = failed != samples.missing.end() ? *failed : MissingData{.workload = workload};
      if (failed == samples.missing.end()) {
        // The workload has runs with data, just not this metric: say which it has.
        for (const auto& m : samples.metrics) {
          if (workload_of(m.name) == workload) d.reported.push_back(m.name);
        }
      }
      missing.push_back(std::move(d));
      it = std::prev(missing.end());
    }
    it->metrics.push_back(sel.name);
  }
  // Cost metrics are reported whether asked for or not: judged only when named.
  for (const auto& m : samples.metrics) {
    if (is_cost_metric(m.name) && !named(m)) {
      chosen.push_back(m);
      chosen.back().judged = false;
    }
  }
  samples.metrics = std::move(chosen);
  samples.missing = std::move(missing);
  return samples;
}

}  // namespace abvm
