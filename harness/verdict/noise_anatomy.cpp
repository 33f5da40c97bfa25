// Where a metric's noise comes from (NoiseAnatomy: between boots, within a boot, per pair, the
// pairing's correlation, drift), what an interval of half the margin costs at that noise, and the
// warning when a paired design's pairs share too little of it.
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "stats/descriptive.hpp"

namespace abvm::analysis_steps {
namespace {

// A paired design's pairing correlation (NoiseAnatomy::pair_correlation) is worth a warning below
// kWeakPairing, from kPairingBlocks complete blocks on, when the boots differ by at least
// kPairingNoiseFloor (sd of ln). Co-scheduled A/A runs on the development host paired at 0.93-0.97
// (README, designs on real guests), runs that drifted apart at 0.04. For normal boot values with
// a true correlation of 0.9 the estimate falls below 0.3 in 0.3 % of experiments of 8 blocks and
// 0.1 % of 10 (0.7 % and 0.2 % with heavy-tailed, bimodal host noise); with no correlation it falls
// below in 78 % of 8 blocks, 82 % of 10, 91 % of 20 (harness/bench/pairing_warning.py: simulations
// of the estimator, 10^5 each).
// Below 8 blocks it is too noisy to tell; below a 2 % sd the boots hardly differ, so the pairing
// has little to remove and its correlation says little.
constexpr double kWeakPairing = 0.3;
constexpr std::size_t kPairingBlocks = 8;
constexpr double kPairingNoiseFloor = 0.02;

// The sample sd of deviations from a mean, summed as they come (the deviations of 2 x 1M units
// kept in a list took 16 MB, more while it grew).
struct Deviations {
  double ss = 0;
  std::size_t n = 0;
  void add(double x) {
    ss += x * x;
    ++n;
  }
  double sd() const { return n < 2 ? kNaN : std::sqrt(ss / static_cast<double>(n - 1)); }
};

double sample_sd(const std::vector<double>& deviations) {
  Deviations d;
  for (double x : deviations) d.add(x);
  return d.sd();
}

}  // namespace

// The metric's noise by source (see NoiseAnatomy), from its units, runs and per-block log ratios d.
NoiseAnatomy noise_anatomy(const MetricAnalysis& r, const std::vector<double>& d, double margin) {
  NoiseAnatomy n;
  Deviations between;
  std::vector<double> within;
  for (const SideAnalysis* side : {&r.a, &r.b}) {
    double sum = 0;
    for (double u : side->units) sum += std::log(u);
    const double mean = side->units.empty() ? 0 : sum / static_cast<double>(side->units.size());
    for (double u : side->units) between.add(std::log(u) - mean);
    if (!side->per_boot) continue;
    std::map<std::string, std::vector<double>> boots;
    for (const Sample& s : side->samples) {
      if (const auto& boot = s.run().boot; boot && s.value > 0) boots[*boot].push_back(std::log(s.value));
    }
    for (auto& [boot, values] : boots) {
      const double mid = stats::median(values);
      for (double v : values) within.push_back(v - mid);
    }
  }
  // Between-boot sd: side means removed (one degree of freedom each).
  const double units = static_cast<double>(between.n);
  n.between_boot_sd = between.n > 3 ? between.sd() * std::sqrt((units - 1.0) / (units - 2.0)) : kNaN;
  n.within_boot_sd = sample_sd(within);
  n.pairs = d.size();
  if (d.size() >= 2) {
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
    std::vector<double> dev;
    for (double x : d) dev.push_back(x - mean);
    n.pair_sd = sample_sd(dev);
    // Var(B - A) = Var(A) + Var(B) - 2 cov: the correlation the pairing bought.
    const double v = n.between_boot_sd * n.between_boot_sd;
    if (v > 0) n.pair_correlation = std::clamp(1 - n.pair_sd * n.pair_sd / (2 * v), -1.0, 1.0);
    std::vector<std::int64_t> order(d.size());
    std::iota(order.begin(), order.end(), 0);
    if (d.size() >= 3) n.drift_rho = spearman_trend(d, order).rho;
  }
  const double alpha = 1 - r.effect.confidence;
  n.blocks_unpaired = blocks_for_half_margin(n.between_boot_sd, margin, true, alpha);
  n.blocks_paired = blocks_for_half_margin(n.pair_sd, margin, false, alpha);
  return n;
}

// A paired design whose pairs do not share the host's noise: the paired estimate buys nothing and
// something kept A's and B's runs apart.
void record_weak_pairing(MetricAnalysis& r, bool paired_design) {
  const NoiseAnatomy& n = r.noise;
  if (!paired_design || n.pairs < kPairingBlocks || !(n.between_boot_sd >= kPairingNoiseFloor) ||
      !(n.pair_correlation < kWeakPairing)) {
    return;
  }
  r.findings.push_back(WeakPairing{
      .metric = r.name, .blocks = n.pairs, .correlation = n.pair_correlation, .between_boot_sd = n.between_boot_sd});
}

}  // namespace abvm::analysis_steps
