// analyze(): each metric through the steps of verdict/analysis_steps.hpp in order (pairs left out,
// units, effects, noise, hosts, tests, modes, the decision, runs needed, findings), the family's Holm
// adjustment, and the experiment's verdict over the judged metrics.
#include "verdict/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "stats/hodges_lehmann.hpp"
#include "stats/holm.hpp"
#include "verdict/analysis_steps.hpp"

namespace abvm {
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
  using analysis_steps::kNaN;
  r.verdict = Verdict::inconclusive;
  r.effect = {kNaN, kNaN, kNaN, 1 - alpha, 0, "none"};
  r.findings.push_back(NoValidRuns{.metric = r.name, .side = r.a.units.empty() ? Side::a : Side::b});
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
  using namespace analysis_steps;
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
  // The statistics of the units below depend on their values only, not their order: each takes
  // them ascending, sorted once (logs of ascending values ascend too).
  auto la = logs(r.a.sorted_units), lb = logs(r.b.sorted_units);
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
  auto mw = stats::mann_whitney(r.a.sorted_units, r.b.sorted_units);
  r.mw_u = mw.u;
  r.mw_p = mw.p;
  r.mw_exact = mw.exact;
  pvalues.push_back(mw.p);
  if (!options.verdict_only) {
    r.bootstrap = stats::bootstrap_median_ratio(r.a.sorted_units, r.b.sorted_units, 1 - alpha, options.seed,
                                                options.bootstrap_resamples);
  }
  analyze_modes(r, la, lb, alpha, options.margin, options.verdict_only);
  // Done with the logs: freed before the trend ranks the units (at 2 x 1M units, 16 MB of the peak).
  std::vector<double>().swap(la);
  std::vector<double>().swap(lb);
  decide(r, options.margin);
  if (r.verdict == Verdict::inconclusive) r.runs_needed = runs_needed_to_settle(r, d.size(), options.margin, alpha);
  r.all_pairs = every_pair ? all_pairs_effect(std::move(*every_pair), options, alpha) : std::optional<Effect>(r.effect);
  record_unit_findings(r, alpha);
  record_voided(r);
  record_weak_pairing(r, options.paired_primary);
  record_hosts(r);
  record_modes(r, r.a.samples, r.b.samples, r.modes.alpha);
  return r;
}

}  // namespace

Analysis analyze(const SampleSet& samples, const AnalysisOptions& options) {
  return analyze(SampleSet(samples), options);
}

Analysis analyze(SampleSet&& samples, const AnalysisOptions& options) {
  check_analysis_inputs(samples, options);
  Analysis out;
  out.options = options;
  out.failures = samples.failures;
  // Built in place: GCC 12 takes a moved temporary variant for uninitialised (-Wmaybe-uninitialized).
  for (const std::string& note : samples.notes) {
    out.findings.emplace_back(std::in_place_type<InputNote>, InputNote{.text = note});
  }
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

  analysis_steps::record_experiment_findings(out, samples);
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
