// How many units (boots or runs per side, or blocks) would likely settle an inconclusive verdict,
// and how many blocks an interval of half the margin takes at a given noise (the noise anatomy's).
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "stats/ranks.hpp"

namespace abvm::analysis_steps {
namespace {

// Beyond this many units per side we stop promising that more runs would settle it.
constexpr std::uint64_t kMaxRunsNeeded = 10000;

// Units per side that would likely make the interval decisive, assuming the estimate stays and
// the interval's half-width shrinks like 1/sqrt(harmonic sample size).
std::optional<std::uint64_t> estimate_runs_needed(double est, double lo, double hi, std::size_t n, std::size_t m,
                                                  double margin) {
  if (n == 0 || m == 0) return std::nullopt;
  double half = (hi - lo) / 2;
  if (!(half > 0)) return std::nullopt;
  double lo_m = std::log(1 - margin), hi_m = std::log(1 + margin);
  // Widest half-width that would settle it: equivalence or a clear sign.
  double target = std::abs(est);
  if (est > lo_m && est < hi_m) target = std::max(target, std::min(est - lo_m, hi_m - est));
  if (!(target > 0)) return kMaxRunsNeeded;
  double h = static_cast<double>(n) * m / (n + m);
  double h_needed = h * (half / target) * (half / target);
  double per_side = std::ceil(2 * h_needed);
  std::uint64_t now = std::max(n, m);
  if (!(per_side < static_cast<double>(kMaxRunsNeeded))) return kMaxRunsNeeded;
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(per_side), now + 1);
}

// The fewest units per side (equal sides) whose widest Mann-Whitney interval, [min, max] of the
// pairwise differences, covers `confidence`: it covers 1 - 2 / C(2n, n).
std::uint64_t min_units_for_confidence(double confidence) {
  for (std::uint64_t n = 1; n < 64; ++n) {
    double c = 1;  // C(2n, n)
    for (std::uint64_t i = 1; i <= n; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
    if (1 - 2 / c + 1e-12 >= confidence) return n;
  }
  return 64;
}

// The fewest pairs whose widest signed-rank interval, [min, max] of the Walsh averages, covers
// `confidence`: it covers 1 - 2 / 2^n.
std::uint64_t min_pairs_for_confidence(double confidence) {
  std::uint64_t n = 1;
  while (n < 64 && 1 - 2 / std::ldexp(1.0, static_cast<int>(n)) + 1e-12 < confidence) ++n;
  return n;
}

}  // namespace

// Blocks an interval of half-width ln(1 + margin/2) needs with an estimate of sd `sd` per unit
// (normal approximation; Hodges-Lehmann's efficiency 3/pi); `per_side`: two independent sides.
std::optional<std::uint64_t> blocks_for_half_margin(double sd, double margin, bool per_side, double alpha) {
  if (!(sd > 0)) return std::nullopt;
  const double z = stats::normal_upper_quantile(alpha / 2);
  const double n = (per_side ? 2 : 1) * std::pow(z * sd / std::log1p(margin / 2), 2) * std::numbers::pi / 3;
  return n < static_cast<double>(kMaxRunsNeeded) ? static_cast<std::uint64_t>(std::ceil(n)) : kMaxRunsNeeded;
}

// An inconclusive metric's units per side likely to settle it (MetricAnalysis::runs_needed): blocks
// for a paired primary estimate, of which it has `pairs`.
std::optional<std::uint64_t> runs_needed_to_settle(const MetricAnalysis& r, std::size_t pairs, double margin,
                                                   double alpha) {
  const bool paired = r.primary == Estimate::paired;
  // n pairs act like n units on each side of an unpaired comparison: the interval narrows as 1/sqrt(n).
  std::optional<std::uint64_t> needed =
      estimate_runs_needed(std::log(r.effect.estimate), std::log(r.effect.low), std::log(r.effect.high),
                           paired ? pairs : r.a.units.size(), paired ? pairs : r.b.units.size(), margin);
  // Too few units for the level: at least the size that can reach it, even when the interval
  // has no width to extrapolate from (every value repeated).
  const bool too_few = r.effect.achieved_confidence + 1e-9 < r.effect.confidence;
  if (needed || too_few) {
    needed = std::max(needed.value_or(0),
                      paired ? min_pairs_for_confidence(1 - alpha) : min_units_for_confidence(1 - alpha));
  }
  return needed;
}

}  // namespace abvm::analysis_steps
