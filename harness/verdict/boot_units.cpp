// A side's runs as the units the effects compare (one per boot when a boot holds several runs: the
// boot is the experimental unit), their values checked to be comparable as ratios, their trend with
// run order, and what the units themselves warn about.
#include "verdict/analysis_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "stats/descriptive.hpp"
#include "stats/outliers.hpp"
#include "stats/ranks.hpp"

namespace abvm::analysis_steps {

namespace {

// The runs' values, input order, each checked to be comparable as a ratio.
std::vector<double> run_values(const std::vector<Sample>& samples, const std::string& metric, Side side) {
  std::vector<double> runs;
  runs.reserve(samples.size());
  for (const Sample& x : samples) {
    if (!(x.value > 0) || !std::isfinite(x.value)) {
      throw Error(fmt::format("{}: metric '{}' on side {} has value {}: values must be positive and finite "
                              "(they are compared as ratios)",
                              x.source().empty() ? std::string("input") : x.source(), metric, to_string(side),
                              x.value));
    }
    runs.push_back(x.value);
  }
  return runs;
}

// When a boot holds several runs: the units, one per boot (the median of its runs) and one per run
// without a boot, with their order (their first run's), in that order, so that trend checks see the
// schedule. False (and nothing set) when no boot holds more than one run.
bool group_by_boot(SideAnalysis& s) {
  const std::vector<Sample>& samples = s.samples;
  std::map<std::string, std::vector<std::size_t>> by_boot;
  bool shared = false;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (const auto& boot = samples[i].run().boot) {
      auto& v = by_boot[*boot];
      v.push_back(i);
      shared = shared || v.size() > 1;
    }
  }
  if (!shared) return false;
  std::vector<std::pair<std::int64_t, double>> units;
  for (auto& [boot, idx] : by_boot) {
    std::vector<double> vals;
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    for (std::size_t i : idx) {
      vals.push_back(samples[i].value);
      first = std::min(first, samples[i].order);
    }
    units.emplace_back(first, stats::median(vals));
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].run().boot) units.emplace_back(samples[i].order, samples[i].value);
  }
  std::sort(units.begin(), units.end());
  for (auto& [order, value] : units) {
    s.unit_order.push_back(order);
    s.units.push_back(value);
  }
  return true;
}

}  // namespace

// Groups a side's runs into units: one per boot when any boot holds several runs, else the runs.
// Takes the samples over (2 x 1M runs hold a few hundred MB: one copy is enough; the runs' values
// become the units rather than a second copy of them).
SideAnalysis side_analysis(std::vector<Sample>&& taken, const std::string& metric, Side side) {
  SideAnalysis s;
  s.samples = std::move(taken);
  std::vector<double> runs = run_values(s.samples, metric, side);
  s.per_boot = group_by_boot(s);
  // One sort of the runs serves their summary and outliers and, when the runs are the units, every
  // statistic of the units.
  std::vector<double> sorted_runs = stats::sorted_ascending(runs);
  if (!runs.empty()) {
    s.summary = stats::summarize(runs, sorted_runs);
    s.outliers = stats::find_outliers(runs, sorted_runs, s.summary);
  }
  if (s.per_boot) {
    s.sorted_units = stats::sorted_ascending(s.units);
    return s;
  }
  s.unit_order.reserve(s.samples.size());
  for (const Sample& x : s.samples) s.unit_order.push_back(x.order);
  s.units = std::move(runs);
  s.sorted_units = std::move(sorted_runs);
  return s;
}

namespace {

// Every ratio of two values must be a finite, non-zero double (the effect, the bootstrap and the
// reports are ratios B/A): values more than ~1e304 apart cannot be compared, whatever the unit.
// Names the two runs so that the user can check their units.
constexpr double kMaxLogSpan = 700;  // log(DBL_MAX) is 709.8

const Sample* extreme_run(const std::vector<Sample>& a, const std::vector<Sample>& b, bool largest) {
  const Sample* best = nullptr;
  for (const auto* side : {&a, &b}) {
    for (const Sample& x : *side) {
      if (!best || (largest ? x.value > best->value : x.value < best->value)) best = &x;
    }
  }
  return best;
}

}  // namespace

void check_ratio_range(const MetricAnalysis& m) {
  const Sample* lo = extreme_run(m.a.samples, m.b.samples, false);
  const Sample* hi = extreme_run(m.a.samples, m.b.samples, true);
  if (!lo || std::log(hi->value) - std::log(lo->value) <= kMaxLogSpan) return;
  auto where = [](const Sample& x) { return x.source().empty() ? std::string("input") : x.source(); };
  throw Error(fmt::format("{}: metric '{}' has value {:g}, and {} has {:g}: they are {:.0f} orders of magnitude apart, "
                          "too far for their ratio to be a number; check the units of these inputs",
                          where(*hi), m.name, hi->value, where(*lo), lo->value,
                          (std::log(hi->value) - std::log(lo->value)) / std::log(10.0)));
}

namespace {

// The midranks of run orders: 1, 2, ... for the usual strictly ascending orders, without a sort.
std::vector<double> order_ranks(const std::vector<std::int64_t>& order) {
  const auto not_ascending = [](std::int64_t x, std::int64_t y) { return !(static_cast<double>(x) < static_cast<double>(y)); };
  if (std::adjacent_find(order.begin(), order.end(), not_ascending) == order.end()) {
    std::vector<double> ranks(order.size());
    std::iota(ranks.begin(), ranks.end(), 1.0);
    return ranks;
  }
  return stats::midranks(std::vector<double>(order.begin(), order.end())).ranks;
}

}  // namespace

// Spearman's rank correlation of values against run order, with the t-approximation p-value
// (as scipy.stats.spearmanr).
Trend spearman_trend(const std::vector<double>& values, const std::vector<std::int64_t>& order) {
  Trend t;
  const std::size_t n = values.size();
  if (n < 3) return t;
  auto rv = stats::midranks(values).ranks;
  auto ro = order_ranks(order);
  double mv = std::accumulate(rv.begin(), rv.end(), 0.0) / n;
  double mo = std::accumulate(ro.begin(), ro.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (rv[i] - mv) * (ro[i] - mo);
    sxx += (rv[i] - mv) * (rv[i] - mv);
    syy += (ro[i] - mo) * (ro[i] - mo);
  }
  if (sxx == 0 || syy == 0) return t;
  t.rho = sxy / std::sqrt(sxx * syy);
  double df = static_cast<double>(n) - 2;
  if (std::abs(t.rho) >= 1) {
    t.p = 0;
    return t;
  }
  double stat = t.rho * std::sqrt(df / ((1 - t.rho) * (1 + t.rho)));
  boost::math::students_t dist(df);
  t.p = 2 * boost::math::cdf(boost::math::complement(dist, std::abs(stat)));
  return t;
}

// Runs by index (0-based, input order) as a finding names them: 1-based, the first kListedRuns.
RunList run_list(const std::vector<std::size_t>& idx) {
  RunList out{.count = idx.size()};
  for (std::size_t k = 0; k < idx.size() && k < kListedRuns; ++k) out.first.push_back(idx[k] + 1);
  return out;
}

namespace {

// Google Benchmark warns below 9 repetitions; rank intervals at 95 % need about that many too.
constexpr std::size_t kFewUnits = 10;

}  // namespace

// What the units themselves warn about: too few, unbalanced, outliers, drift.
void record_unit_findings(MetricAnalysis& r, double alpha) {
  const std::size_t na = r.a.units.size(), nb = r.b.units.size();
  const bool per_boot = r.a.per_boot || r.b.per_boot;
  if (na < kFewUnits || nb < kFewUnits) {
    r.findings.push_back(FewUnits{.per_boot = per_boot, .a = na, .b = nb, .runs_needed = r.runs_needed});
  }
  if (r.effect.achieved_confidence + 1e-9 < r.effect.confidence) {
    r.findings.push_back(ConfidenceUnreachable{.per_boot = per_boot,
                                               .a = na,
                                               .b = nb,
                                               .confidence = r.effect.confidence,
                                               .achieved = r.effect.achieved_confidence});
  }
  if (std::max(na, nb) > 2 * std::min(na, nb)) {
    r.findings.push_back(UnbalancedSides{.per_boot = per_boot, .a = na, .b = nb});
  }
  for (auto [side, which] : {std::pair{&r.a, Side::a}, std::pair{&r.b, Side::b}}) {
    if (!side->outliers.any.empty()) r.findings.push_back(Outliers{.side = which, .runs = run_list(side->outliers.any)});
    Trend t = spearman_trend(side->units, side->unit_order);
    if (side->units.size() >= 8 && t.p < alpha) r.findings.push_back(Drift{.side = which, .rho = t.rho, .p = t.p});
  }
}

}  // namespace abvm::analysis_steps
