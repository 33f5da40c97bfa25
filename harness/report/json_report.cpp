#include "report/json_report.hpp"

#include <cmath>

#include "report/findings_json.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json effect_json(const ReportEffect& e) {
  return {{"estimate", number(e.estimate)}, {"ci_low", number(e.low)},          {"ci_high", number(e.high)},
          {"confidence", number(e.confidence)}, {"achieved_confidence", number(e.achieved_confidence)},
          {"method", e.method}};
}

json effect_or_null(const std::optional<ReportEffect>& e) { return e ? effect_json(*e) : json(nullptr); }

json runs_json(const std::vector<ReportRun>& runs) {
  json out = json::array();
  for (const ReportRun& run : runs) {
    json r = {{"index", run.index},
              {"value", number(run.value)},
              {"order", run.order},
              {"run_in_boot", run.run_in_boot},
              {"boot", or_null(run.boot)},
              {"block", or_null(run.block)}};
    // When it ran and how much its pair overlapped: only runs whose journal recorded them.
    if (const auto& t = run.timing) {
      r["timing"] = {{"go", or_null(t->go)},
                     {"start", t->start},
                     {"end", t->end},
                     {"load_end", t->load_end},
                     {"clock_error", t->clock_error}};
    }
    if (run.overlap) r["overlap"] = *run.overlap;
    out.push_back(std::move(r));
  }
  return out;
}

json noise_json(const ReportNoise& n) {
  return {{"between_boot_sd_log", number(n.between_boot_sd)},
          {"within_boot_sd_log", number(n.within_boot_sd)},
          {"pair_sd_log", number(n.pair_sd)},
          {"pair_correlation", number(n.pair_correlation)},
          {"pair_drift_rho", number(n.drift_rho)},
          {"pairs", n.pairs},
          {"blocks_for_half_margin_unpaired", or_null(n.blocks_unpaired)},
          {"blocks_for_half_margin_paired", or_null(n.blocks_paired)}};
}

// A pool's hosts: each one's paired effect, and the test of their agreement (null on one host).
json hosts_json(const std::optional<ReportHosts>& h) {
  if (!h) return nullptr;
  json hosts = json::array();
  for (const auto& x : h->hosts) {
    hosts.push_back({{"host", x.host},
                     {"blocks", x.blocks},
                     {"median_a", number(x.median_a)},
                     {"median_b", number(x.median_b)},
                     {"paired_effect", effect_or_null(x.paired_effect)}});
  }
  return {{"hosts", std::move(hosts)},
          {"agreement_test", "kruskal_wallis"},
          {"h", number(h->h)},
          {"p", number(h->p)},
          {"disagree", h->disagree}};
}

// How much the pairs of runs overlapped and how far apart they started; "max_start_skew_ms" null
// when the design leaves nothing out; "threshold" (the old overlap rule) only as an older report held it.
json overlap_json(const ReportOverlap& o) {
  json out = {{"pairs", o.pairs},
              {"min", number(o.min)},
              {"median", number(o.median)},
              {"voided", o.voided},
              {"start_skew_median_ms", number(o.skew_median_ms)},
              {"start_skew_max_ms", number(o.skew_max_ms)},
              {"max_start_skew_ms", or_null(o.max_start_skew_ms)}};
  if (o.threshold) out["threshold"] = *o.threshold;
  return out;
}

json side_json(const ReportSide& s) {
  json out = {{"n", s.n},
              {"median", number(s.median)},
              {"mean", number(s.mean)},
              {"sd", number(s.sd)},
              {"mad", number(s.mad)},
              {"iqr", number(s.iqr)},
              {"min", number(s.min)},
              {"max", number(s.max)},
              {"cv", number(s.cv)},
              {"outliers", s.outliers},
              {"outliers_tukey", s.outliers_tukey},
              {"outliers_modified_z", s.outliers_modified_z},
              {"outliers_omitted", s.outliers_omitted},
              {"units", s.units},
              {"unit_kind", s.per_boot ? "boot" : "run"},
              {"runs", runs_json(s.runs)},
              {"runs_omitted", s.runs_omitted}};
  if (s.voided_runs) out["voided_runs"] = runs_json(*s.voided_runs);
  return out;
}

json modes_json(const std::vector<ReportMode>& modes) {
  json out = json::array();
  for (const auto& md : modes) {
    out.push_back({{"low", number(md.low)},
                   {"high", number(md.high)},
                   {"a_fraction", number(md.a_fraction)},
                   {"b_fraction", number(md.b_fraction)},
                   {"a_count", md.a_count},
                   {"b_count", md.b_count},
                   {"dominant", md.dominant}});
  }
  return out;
}

json mode_test_json(const std::optional<ReportModeTest>& t) {
  if (!t) return nullptr;
  return {{"test", "fisher_exact"},
          {"p_b_more_in_worse", number(t->p_b_more_in_worse)},
          {"p_a_more_in_worse", number(t->p_a_more_in_worse)},
          {"p_two_sided", number(t->p_two_sided)},
          {"alpha", number(t->alpha)},
          {"b_more_in_worse", t->b_more_in_worse},
          {"a_more_in_worse", t->a_more_in_worse},
          {"dominant_mode_effect", effect_or_null(t->dominant_mode_effect)}};
}

json metric_json(const ReportMetric& m, const ReportModel& report) {
  const ReportEffect& boot = m.bootstrap_median_ratio;
  json out = {{"name", m.name},
              {"unit", m.unit},
              {"better", to_string(m.better)},
              {"judged", m.judged},
              {"a", side_json(m.a)},
              {"b", side_json(m.b)},
              {"effect", effect_json(m.effect)},
              {"primary_estimate", to_string(m.primary_estimate)},
              {"paired_effect", effect_or_null(m.paired_effect)},
              {"all_pairs_effect", effect_or_null(m.all_pairs_effect)},
              {"hosts", hosts_json(m.hosts)},
              {"mann_whitney",
               {{"u", number(m.mann_whitney.u)},
                {"p", number(m.mann_whitney.p)},
                {"p_holm", number(m.mann_whitney.p_holm)},
                {"exact", m.mann_whitney.exact}}},
              {"bootstrap_median_ratio",
               {{"estimate", number(boot.estimate)},
                {"ci_low", number(boot.low)},
                {"ci_high", number(boot.high)},
                {"confidence", number(boot.confidence)}}},
              {"modes", modes_json(m.modes)},
              {"mode_test", mode_test_json(m.mode_test)},
              {"verdict", to_string(m.verdict)},
              {"headline", headline(m, report)},
              {"warnings", sentences(m.findings, Severity::warning)},
              {"notes", sentences(m.findings, Severity::note)},
              {"findings", findings_json(m.findings)},
              {"runs_needed", or_null(m.runs_needed)}};
  // Absent in reports of older abvm, which the model keeps as it read them.
  if (m.unpaired_effect) out["unpaired_effect"] = effect_json(*m.unpaired_effect);
  if (m.noise) out["noise"] = noise_json(*m.noise);
  // Absent, not null, when no run records its overlap: reports of such runs stay as they were.
  if (m.overlap) out["overlap"] = overlap_json(*m.overlap);
  return out;
}

json context_json(const SideContext& c) {
  json accelerators = json::array();
  for (Accelerator a : c.accelerators) accelerators.push_back(to_string(a));
  json out = {{"hosts", c.hosts}, {"accelerators", accelerators}, {"module_params", c.module_params}, {"facts", c.facts}};
  // Absent when the input recorded no run lengths (plain files): such reports stay as they were.
  if (!c.run_lengths.empty()) {
    json lengths = json::array();
    for (const RunLength& l : c.run_lengths) {
      lengths.push_back({{"workload", l.workload}, {"size", l.size}, {"runs", l.runs},
                         {"median_seconds", l.median_seconds ? json(*l.median_seconds) : json(nullptr)}});
    }
    out["run_lengths"] = std::move(lengths);
  }
  return out;
}

json source_json(const ReportSource& source) {
  json src = {{"kind", source.kind}, {"a_label", source.a_label}, {"b_label", source.b_label}};
  if (source.kind == "files") {
    src["a"] = source.a;
    src["b"] = source.b;
  } else {
    src["results_dir"] = source.results_dir;
    if (!source.design.empty()) src["design"] = source.design;
    if (!source.decided_by.empty()) src["decided_by"] = source.decided_by;
  }
  return src;
}

json failures_json(const std::vector<FailedRun>& failures) {
  json out = json::array();
  for (const auto& f : failures) {
    out.push_back({{"side", to_string(f.side)}, {"outcome", f.outcome}, {"what", f.what}, {"source", f.source}});
  }
  return out;
}

json missing_json(const std::vector<MissingData>& missing) {
  json out = json::array();
  for (const MissingData& d : missing) {
    out.push_back({{"workload", d.workload},
                   {"metrics", d.metrics},
                   {"runs", {{"a", d.runs_a}, {"b", d.runs_b}}},
                   {"first_failure", d.first_failure},
                   {"reported", d.reported}});
  }
  return out;
}

}  // namespace

nlohmann::json json_report(const ReportModel& r) {
  json metrics = json::array();
  for (const auto& m : r.metrics) metrics.push_back(metric_json(m, r));
  return {{"schema_version", r.schema_version},
          {"tool", {{"name", "abvm"}, {"version", r.tool_version}}},
          {"verdict", to_string(r.verdict)},
          {"options",
           {{"margin", r.margin},
            {"confidence", r.confidence},
            {"interval_confidence", r.interval_confidence},
            {"seed", r.seed},
            {"bootstrap_resamples", r.bootstrap_resamples},
            {"primary_estimate", to_string(r.primary_estimate)}}},
          {"source", source_json(r.source)},
          {"context", {{"a", context_json(r.context_a)}, {"b", context_json(r.context_b)}}},
          {"failed_runs", {{"a", r.failed_a}, {"b", r.failed_b}}},
          {"failures", failures_json(r.failures)},
          {"warnings", sentences(r.findings, Severity::warning)},
          {"notes", sentences(r.findings, Severity::note)},
          {"findings", findings_json(r.findings)},
          {"missing", missing_json(r.missing)},
          {"metrics", std::move(metrics)}};
}

std::string json_report_text(const ReportModel& report) { return json_report(report).dump(2) + "\n"; }

}  // namespace abvm
