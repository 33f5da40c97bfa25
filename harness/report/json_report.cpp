#include "report/json_report.hpp"

#include <algorithm>
#include <cmath>

#include "report/findings_json.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json effect_json(const Effect& e) {
  return {{"estimate", number(e.estimate)}, {"ci_low", number(e.low)},          {"ci_high", number(e.high)},
          {"confidence", number(e.confidence)}, {"achieved_confidence", number(e.achieved_confidence)},
          {"method", e.method}};
}

// The runs listed: all of them up to kMaxListedRuns, else that many evenly spaced over the input
// order (first and last included), so that plots of the listing still show the whole run.
json listed_runs(const std::vector<Sample>& samples) {
  const std::size_t n = samples.size();
  const std::size_t listed = std::min(n, kMaxListedRuns);
  json runs = json::array();
  for (std::size_t k = 0; k < listed; ++k) {
    const std::size_t i = listed < 2 ? k : k * (n - 1) / (listed - 1);
    const Sample& sample = samples[i];
    json r = {{"index", i},
              {"value", number(sample.value)},
              {"order", sample.order},
              {"run_in_boot", sample.run_in_boot}};
    r["boot"] = sample.boot ? json(*sample.boot) : json(nullptr);
    r["block"] = sample.block ? json(*sample.block) : json(nullptr);
    // When it ran and how much its pair overlapped: only runs whose journal recorded them.
    if (const auto& t = sample.timing) {
      r["timing"] = {{"go", t->go ? json(*t->go) : json(nullptr)},
                     {"start", t->start},
                     {"end", t->end},
                     {"load_end", t->load_end},
                     {"clock_error", t->clock_error}};
    }
    if (sample.overlap) r["overlap"] = *sample.overlap;
    runs.push_back(std::move(r));
  }
  return runs;
}

// Outlier indices, the first kMaxListedRuns of them.
json first_indices(const std::vector<std::size_t>& idx) {
  const auto listed = static_cast<std::ptrdiff_t>(std::min(idx.size(), kMaxListedRuns));
  return std::vector<std::size_t>(idx.begin(), idx.begin() + listed);
}

json noise_json(const NoiseAnatomy& n) {
  const auto count = [](const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {{"between_boot_sd_log", number(n.between_boot_sd)},
          {"within_boot_sd_log", number(n.within_boot_sd)},
          {"pair_sd_log", number(n.pair_sd)},
          {"pair_correlation", number(n.pair_correlation)},
          {"pair_drift_rho", number(n.drift_rho)},
          {"pairs", n.pairs},
          {"blocks_for_half_margin_unpaired", count(n.blocks_unpaired)},
          {"blocks_for_half_margin_paired", count(n.blocks_paired)}};
}

// A pool's hosts: each one's paired effect, and the test of their agreement (null on one host).
json hosts_json(const std::optional<HostAgreement>& h) {
  if (!h) return nullptr;
  json hosts = json::array();
  for (const auto& x : h->hosts) {
    hosts.push_back({{"host", x.host},
                     {"blocks", x.blocks},
                     {"median_a", number(x.median_a)},
                     {"median_b", number(x.median_b)},
                     {"paired_effect", x.effect ? effect_json(*x.effect) : json(nullptr)}});
  }
  return {{"hosts", std::move(hosts)},
          {"agreement_test", "kruskal_wallis"},
          {"h", number(h->h)},
          {"p", number(h->p)},
          {"disagree", h->disagree}};
}

// How much the pairs of runs overlapped; "threshold" null when the design leaves nothing out.
json overlap_json(const OverlapSummary& o) {
  return {{"pairs", o.pairs},
          {"min", number(o.min)},
          {"median", number(o.median)},
          {"voided", o.voided},
          {"threshold", o.threshold ? json(*o.threshold) : json(nullptr)}};
}

// `with_voided`: the metric's runs record their overlap, so the side lists the runs left out for
// too little of it (an empty list when none was), in the same shape as "runs".
json side_json(const SideAnalysis& s, bool with_voided) {
  const auto& x = s.summary;
  json runs = listed_runs(s.samples);
  const std::size_t omitted = s.samples.size() - runs.size();
  json out = {{"n", x.n},
          {"median", number(x.median)},
          {"mean", number(x.mean)},
          {"sd", number(x.sd)},
          {"mad", number(x.mad)},
          {"iqr", number(x.iqr)},
          {"min", number(x.min)},
          {"max", number(x.max)},
          {"cv", number(x.cv)},
          {"outliers", first_indices(s.outliers.any)},
          {"outliers_tukey", first_indices(s.outliers.tukey)},
          {"outliers_modified_z", first_indices(s.outliers.modified_z)},
          {"outliers_omitted", s.outliers.any.size() - std::min(s.outliers.any.size(), kMaxListedRuns)},
          {"units", s.units.size()},
          {"unit_kind", s.per_boot ? "boot" : "run"},
          {"runs", std::move(runs)},
          {"runs_omitted", omitted}};
  if (with_voided) out["voided_runs"] = listed_runs(s.voided);
  return out;
}

json metric_json(const MetricAnalysis& m, double margin) {
  json modes = json::array();
  for (std::size_t i = 0; i < m.modes.split.modes.size(); ++i) {
    const auto& md = m.modes.split.modes[i];
    modes.push_back({{"low", number(md.low)},
                     {"high", number(md.high)},
                     {"a_fraction", number(md.a_fraction)},
                     {"b_fraction", number(md.b_fraction)},
                     {"a_count", md.a_count},
                     {"b_count", md.b_count},
                     {"dominant", i == m.modes.split.dominant}});
  }
  json mode_test = nullptr;
  if (m.modes.fisher) {
    mode_test = {{"test", "fisher_exact"},
                 {"p_b_more_in_worse", number(m.modes.fisher->p_greater)},
                 {"p_a_more_in_worse", number(m.modes.fisher->p_less)},
                 {"p_two_sided", number(m.modes.fisher->p_two_sided)},
                 {"alpha", number(m.modes.alpha)},
                 {"b_more_in_worse", m.modes.b_more_in_worse},
                 {"a_more_in_worse", m.modes.a_more_in_worse}};
    mode_test["dominant_mode_effect"] = m.modes.dominant_shift ? effect_json(*m.modes.dominant_shift) : json(nullptr);
  }
  json out = {{"name", m.name},
              {"unit", m.unit},
              {"better", to_string(m.better)},
              {"a", side_json(m.a, m.overlap.has_value())},
              {"b", side_json(m.b, m.overlap.has_value())},
              {"effect", effect_json(m.effect)},
              {"primary_estimate", to_string(m.primary)},
              {"unpaired_effect", effect_json(m.unpaired)},
              {"paired_effect", m.paired ? effect_json(*m.paired) : json(nullptr)},
              {"noise", noise_json(m.noise)},
              {"hosts", hosts_json(m.hosts)},
              {"mann_whitney",
               {{"u", number(m.mw_u)}, {"p", number(m.mw_p)}, {"p_holm", number(m.mw_p_holm)}, {"exact", m.mw_exact}}},
              {"bootstrap_median_ratio",
               {{"estimate", number(m.bootstrap.estimate)},
                {"ci_low", number(m.bootstrap.low)},
                {"ci_high", number(m.bootstrap.high)},
                {"confidence", number(m.bootstrap.confidence)}}},
              {"modes", std::move(modes)},
              {"mode_test", std::move(mode_test)},
              {"verdict", to_string(m.verdict)},
              {"headline", headline(m, margin)},
              {"warnings", sentences(m.findings, Severity::warning)},
              {"notes", sentences(m.findings, Severity::note)},
              {"findings", findings_json(m.findings)}};
  out["runs_needed"] = m.runs_needed ? json(*m.runs_needed) : json(nullptr);
  // Absent, not null, when no run records its overlap: reports of such runs stay as they were.
  if (m.overlap) out["overlap"] = overlap_json(*m.overlap);
  return out;
}

json context_json(const SideContext& c) {
  json accelerators = json::array();
  for (Accelerator a : c.accelerators) accelerators.push_back(to_string(a));
  return {{"hosts", c.hosts}, {"accelerators", accelerators}, {"module_params", c.module_params}, {"facts", c.facts}};
}

}  // namespace

nlohmann::json json_report(const Analysis& analysis, const ReportSource& source) {
  json metrics = json::array();
  for (const auto& m : analysis.metrics) metrics.push_back(metric_json(m, analysis.options.margin));
  json failures = json::array();
  for (const auto& f : analysis.failures) {
    failures.push_back({{"side", to_string(f.side)}, {"outcome", f.outcome}, {"what", f.what}, {"source", f.source}});
  }
  json missing = json::array();
  for (const MissingData& d : analysis.missing) {
    missing.push_back({{"workload", d.workload},
                       {"metrics", d.metrics},
                       {"runs", {{"a", d.runs_a}, {"b", d.runs_b}}},
                       {"first_failure", d.first_failure},
                       {"reported", d.reported}});
  }
  json src = {{"kind", source.kind}, {"a_label", source.a_label}, {"b_label", source.b_label}};
  if (source.kind == "files") {
    src["a"] = source.a;
    src["b"] = source.b;
  } else {
    src["results_dir"] = source.results_dir;
    if (!source.design.empty()) src["design"] = source.design;
    if (!source.decided_by.empty()) src["decided_by"] = source.decided_by;
  }
  return {{"schema_version", 1},
          {"tool", {{"name", "abvm"}, {"version", ABVM_VERSION}}},
          {"verdict", to_string(analysis.verdict)},
          {"options",
           {{"margin", analysis.options.margin},
            {"confidence", analysis.options.confidence},
            {"interval_confidence", analysis.interval_confidence},
            {"seed", analysis.options.seed},
            {"bootstrap_resamples", analysis.options.bootstrap_resamples},
            {"primary_estimate", analysis.options.paired_primary ? "paired" : "unpaired"}}},
          {"source", std::move(src)},
          {"context", {{"a", context_json(analysis.context_a)}, {"b", context_json(analysis.context_b)}}},
          {"failed_runs", {{"a", analysis.failed_a}, {"b", analysis.failed_b}}},
          {"failures", std::move(failures)},
          {"warnings", sentences(analysis.findings, Severity::warning)},
          {"notes", sentences(analysis.findings, Severity::note)},
          {"findings", findings_json(analysis.findings)},
          {"missing", std::move(missing)},
          {"metrics", std::move(metrics)}};
}

std::string json_report_text(const Analysis& analysis, const ReportSource& source) {
  return json_report(analysis, source).dump(2) + "\n";
}

}  // namespace abvm
