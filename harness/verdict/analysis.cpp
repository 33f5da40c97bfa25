#include "verdict/analysis.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "samples/cost.hpp"
#include "stats/hodges_lehmann.hpp"
#include "stats/holm.hpp"
#include "stats/kruskal.hpp"
#include "stats/ranks.hpp"

namespace abvm {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Beyond this many units per side we stop promising that more runs would settle it.
constexpr std::uint64_t kMaxRunsNeeded = 10000;
// Google Benchmark warns below 9 repetitions; rank intervals at 95 % need about that many too.
constexpr std::size_t kFewUnits = 10;

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

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
  return out;
}

// Groups a side's runs into units: one per boot when any boot holds several runs.
// Takes the samples over (2 x 1M runs hold a few hundred MB: one copy is enough).
SideAnalysis side_analysis(std::vector<Sample>&& taken, const std::string& metric, Side side) {
  SideAnalysis s;
  s.samples = std::move(taken);
  const std::vector<Sample>& samples = s.samples;
  s.runs.reserve(samples.size());
  for (const Sample& x : samples) {
    if (!(x.value > 0) || !std::isfinite(x.value)) {
      throw Error(fmt::format("{}: metric '{}' on side {} has value {}: values must be positive and finite "
                              "(they are compared as ratios)",
                              x.source.text().empty() ? std::string("input") : x.source.text(), metric, to_string(side),
                              x.value));
    }
    s.runs.push_back(x.value);
  }
  std::map<std::string, std::vector<std::size_t>> by_boot;
  bool shared = false;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].boot) {
      auto& v = by_boot[*samples[i].boot];
      v.push_back(i);
      shared = shared || v.size() > 1;
    }
  }
  if (shared) {
    s.per_boot = true;
    // Units in the order of their first run, so that trend checks see the schedule.
    std::vector<std::pair<std::int64_t, double>> units;
    std::vector<double> loose;
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
      if (!samples[i].boot) units.emplace_back(samples[i].order, samples[i].value);
    }
    std::sort(units.begin(), units.end());
    for (auto& [order, value] : units) {
      s.unit_order.push_back(order);
      s.units.push_back(value);
    }
  } else {
    s.units = s.runs;
    for (const Sample& x : samples) s.unit_order.push_back(x.order);
  }
  if (!s.runs.empty()) {
    s.summary = stats::summarize(s.runs);
    s.outliers = stats::find_outliers(s.runs);
  }
  return s;
}

// ---- a pair's runs: their overlap (a fact) and their start skew (what may leave a pair out) ----
// A pair: the A run and the B run of one block with one run index. A run without a block is a pair
// of its own (nothing to pair it with, nothing to leave out).
using PairKey = std::pair<int, int>;

struct PairFacts {
  std::optional<double> overlap;      // the smaller overlap of the pair's runs (they carry the same)
  std::optional<RunTiming> a, b;      // each run's timing, when recorded

  // How far apart the runs started on the host's clock (ms), as measured, and as surely so: less
  // both runs' clock errors. None of it can depend on how long the runs then took.
  std::optional<double> skew_ms() const {
    if (!a || !b) return std::nullopt;
    return 1000 * std::abs(a->start - b->start);
  }
  std::optional<double> sure_skew_ms() const {
    const auto skew = skew_ms();
    if (!skew) return std::nullopt;
    return *skew - 1000 * (a->clock_error + b->clock_error);
  }
};

struct Pairs {
  std::map<PairKey, PairFacts> paired;
  std::vector<double> loose;          // overlaps of the runs without a block
};

Pairs pair_facts(const std::vector<Sample>& a, const std::vector<Sample>& b) {
  Pairs out;
  for (const auto* side : {&a, &b}) {
    for (const Sample& s : *side) {
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

bool left_out(const PairFacts& f, std::optional<double> max_start_skew_ms) {
  const auto skew = f.sure_skew_ms();
  return max_start_skew_ms && skew && *skew > *max_start_skew_ms;
}

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
    const bool out = s.block && left_out(pairs.paired.at({*s.block, s.run_in_boot}), max_start_skew_ms);
    (out ? voided : kept).push_back(std::move(s));
  }
  side = std::move(kept);
}

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

void check_ratio_range(const MetricAnalysis& m) {
  const Sample* lo = extreme_run(m.a.samples, m.b.samples, false);
  const Sample* hi = extreme_run(m.a.samples, m.b.samples, true);
  if (!lo || std::log(hi->value) - std::log(lo->value) <= kMaxLogSpan) return;
  auto where = [](const Sample& x) { return x.source.text().empty() ? std::string("input") : x.source.text(); };
  throw Error(fmt::format("{}: metric '{}' has value {:g}, and {} has {:g}: they are {:.0f} orders of magnitude apart, "
                          "too far for their ratio to be a number; check the units of these inputs",
                          where(*hi), m.name, hi->value, where(*lo), lo->value,
                          (std::log(hi->value) - std::log(lo->value)) / std::log(10.0)));
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
      if (!s.block || !s.order_known) return std::map<int, std::vector<double>>{};
      out[*s.block].push_back(s.value);
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

// A pool's hosts: each host's paired effect over its own blocks, and the Kruskal-Wallis test of
// whether the hosts' per-block log ratios come from one distribution. nullopt on one host.
std::optional<HostAgreement> host_agreement(const std::vector<Sample>& a, const std::vector<Sample>& b, double alpha) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<Sample>, std::vector<Sample>>> by_host;
  for (const auto* side : {&a, &b}) {
    for (const Sample& s : *side) {
      if (s.host.empty()) return std::nullopt;
      if (!by_host.contains(s.host)) order.push_back(s.host);
      (side == &a ? by_host[s.host].first : by_host[s.host].second).push_back(s);
    }
  }
  if (order.size() < 2) return std::nullopt;
  HostAgreement out;
  std::vector<std::vector<double>> groups;
  for (const auto& host : order) {
    const auto& [ha, hb] = by_host[host];
    HostEffect h{.host = host};
    const auto d = block_log_ratios(ha, hb);
    h.blocks = d.size();
    const auto values = [](const std::vector<Sample>& v) {
      std::vector<double> x;
      for (const Sample& s : v) x.push_back(s.value);
      return x;
    };
    if (!ha.empty()) h.median_a = stats::median(values(ha));
    if (!hb.empty()) h.median_b = stats::median(values(hb));
    if (d.size() >= 2) {
      h.effect = effect_from_shift(stats::hodges_lehmann_paired(d, 1 - alpha));
      groups.push_back(d);
    }
    out.hosts.push_back(std::move(h));
  }
  if (groups.size() >= 2) {
    const auto k = stats::kruskal_wallis(groups);
    out.h = k.h;
    out.p = k.p;
    out.disagree = k.p < alpha;
  }
  return out;
}

// What the pool's hosts say: a disagreement beyond chance is a warning, a host far slower or
// faster than the others a note.
void record_hosts(MetricAnalysis& r) {
  if (!r.hosts) return;
  const HostAgreement& h = *r.hosts;
  std::vector<HostFigure> figures;
  for (const auto& x : h.hosts) {
    HostFigure f{.host = x.host, .blocks = x.blocks};
    if (x.effect) {
      f.estimate = x.effect->estimate;
      f.low = x.effect->low;
      f.high = x.effect->high;
    }
    figures.push_back(std::move(f));
  }
  if (h.disagree) {
    r.findings.push_back(HostsDisagree{.p = h.p, .hosts = std::move(figures)});
  } else {
    r.findings.push_back(HostsAgree{.p = h.p, .hosts = std::move(figures)});
  }
  for (const auto& x : h.hosts) {
    std::vector<double> others;
    for (const auto& y : h.hosts) {
      if (&y != &x && y.median_a > 0) others.push_back(y.median_a);
    }
    if (others.empty() || x.median_a <= 0) continue;
    const double ratio = x.median_a / stats::median(others);
    if (ratio < 0.5 || ratio > 2) r.findings.push_back(HostFarOff{.host = x.host, .ratio = ratio});
  }
}

struct Trend {
  double rho = 0, p = 1;
};

// Spearman's rank correlation of values against run order, with the t-approximation p-value
// (as scipy.stats.spearmanr).
Trend spearman_trend(const std::vector<double>& values, const std::vector<std::int64_t>& order) {
  Trend t;
  const std::size_t n = values.size();
  if (n < 3) return t;
  std::vector<double> ord(order.begin(), order.end());
  auto rv = stats::midranks(values).ranks;
  auto ro = stats::midranks(ord).ranks;
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

// Orients a ratio B/A so that > 1 means B is better.
double oriented(double ratio, Better better) { return better == Better::higher ? ratio : 1.0 / ratio; }

// Runs by index (0-based, input order) as a finding names them: 1-based, the first kListedRuns.
RunList run_list(const std::vector<std::size_t>& idx) {
  RunList out{.count = idx.size()};
  for (std::size_t k = 0; k < idx.size() && k < kListedRuns; ++k) out.first.push_back(idx[k] + 1);
  return out;
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

}  // namespace

const char* to_string(Estimate e) { return e == Estimate::paired ? "paired" : "unpaired"; }

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::no_change: return "no_change";
    case Verdict::improvement: return "improvement";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::regression: return "regression";
  }
  return "?";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v : {Verdict::regression, Verdict::improvement, Verdict::no_change, Verdict::inconclusive}) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

Verdict worst(Verdict x, Verdict y) { return static_cast<int>(x) >= static_cast<int>(y) ? x : y; }

int exit_code_for(Verdict v) {
  switch (v) {
    case Verdict::regression: return static_cast<int>(ExitCode::regression);
    case Verdict::inconclusive: return static_cast<int>(ExitCode::inconclusive);
    default: return static_cast<int>(ExitCode::ok);
  }
}

namespace {

void check_analysis_inputs(const SampleSet& samples, const AnalysisOptions& options) {
  if (!(options.margin > 0 && options.margin < 1)) {
    throw Error(fmt::format("margin {} is out of range: give a fraction between 0 and 1 (0.05 = 5 %)", options.margin));
  }
  if (!(options.confidence > 0.5 && options.confidence < 1)) {
    throw Error(fmt::format("confidence {} is out of range: give a level between 0.5 and 1 (e.g. 0.95)",
                            options.confidence));
  }
  if (options.max_start_skew_ms && !(*options.max_start_skew_ms >= 0)) {
    throw Error(fmt::format("max_start_skew {} ms is out of range: give 0 ms or more", *options.max_start_skew_ms));
  }
  // Without failed runs an empty input is a mistake; with them, every run failed: that is the result.
  if (samples.metrics.empty() && samples.failures.empty() && samples.missing.empty()) {
    throw Error("no metrics to compare: the inputs hold no measurements");
  }
}

// A metric with no valid unit on one side: nothing to compute, inconclusive.
void mark_one_side_empty(MetricAnalysis& r, double alpha) {
  r.verdict = Verdict::inconclusive;
  r.effect = {kNaN, kNaN, kNaN, 1 - alpha, 0, "none"};
  r.findings.push_back(NoValidRuns{.metric = r.name, .side = r.a.units.empty() ? Side::a : Side::b});
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

// Which modes are worse than the dominant one by more than the margin (ModeAnalysis::worse).
std::vector<bool> worse_modes(const stats::ModeSplit& split, Better better, double margin) {
  std::vector<bool> out(split.modes.size(), false);
  const double reference = split.modes[split.dominant].median;
  for (std::size_t i = 0; i < split.modes.size(); ++i) {
    out[i] = reference > 0 && oriented(split.modes[i].median / reference, better) < 1 - margin;
  }
  return out;
}

// Modes on the pooled units with one set of cut points for both sides (la, lb: log units).
void analyze_modes(MetricAnalysis& r, const std::vector<double>& la, const std::vector<double>& lb, double alpha,
                   double margin, bool verdict_only) {
  r.modes.split = stats::find_modes(r.a.units, r.b.units);
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
  std::vector<double> da, db;
  for (double v : la) if (stats::mode_of(r.modes.split, std::exp(v)) == r.modes.split.dominant) da.push_back(v);
  for (double v : lb) if (stats::mode_of(r.modes.split, std::exp(v)) == r.modes.split.dominant) db.push_back(v);
  if (!da.empty() && !db.empty()) r.modes.dominant_shift = effect_from_shift(stats::hodges_lehmann_shift(da, db, 1 - alpha));
}

// The verdict from the oriented interval and estimate against the margin: a regression (an
// improvement) is significant and estimated beyond the margin; B more often in a mode worse by more
// than the margin makes a no_change or an inconclusive verdict a regression, never an improvement.
void decide(MetricAnalysis& r, double margin) {
  const OrientedEffect oe = oriented_effect(r);
  const double lo = oe.low, hi = oe.high;
  const double dm = margin;
  // Too few units for any interval at the asked confidence: the widest one that exists covers
  // less, so whatever side of 1 it falls on proves nothing at that level.
  const bool interval_reaches_confidence = r.effect.achieved_confidence + 1e-9 >= r.effect.confidence;
  if (!interval_reaches_confidence) {
    r.verdict = Verdict::inconclusive;
  } else if (lo > 1 - dm && hi < 1 + dm) {
    r.verdict = Verdict::no_change;
    if (lo > 1 || hi < 1) r.findings.push_back(SignificantInsideMargin{.margin = dm});
  } else if (hi < 1 && oe.estimate < 1 - dm) {
    r.verdict = Verdict::regression;
  } else if (lo > 1 && oe.estimate > 1 + dm) {
    r.verdict = Verdict::improvement;
  } else {
    // A significant shift whose estimate lies inside the margin is not called a regression: its
    // interval still reaches past the margin, and more runs would most often narrow it to inside
    // (a B 2.5 % slower at a 5 % margin: 45 % regression, 55 % no_change under a significance-only
    // rule; harness/bench/decision_rule_tool.cpp). It waits for the runs that settle it.
    r.verdict = Verdict::inconclusive;
    if (hi < 1 || lo > 1) {
      r.findings.push_back(
          SignificantEstimatedInsideMargin{.worse = hi < 1, .margin = dm, .shift = std::abs(oe.estimate - 1)});
    }
  }
  if (r.modes.b_more_in_worse && (r.verdict == Verdict::no_change || r.verdict == Verdict::inconclusive)) {
    r.findings.push_back(RegressionByModes{});
    r.verdict = Verdict::regression;
  }
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

// Blocks an interval of half-width ln(1 + margin/2) needs with an estimate of sd `sd` per unit
// (normal approximation; Hodges-Lehmann's efficiency 3/pi); `per_side`: two independent sides.
std::optional<std::uint64_t> blocks_for_half_margin(double sd, double margin, bool per_side, double alpha) {
  if (!(sd > 0)) return std::nullopt;
  const double z = stats::normal_upper_quantile(alpha / 2);
  const double n = (per_side ? 2 : 1) * std::pow(z * sd / std::log1p(margin / 2), 2) * std::numbers::pi / 3;
  return n < static_cast<double>(kMaxRunsNeeded) ? static_cast<std::uint64_t>(std::ceil(n)) : kMaxRunsNeeded;
}

double sample_sd(const std::vector<double>& deviations) {
  if (deviations.size() < 2) return kNaN;
  double ss = 0;
  for (double x : deviations) ss += x * x;
  return std::sqrt(ss / static_cast<double>(deviations.size() - 1));
}

// The metric's noise by source (see NoiseAnatomy), from its units, runs and per-block log ratios d.
NoiseAnatomy noise_anatomy(const MetricAnalysis& r, const std::vector<double>& d, double margin) {
  NoiseAnatomy n;
  std::vector<double> between, within;
  for (const SideAnalysis* side : {&r.a, &r.b}) {
    const auto l = logs(side->units);
    const double mean = l.empty() ? 0 : std::accumulate(l.begin(), l.end(), 0.0) / static_cast<double>(l.size());
    for (double x : l) between.push_back(x - mean);
    if (!side->per_boot) continue;
    std::map<std::string, std::vector<double>> boots;
    for (const Sample& s : side->samples) {
      if (s.boot && s.value > 0) boots[*s.boot].push_back(std::log(s.value));
    }
    for (auto& [boot, values] : boots) {
      const double mid = stats::median(values);
      for (double v : values) within.push_back(v - mid);
    }
  }
  // Between-boot sd: side means removed (one degree of freedom each).
  n.between_boot_sd = between.size() > 3 ? sample_sd(between) * std::sqrt((between.size() - 1.0) / (between.size() - 2.0)) : kNaN;
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

MetricAnalysis analyze_metric(MetricSamples&& m, const AnalysisOptions& options, double alpha,
                              std::vector<double>& pvalues);

// The primary estimate with every pair in: the same analysis with nothing left out (nullopt when a
// side has no run at all).
std::optional<Effect> all_pairs_effect(MetricSamples&& m, AnalysisOptions options, double alpha) {
  options.max_start_skew_ms.reset();
  options.verdict_only = true;
  std::vector<double> unused;
  const MetricAnalysis all = analyze_metric(std::move(m), options, alpha, unused);
  if (!std::isfinite(all.effect.estimate)) return std::nullopt;
  return all.effect;
}

// One metric, tested at level alpha; its Mann-Whitney p-value (1 when a side has no valid
// unit) goes to pvalues for the Holm adjustment across metrics.
MetricAnalysis analyze_metric(MetricSamples&& m, const AnalysisOptions& options, double alpha,
                              std::vector<double>& pvalues) {
  MetricAnalysis r;
  r.name = m.name;
  r.unit = m.unit;
  r.better = m.better;
  r.judged = m.judged;
  // Pairs that started too far apart are left out before the runs become units; the estimate over
  // every pair is made from a copy of them all.
  const Pairs pairs = pair_facts(m.a, m.b);
  r.overlap = summarize_pairs(pairs, options.max_start_skew_ms);
  std::vector<Sample> voided_a, voided_b;
  const bool had_a = !m.a.empty(), had_b = !m.b.empty();
  std::optional<MetricSamples> every_pair;
  if (r.overlap && r.overlap->voided > 0) {
    every_pair = m;
    void_runs(m.a, voided_a, pairs, options.max_start_skew_ms);
    void_runs(m.b, voided_b, pairs, options.max_start_skew_ms);
  }
  r.a = side_analysis(std::move(m.a), m.name, Side::a);
  r.b = side_analysis(std::move(m.b), m.name, Side::b);
  r.a.voided = std::move(voided_a);
  r.b.voided = std::move(voided_b);
  check_ratio_range(r);
  if (r.a.units.empty() || r.b.units.empty()) {
    const bool voided_away = (had_a && r.a.units.empty()) || (had_b && r.b.units.empty());
    if (r.overlap && r.overlap->voided > 0 && voided_away) mark_all_voided(r, alpha);
    else mark_one_side_empty(r, alpha);
    if (every_pair) r.all_pairs = all_pairs_effect(std::move(*every_pair), options, alpha);
    pvalues.push_back(1);
    return r;
  }
  auto la = logs(r.a.units), lb = logs(r.b.units);
  r.unpaired = effect_from_shift(stats::hodges_lehmann_shift(la, lb, 1 - alpha));
  r.effect = r.unpaired;
  auto d = block_log_ratios(r.a.samples, r.b.samples);
  if (d.size() >= 2 && (options.paired_primary || !options.verdict_only)) {
    r.paired = effect_from_shift(stats::hodges_lehmann_paired(d, 1 - alpha));
  }
  choose_primary(r, options.paired_primary);
  if (!options.verdict_only) {
    r.noise = noise_anatomy(r, d, options.margin);
    r.hosts = host_agreement(r.a.samples, r.b.samples, alpha);
  }
  auto mw = stats::mann_whitney(r.a.units, r.b.units);
  r.mw_u = mw.u;
  r.mw_p = mw.p;
  r.mw_exact = mw.exact;
  pvalues.push_back(mw.p);
  if (!options.verdict_only) {
    r.bootstrap = stats::bootstrap_median_ratio(r.a.units, r.b.units, 1 - alpha, options.seed,
                                                options.bootstrap_resamples);
  }
  analyze_modes(r, la, lb, alpha, options.margin, options.verdict_only);
  decide(r, options.margin);
  if (r.verdict == Verdict::inconclusive) {
    const bool paired = r.primary == Estimate::paired;
    // n pairs act like n units on each side of an unpaired comparison: the interval narrows as 1/sqrt(n).
    r.runs_needed = estimate_runs_needed(std::log(r.effect.estimate), std::log(r.effect.low), std::log(r.effect.high),
                                         paired ? d.size() : la.size(), paired ? d.size() : lb.size(), options.margin);
    // Too few units for the level: at least the size that can reach it, even when the interval
    // has no width to extrapolate from (every value repeated).
    const bool too_few = r.effect.achieved_confidence + 1e-9 < r.effect.confidence;
    if (r.runs_needed || too_few) {
      r.runs_needed = std::max(r.runs_needed.value_or(0),
                               paired ? min_pairs_for_confidence(1 - alpha) : min_units_for_confidence(1 - alpha));
    }
  }
  r.all_pairs = every_pair ? all_pairs_effect(std::move(*every_pair), options, alpha) : std::optional<Effect>(r.effect);
  record_unit_findings(r, alpha);
  record_voided(r);
  record_weak_pairing(r, options.paired_primary);
  record_hosts(r);
  record_modes(r, r.a.samples, r.b.samples, r.modes.alpha);
  return r;
}

WorkloadMissing workload_missing(const MissingData& d) {
  return {.workload = d.workload,
          .metrics = d.metrics,
          .runs_a = d.runs_a,
          .runs_b = d.runs_b,
          .first_failure = d.first_failure,
          .reported = d.reported};
}

// Experiment-wide findings: hosts, accelerators, failed runs, missing workloads.
void record_experiment_findings(Analysis& out, const SampleSet& samples) {
  auto as_set = [](const auto& v) { return std::set<typename std::decay_t<decltype(v)>::value_type>(v.begin(), v.end()); };
  std::size_t mismatched = 0;
  for (const auto& f : samples.failures) mismatched += f.outcome == "mismatch";
  // Before anything else: the comparison is not the one the experiment asked for.
  if (mismatched > 0) out.findings.push_back(SidesMismatch{.runs = mismatched});
  if (!samples.context_a.hosts.empty() && !samples.context_b.hosts.empty() &&
      as_set(samples.context_a.hosts) != as_set(samples.context_b.hosts)) {
    out.findings.push_back(DifferentHosts{});
  }
  if (!samples.context_a.accelerators.empty() && !samples.context_b.accelerators.empty() &&
      as_set(samples.context_a.accelerators) != as_set(samples.context_b.accelerators)) {
    out.findings.push_back(DifferentAccelerators{});
  }
  for (const auto* ctx : {&samples.context_a, &samples.context_b}) {
    if (std::find(ctx->accelerators.begin(), ctx->accelerators.end(), Accelerator::tcg) != ctx->accelerators.end()) {
      out.findings.push_back(RanUnderTcg{});
      if (std::any_of(samples.metrics.begin(), samples.metrics.end(), [](const MetricSamples& m) {
            return is_cost_metric(m.name) && m.name.find(".host_cpu_") != std::string::npos;
          })) {
        out.findings.push_back(HostCostUnderTcg{});
      }
      break;
    }
  }
  if (out.failed_a + out.failed_b > 0) {
    out.findings.push_back(RunsFailed{.a = out.failed_a, .b = out.failed_b});
    std::size_t lo = std::min(out.failed_a, out.failed_b), hi = std::max(out.failed_a, out.failed_b);
    if (hi >= 3 && hi >= 3 * std::max<std::size_t>(lo, 1)) {
      out.findings.push_back(OneSideFailsMore{.side = out.failed_a > out.failed_b ? Side::a : Side::b});
    }
  }
  if (out.metrics.empty()) out.findings.push_back(NothingToCompare{});
  // Built in place: GCC 12 takes a moved temporary variant for uninitialised (-Wmaybe-uninitialized).
  for (const MissingData& d : samples.missing) {
    out.findings.emplace_back(std::in_place_type<WorkloadMissing>, workload_missing(d));
  }
}

}  // namespace

OrientedEffect oriented_effect(const MetricAnalysis& r) {
  return oriented_effect(r.effect.estimate, r.effect.low, r.effect.high, r.better);
}

OrientedEffect oriented_effect(double estimate, double low, double high, Better better) {
  const bool higher = better == Better::higher;
  return {.estimate = oriented(estimate, better),
          .low = oriented(higher ? low : high, better),
          .high = oriented(higher ? high : low, better)};
}

Analysis analyze(const SampleSet& samples, const AnalysisOptions& options) {
  return analyze(SampleSet(samples), options);
}

Analysis analyze(SampleSet&& samples, const AnalysisOptions& options) {
  check_analysis_inputs(samples, options);
  Analysis out;
  out.options = options;
  out.failures = samples.failures;
  for (const std::string& note : samples.notes) out.findings.push_back(InputNote{.text = note});
  out.context_a = samples.context_a;
  out.context_b = samples.context_b;
  for (const auto& f : samples.failures) (f.side == Side::a ? out.failed_a : out.failed_b)++;

  // With no metric (every trial failed) the level is the family's own, not 1 - inf. The family is
  // the judged metrics: one reported beside them changes none of their figures.
  const auto judged = static_cast<std::size_t>(
      std::count_if(samples.metrics.begin(), samples.metrics.end(), [](const MetricSamples& m) { return m.judged; }));
  const double k = static_cast<double>(std::max<std::size_t>(1, judged));
  const double alpha = (1 - options.confidence) / k;  // Bonferroni level per metric
  out.interval_confidence = 1 - alpha;

  std::vector<double> pvalues;
  for (MetricSamples& m : samples.metrics) out.metrics.push_back(analyze_metric(std::move(m), options, alpha, pvalues));
  // Holm over the judged metrics; a metric outside the family keeps its own adjusted the same way alone.
  std::vector<double> family;
  for (std::size_t i = 0; i < out.metrics.size(); ++i) {
    if (out.metrics[i].judged) family.push_back(pvalues[i]);
  }
  const auto adjusted = stats::holm_adjust(family);
  for (std::size_t i = 0, j = 0; i < out.metrics.size(); ++i) {
    out.metrics[i].mw_p_holm = out.metrics[i].judged ? adjusted[j++] : std::min(1.0, pvalues[i] * k);
  }

  record_experiment_findings(out, samples);
  out.verdict = judged == 0 ? Verdict::inconclusive : Verdict::no_change;
  for (const auto& r : out.metrics) {
    if (r.judged) out.verdict = worst(out.verdict, r.verdict);
  }
  // A workload asked about and never measured leaves the question unanswered (see the header).
  out.missing = samples.missing;
  if (!out.missing.empty()) out.verdict = Verdict::inconclusive;
  return out;
}

}  // namespace abvm
