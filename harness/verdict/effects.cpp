// The effects B/A: Hodges-Lehmann shifts on the log scale turned back into ratios, unpaired (every
// unit of both sides) and paired (per-block log ratios), and which of the two decides.
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "stats/descriptive.hpp"

namespace abvm::analysis_steps {

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
  return out;
}

Effect effect_from_shift(const stats::ShiftEstimate& e) {
  Effect r;
  r.estimate = std::exp(e.estimate);
  r.low = std::exp(e.low);
  r.high = std::exp(e.high);
  r.confidence = e.confidence;
  r.achieved_confidence = e.achieved_confidence;
  r.method = e.method;
  return r;
}

// Per-block log ratios log(B/A) of interleaved blocks holding one unit of each side.
std::vector<double> block_log_ratios(const std::vector<Sample>& a_samples, const std::vector<Sample>& b_samples) {
  auto per_block = [](const std::vector<Sample>& side) {
    std::map<int, std::vector<double>> out;
    for (const Sample& s : side) {
      const std::optional<int>& block = s.run().block;
      if (!block || !s.order_known) return std::map<int, std::vector<double>>{};
      out[*block].push_back(s.value);
    }
    return out;
  };
  auto a = per_block(a_samples);
  auto b = per_block(b_samples);
  std::vector<double> d;
  for (auto& [block, av] : a) {
    auto it = b.find(block);
    if (it == b.end()) continue;
    d.push_back(std::log(stats::median(it->second)) - std::log(stats::median(av)));
  }
  return d;
}

// The design's estimate decides: the paired one when it asked for it and there are pairs.
void choose_primary(MetricAnalysis& r, bool paired_primary) {
  if (!paired_primary) return;
  if (!r.paired) {
    r.findings.push_back(PairingUnavailable{});
    return;
  }
  r.effect = *r.paired;
  r.primary = Estimate::paired;
}

}  // namespace abvm::analysis_steps
