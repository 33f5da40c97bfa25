// The modes rule (verdict/analysis.hpp, step 5): which modes of the pooled units are worse than the
// dominant one by more than the margin, whether B spends more units than A in them (Fisher,
// one-sided), the shift inside the dominant mode, and what the modes say as findings. What the rule
// does to the verdict is decide()'s (decision.cpp).
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "stats/fisher.hpp"
#include "stats/modes.hpp"

namespace abvm::analysis_steps {
namespace {

// Which modes are worse than the dominant one by more than the margin (ModeAnalysis::worse).
std::vector<bool> worse_modes(const stats::ModeSplit& split, Better better, double margin) {
  std::vector<bool> out(split.modes.size(), false);
  const double reference = split.modes[split.dominant].median;
  for (std::size_t i = 0; i < split.modes.size(); ++i) {
    out[i] = reference > 0 && oriented(split.modes[i].median / reference, better) < 1 - margin;
  }
  return out;
}

// The logs whose values (exp of them) fall in the dominant mode. Logs of ascending units ascend, so
// these are one range of them, taken as it is (at 2 x 1M units a copy took 11 MB); gathered into
// `store` should they ever not be.
std::span<const double> in_dominant(const stats::ModeSplit& split, const std::vector<double>& logs,
                                    std::vector<double>& store) {
  std::size_t first = logs.size(), last = 0, count = 0;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    if (stats::mode_of(split, std::exp(logs[i])) != split.dominant) continue;
    first = std::min(first, i);
    last = i;
    ++count;
  }
  if (count == 0) return {};
  if (count == last - first + 1) return std::span(logs).subspan(first, count);
  for (double v : logs) {
    if (stats::mode_of(split, std::exp(v)) == split.dominant) store.push_back(v);
  }
  return store;
}

}  // namespace

// Modes on the pooled units with one set of cut points for both sides (la, lb: log units).
void analyze_modes(MetricAnalysis& r, const std::vector<double>& la, const std::vector<double>& lb, double alpha,
                   double margin, bool verdict_only) {
  r.modes.split = stats::find_modes(r.a.sorted_units, r.b.sorted_units);
  r.modes.alpha = alpha / 2;
  if (r.modes.split.modes.size() < 2) return;
  r.modes.worse = worse_modes(r.modes.split, r.better, margin);
  auto worse = [&](double v) { return static_cast<bool>(r.modes.worse[stats::mode_of(r.modes.split, v)]); };
  std::uint64_t bw = 0, aw = 0;
  for (double v : r.b.units) bw += worse(v);
  for (double v : r.a.units) aw += worse(v);
  r.modes.fisher = stats::fisher_exact(bw, r.b.units.size() - bw, aw, r.a.units.size() - aw);
  r.modes.b_more_in_worse = r.modes.fisher->p_greater < r.modes.alpha;
  r.modes.a_more_in_worse = r.modes.fisher->p_less < r.modes.alpha;
  if (verdict_only) return;  // the dominant mode's own shift decides nothing
  std::vector<double> a_store, b_store;
  const auto da = in_dominant(r.modes.split, la, a_store), db = in_dominant(r.modes.split, lb, b_store);
  if (!da.empty() && !db.empty()) r.modes.dominant_shift = effect_from_shift(stats::hodges_lehmann_shift(da, db, 1 - alpha));
}

void record_modes(MetricAnalysis& r, const std::vector<Sample>& a_samples, const std::vector<Sample>& b_samples,
                  double alpha) {
  const auto& split = r.modes.split;
  if (split.modes.size() < 2) return;
  Multimodal multimodal{.metric = r.name, .unit = r.unit};
  for (const auto& mode : split.modes) {
    multimodal.modes.push_back(
        {.low = mode.low, .high = mode.high, .a_fraction = mode.a_fraction, .b_fraction = mode.b_fraction});
  }
  r.findings.push_back(std::move(multimodal));
  if (r.modes.b_more_in_worse) {
    r.findings.push_back(
        MoreInWorseModes{.side = Side::b, .per_boot = r.a.per_boot, .p = r.modes.fisher->p_greater, .alpha = alpha});
  }
  if (r.modes.a_more_in_worse) {
    r.findings.push_back(
        MoreInWorseModes{.side = Side::a, .per_boot = r.a.per_boot, .p = r.modes.fisher->p_less, .alpha = alpha});
  }
  // Runs in the same positions on both sides falling into worse modes point at the host, not
  // the kernel: only meaningful when each file lists its side's runs in order, side by side.
  bool positional = !a_samples.empty() && a_samples.size() == b_samples.size() && !r.a.per_boot && !r.b.per_boot &&
                    std::none_of(a_samples.begin(), a_samples.end(), [](const Sample& s) { return s.order_known; });
  if (!positional) return;
  auto worse = [&](double v) { return static_cast<bool>(r.modes.worse[stats::mode_of(split, v)]); };
  std::uint64_t both = 0, only_a = 0, only_b = 0, neither = 0;
  std::vector<std::size_t> same;
  for (std::size_t i = 0; i < a_samples.size(); ++i) {
    bool wa = worse(a_samples[i].value), wb = worse(b_samples[i].value);
    if (wa && wb) {
      ++both;
      same.push_back(i);
    } else if (wa) {
      ++only_a;
    } else if (wb) {
      ++only_b;
    } else {
      ++neither;
    }
  }
  if (both < 2) return;
  auto f = stats::fisher_exact(both, only_a, only_b, neither);
  if (f.p_greater < 0.05) r.findings.push_back(SamePositionSlowdowns{.runs = run_list(same), .p = f.p_greater});
}

}  // namespace abvm::analysis_steps
