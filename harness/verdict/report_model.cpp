#include "verdict/report_model.hpp"

#include <algorithm>

namespace abvm {
namespace {

ReportEffect effect_of(const Effect& e) {
  return {.estimate = e.estimate, .low = e.low, .high = e.high, .confidence = e.confidence,
          .achieved_confidence = e.achieved_confidence, .method = e.method};
}

std::optional<ReportEffect> effect_of(const std::optional<Effect>& e) {
  if (!e) return std::nullopt;
  return effect_of(*e);
}

ReportRun run_of(const Sample& s, std::size_t index) {
  const RunFacts& run = s.run();
  ReportRun r{.index = index, .value = s.value, .order = s.order, .run_in_boot = run.run_in_boot, .boot = run.boot,
              .timing = run.timing, .overlap = run.overlap};
  if (run.block) r.block = *run.block;
  if (r.timing) r.timing->fill.reset();  // not reported
  return r;
}

// All runs up to kMaxListedRuns, else that many evenly spaced over the input order (first and
// last included), so that plots of the listing still show the whole run.
std::vector<ReportRun> listed_runs(const std::vector<Sample>& samples) {
  const std::size_t n = samples.size();
  const std::size_t listed = std::min(n, kMaxListedRuns);
  std::vector<ReportRun> runs;
  runs.reserve(listed);
  for (std::size_t k = 0; k < listed; ++k) {
    const std::size_t i = listed < 2 ? k : k * (n - 1) / (listed - 1);
    runs.push_back(run_of(samples[i], i));
  }
  return runs;
}

std::vector<std::uint64_t> first_indices(const std::vector<std::size_t>& idx) {
  return {idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(std::min(idx.size(), kMaxListedRuns))};
}

// `with_voided`: the metric's runs record their overlap, so the side lists the runs left out for
// too little of it (an empty list when none was).
ReportSide side_of(const SideAnalysis& s, bool with_voided) {
  const auto& x = s.summary;
  ReportSide out{.n = x.n, .median = x.median, .mean = x.mean, .sd = x.sd, .mad = x.mad, .iqr = x.iqr,
                 .min = x.min, .max = x.max, .cv = x.cv,
                 .outliers = first_indices(s.outliers.any),
                 .outliers_tukey = first_indices(s.outliers.tukey),
                 .outliers_modified_z = first_indices(s.outliers.modified_z),
                 .outliers_omitted = s.outliers.any.size() - std::min(s.outliers.any.size(), kMaxListedRuns),
                 .units = s.units.size(),
                 .per_boot = s.per_boot,
                 .runs = listed_runs(s.samples)};
  out.runs_omitted = s.samples.size() - out.runs.size();
  if (with_voided) out.voided_runs = listed_runs(s.voided);
  return out;
}

ReportNoise noise_of(const NoiseAnatomy& n) {
  return {.between_boot_sd = n.between_boot_sd, .within_boot_sd = n.within_boot_sd, .pair_sd = n.pair_sd,
          .pair_correlation = n.pair_correlation, .drift_rho = n.drift_rho, .pairs = n.pairs,
          .blocks_unpaired = n.blocks_unpaired, .blocks_paired = n.blocks_paired};
}

std::optional<ReportHosts> hosts_of(const std::optional<HostAgreement>& h) {
  if (!h) return std::nullopt;
  ReportHosts out{.h = h->h, .p = h->p, .disagree = h->disagree};
  for (const auto& x : h->hosts) {
    out.hosts.push_back({.host = x.host, .blocks = x.blocks, .median_a = x.median_a, .median_b = x.median_b,
                         .paired_effect = effect_of(x.effect)});
  }
  return out;
}

void modes_of(const ModeAnalysis& m, ReportMetric& out) {
  for (std::size_t i = 0; i < m.split.modes.size(); ++i) {
    const auto& md = m.split.modes[i];
    out.modes.push_back({.low = md.low, .high = md.high, .a_fraction = md.a_fraction, .b_fraction = md.b_fraction,
                         .a_count = md.a_count, .b_count = md.b_count, .dominant = i == m.split.dominant});
  }
  if (!m.fisher) return;
  out.mode_test = ReportModeTest{.p_two_sided = m.fisher->p_two_sided, .p_b_more_in_worse = m.fisher->p_greater,
                                 .p_a_more_in_worse = m.fisher->p_less, .alpha = m.alpha,
                                 .b_more_in_worse = m.b_more_in_worse, .a_more_in_worse = m.a_more_in_worse,
                                 .dominant_mode_effect = effect_of(m.dominant_shift)};
}

ReportMetric metric_of(const MetricAnalysis& m) {
  ReportMetric out{.name = m.name, .unit = m.unit, .better = m.better, .judged = m.judged, .verdict = m.verdict,
                   .a = side_of(m.a, m.overlap.has_value()), .b = side_of(m.b, m.overlap.has_value()),
                   .effect = effect_of(m.effect), .primary_estimate = m.primary,
                   .paired_effect = effect_of(m.paired), .unpaired_effect = effect_of(m.unpaired),
                   .all_pairs_effect = effect_of(m.all_pairs),
                   .noise = noise_of(m.noise), .hosts = hosts_of(m.hosts)};
  if (m.overlap) {
    out.overlap = ReportOverlap{.pairs = m.overlap->pairs, .voided = m.overlap->voided, .min = m.overlap->min,
                                .median = m.overlap->median, .skew_median_ms = m.overlap->skew_median_ms,
                                .skew_max_ms = m.overlap->skew_max_ms, .max_start_skew_ms = m.overlap->max_start_skew_ms};
  }
  out.mann_whitney = {.u = m.mw_u, .p = m.mw_p, .p_holm = m.mw_p_holm, .exact = m.mw_exact};
  out.bootstrap_median_ratio = {.estimate = m.bootstrap.estimate, .low = m.bootstrap.low, .high = m.bootstrap.high,
                                .confidence = m.bootstrap.confidence,
                                .achieved_confidence = std::numeric_limits<double>::quiet_NaN()};
  modes_of(m.modes, out);
  out.runs_needed = m.runs_needed;
  out.findings = m.findings;
  return out;
}

}  // namespace

ReportModel report_model(const Analysis& analysis, const ReportSource& source) {
  ReportModel r{.tool_version = ABVM_VERSION,
                .verdict = analysis.verdict,
                .margin = analysis.options.margin,
                .confidence = analysis.options.confidence,
                .interval_confidence = analysis.interval_confidence,
                .seed = analysis.options.seed,
                .bootstrap_resamples = analysis.options.bootstrap_resamples,
                .primary_estimate = analysis.options.paired_primary ? Estimate::paired : Estimate::unpaired,
                .source = source,
                .context_a = analysis.context_a,
                .context_b = analysis.context_b,
                .failed_a = analysis.failed_a,
                .failed_b = analysis.failed_b,
                .failures = analysis.failures,
                .findings = analysis.findings,
                .missing = analysis.missing};
  for (const auto& m : analysis.metrics) r.metrics.push_back(metric_of(m));
  return r;
}

OrientedEffect oriented_effect(const ReportMetric& m) {
  return oriented_effect(m.effect.estimate, m.effect.low, m.effect.high, m.better);
}

}  // namespace abvm
