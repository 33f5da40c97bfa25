// The pairs of runs of a metric: their overlaps and start skews summarised, and the pairs whose runs
// started surely too far apart left out of everything computed, with the findings that say so.
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"

namespace abvm::analysis_steps {

Pairs pair_facts(const std::vector<Sample>& a, const std::vector<Sample>& b) {
  Pairs out;
  for (const auto* side : {&a, &b}) {
    for (const Sample& sample : *side) {
      const RunFacts& s = sample.run();
      if (!s.block) {
        if (s.overlap) out.loose.push_back(*s.overlap);
        continue;
      }
      PairFacts& f = out.paired[{*s.block, s.run_in_boot}];
      if (s.overlap) f.overlap = f.overlap ? std::min(*f.overlap, *s.overlap) : *s.overlap;
      if (s.timing) (side == &a ? f.a : f.b) = s.timing;
    }
  }
  return out;
}

namespace {

bool left_out(const PairFacts& f, std::optional<double> max_start_skew_ms) {
  const auto skew = f.sure_skew_ms();
  return max_start_skew_ms && skew && *skew > *max_start_skew_ms;
}

}  // namespace

std::optional<OverlapSummary> summarize_pairs(const Pairs& pairs, std::optional<double> max_start_skew_ms) {
  std::vector<double> overlaps = pairs.loose, skews;
  OverlapSummary o{.max_start_skew_ms = max_start_skew_ms};
  for (const auto& [key, f] : pairs.paired) {
    if (f.overlap) overlaps.push_back(*f.overlap);
    if (const auto skew = f.skew_ms()) skews.push_back(*skew);
    o.voided += left_out(f, max_start_skew_ms);
  }
  if (overlaps.empty() && skews.empty()) return std::nullopt;
  o.pairs = overlaps.size();
  o.min = overlaps.empty() ? kNaN : *std::min_element(overlaps.begin(), overlaps.end());
  o.median = overlaps.empty() ? kNaN : stats::median(overlaps);
  if (!skews.empty()) {
    o.skew_median_ms = stats::median(skews);
    o.skew_max_ms = *std::max_element(skews.begin(), skews.end());
  }
  return o;
}

// Moves the runs of the pairs the rule leaves out from `side` to `voided`, in order.
void void_runs(std::vector<Sample>& side, std::vector<Sample>& voided, const Pairs& pairs,
               std::optional<double> max_start_skew_ms) {
  std::vector<Sample> kept;
  for (Sample& s : side) {
    const RunFacts& run = s.run();
    const bool out = run.block && left_out(pairs.paired.at({*run.block, run.run_in_boot}), max_start_skew_ms);
    (out ? voided : kept).push_back(std::move(s));
  }
  side = std::move(kept);
}

// A side left with no run once the skewed pairs are out (typically every pair of the metric):
// nothing to compare, inconclusive, never a verdict that looks decided.
void mark_all_voided(MetricAnalysis& r, double alpha) {
  const OverlapSummary& o = *r.overlap;
  r.verdict = Verdict::inconclusive;
  r.effect = {kNaN, kNaN, kNaN, 1 - alpha, 0, "none"};
  r.findings.push_back(AllPairsSkewed{.metric = r.name,
                                      .voided = o.voided,
                                      .pairs = o.pairs,
                                      .max_start_skew_ms = *o.max_start_skew_ms,
                                      .worst_skew_ms = o.skew_max_ms,
                                      .side = r.a.units.empty() ? Side::a : Side::b});
}

// Pairs left out for their start skew (the all-voided case is mark_all_voided's).
void record_voided(MetricAnalysis& r) {
  if (!r.overlap || r.overlap->voided == 0) return;
  const OverlapSummary& o = *r.overlap;
  r.findings.push_back(PairsSkewed{.metric = r.name,
                                   .voided = o.voided,
                                   .pairs = o.pairs,
                                   .max_start_skew_ms = *o.max_start_skew_ms,
                                   .worst_skew_ms = o.skew_max_ms});
}

}  // namespace abvm::analysis_steps
