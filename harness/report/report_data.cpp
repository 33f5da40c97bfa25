#include "report/report_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/json_read.hpp"
#include "verdict/verdict_json.hpp"
#include "report/findings_json.hpp"

namespace abvm {
namespace {

// null is a number that was not finite when written.
double number_or_null(const JsonField& f, std::string_view key) {
  return f.required<std::optional<double>>(key).value_or(std::numeric_limits<double>::quiet_NaN());
}

// The effects of report/schema.json's "effect"; the bootstrap interval has no method and no
// achieved confidence.
ReportEffect effect_of(const JsonField& n, bool bootstrap = false) {
  ReportEffect e{.estimate = number_or_null(n, "estimate"),
                 .low = number_or_null(n, "ci_low"),
                 .high = number_or_null(n, "ci_high"),
                 .confidence = number_or_null(n, "confidence"),
                 .achieved_confidence = std::numeric_limits<double>::quiet_NaN()};
  if (bootstrap) return e;
  e.achieved_confidence = number_or_null(n, "achieved_confidence");
  e.method = n.required<std::string>("method");
  return e;
}

std::optional<ReportEffect> effect_or_null(const JsonField& n) {
  if (n.json().is_null()) return std::nullopt;
  return effect_of(n);
}

RunTiming timing_of(const JsonField& n) {
  RunTiming t{.start = n.required<double>("start"), .end = n.required<double>("end"), .load_end = n.required<double>("load_end"),
              .clock_error = n.required<double>("clock_error")};
  t.go = n.required<std::optional<double>>("go");
  return t;
}

std::vector<ReportRun> runs_of(const JsonField& n) {
  std::vector<ReportRun> runs;
  for (const JsonField& r : n.elements()) {
    ReportRun run{.index = r.required<std::uint64_t>("index"), .value = number_or_null(r, "value"), .order = r.required<std::int64_t>("order"),
                  .run_in_boot = r.required<std::int64_t>("run_in_boot"), .block = r.required<std::optional<std::int64_t>>("block")};
    run.boot = r.required<std::optional<std::string>>("boot");
    if (r.has("timing")) run.timing = timing_of(r.member("timing", "an object"));
    if (r.has("overlap")) run.overlap = r.required<double>("overlap");
    runs.push_back(std::move(run));
  }
  return runs;
}

ReportSide side_of(const JsonField& n) {
  ReportSide s{.n = n.required<std::uint64_t>("n"),
               .median = number_or_null(n, "median"),
               .mean = number_or_null(n, "mean"),
               .sd = number_or_null(n, "sd"),
               .mad = number_or_null(n, "mad"),
               .iqr = number_or_null(n, "iqr"),
               .min = number_or_null(n, "min"),
               .max = number_or_null(n, "max"),
               .cv = number_or_null(n, "cv"),
               .outliers = n.required<std::vector<std::uint64_t>>("outliers")};
  // Absent in reports of older abvm.
  if (n.has("outliers_tukey")) s.outliers_tukey = n.required<std::vector<std::uint64_t>>("outliers_tukey");
  if (n.has("outliers_modified_z")) s.outliers_modified_z = n.required<std::vector<std::uint64_t>>("outliers_modified_z");
  s.outliers_omitted = n.required<std::uint64_t>("outliers_omitted");
  s.units = n.required<std::uint64_t>("units");
  const JsonField kind = n.member("unit_kind", "\"boot\" or \"run\"");
  const std::string k = kind.as<std::string>();
  if (k != "boot" && k != "run") kind.expected("\"boot\" or \"run\"");
  s.per_boot = k == "boot";
  s.runs = runs_of(n.member("runs", "a list"));
  s.runs_omitted = n.required<std::uint64_t>("runs_omitted");
  if (n.has("voided_runs")) s.voided_runs = runs_of(n.member("voided_runs", "a list"));
  return s;
}

ReportMode mode_of(const JsonField& n) {
  return {.low = number_or_null(n, "low"),
          .high = number_or_null(n, "high"),
          .a_fraction = n.required<double>("a_fraction"),
          .b_fraction = n.required<double>("b_fraction"),
          .a_count = n.required<std::uint64_t>("a_count"),
          .b_count = n.required<std::uint64_t>("b_count"),
          .dominant = n.required<bool>("dominant")};
}

std::optional<ReportModeTest> mode_test_of(const JsonField& n) {
  if (n.json().is_null()) return std::nullopt;
  ReportModeTest t{.p_two_sided = number_or_null(n, "p_two_sided"),
                   .p_b_more_in_worse = number_or_null(n, "p_b_more_in_worse"),
                   .p_a_more_in_worse = number_or_null(n, "p_a_more_in_worse"),
                   .alpha = number_or_null(n, "alpha"),
                   .b_more_in_worse = n.required<bool>("b_more_in_worse"),
                   .a_more_in_worse = n.required<bool>("a_more_in_worse"),
                   .dominant_mode_effect = effect_or_null(n.member("dominant_mode_effect", "an object or null"))};
  return t;
}

ReportNoise noise_of(const JsonField& n) {
  return {.between_boot_sd = number_or_null(n, "between_boot_sd_log"),
          .within_boot_sd = number_or_null(n, "within_boot_sd_log"),
          .pair_sd = number_or_null(n, "pair_sd_log"),
          .pair_correlation = number_or_null(n, "pair_correlation"),
          .drift_rho = number_or_null(n, "pair_drift_rho"),
          .pairs = n.required<std::uint64_t>("pairs"),
          .blocks_unpaired = n.required<std::optional<std::uint64_t>>("blocks_for_half_margin_unpaired"),
          .blocks_paired = n.required<std::optional<std::uint64_t>>("blocks_for_half_margin_paired")};
}

std::optional<ReportHosts> hosts_of(const JsonField& n) {
  if (n.json().is_null()) return std::nullopt;
  ReportHosts h{.h = number_or_null(n, "h"), .p = number_or_null(n, "p"), .disagree = n.required<bool>("disagree")};
  for (const JsonField& x : n.member("hosts", "a list").elements()) {
    h.hosts.push_back({.host = x.required<std::string>("host"),
                       .blocks = x.required<std::uint64_t>("blocks"),
                       .median_a = number_or_null(x, "median_a"),
                       .median_b = number_or_null(x, "median_b"),
                       .paired_effect = effect_or_null(x.member("paired_effect", "an object or null"))});
  }
  return h;
}

ReportOverlap overlap_of(const JsonField& n) {
  ReportOverlap o{.pairs = n.required<std::uint64_t>("pairs"),
                  .voided = n.required<std::uint64_t>("voided"),
                  .min = number_or_null(n, "min"),
                  .median = number_or_null(n, "median")};
  // Reports of abvm before issue 26 hold the overlap rule's "threshold" and no skews.
  o.skew_median_ms = n.has("start_skew_median_ms") ? number_or_null(n, "start_skew_median_ms")
                                                   : std::numeric_limits<double>::quiet_NaN();
  o.skew_max_ms = n.has("start_skew_max_ms") ? number_or_null(n, "start_skew_max_ms")
                                             : std::numeric_limits<double>::quiet_NaN();
  o.max_start_skew_ms = n.value_or<std::optional<double>>("max_start_skew_ms", std::nullopt);
  o.threshold = n.value_or<std::optional<double>>("threshold", std::nullopt);
  return o;
}

ReportMetric metric_of(const JsonField& n) {
  ReportMetric m{.name = n.required<std::string>("name"),
                 .unit = n.required<std::string>("unit"),
                 .better = n.required<Better>("better"),
                 .verdict = n.required<Verdict>("verdict"),
                 .a = side_of(n.member("a", "an object")),
                 .b = side_of(n.member("b", "an object")),
                 .effect = effect_of(n.member("effect", "an object")),
                 .paired_effect = effect_or_null(n.member("paired_effect", "an object or null"))};
  if (n.has("judged")) m.judged = n.required<bool>("judged");
  if (n.has("primary_estimate")) {
    m.primary_estimate = n.required<Estimate>("primary_estimate");
  }
  if (n.has("unpaired_effect")) m.unpaired_effect = effect_of(n.member("unpaired_effect", "an object"));
  if (n.has("all_pairs_effect")) m.all_pairs_effect = effect_or_null(n.member("all_pairs_effect", "an object or null"));
  if (n.has("noise")) m.noise = noise_of(n.member("noise", "an object"));
  if (n.has("hosts")) m.hosts = hosts_of(n.member("hosts", "an object or null"));
  if (n.has("overlap")) m.overlap = overlap_of(n.member("overlap", "an object"));
  const JsonField mw = n.member("mann_whitney", "an object");
  m.mann_whitney = {.u = number_or_null(mw, "u"),
                    .p = number_or_null(mw, "p"),
                    .p_holm = number_or_null(mw, "p_holm"),
                    .exact = mw.required<bool>("exact")};
  m.bootstrap_median_ratio = effect_of(n.member("bootstrap_median_ratio", "an object"), true);
  for (const JsonField& md : n.member("modes", "a list").elements()) m.modes.push_back(mode_of(md));
  m.mode_test = mode_test_of(n.member("mode_test", "an object or null"));
  m.runs_needed = n.required<std::optional<std::uint64_t>>("runs_needed");
  m.findings = read_findings<MetricFinding>(n.member("findings", "a list"));
  return m;
}

ReportSource source_of(const JsonField& n) {
  ReportSource s{.kind = n.required<std::string>("kind")};
  if (s.kind == "files") {
    s.a = n.required<std::vector<std::string>>("a");
    s.b = n.required<std::vector<std::string>>("b");
  } else if (s.kind == "results") {
    s.results_dir = n.required<std::string>("results_dir");
    if (n.has("design")) s.design = n.required<std::string>("design");
    if (n.has("decided_by")) s.decided_by = n.required<std::string>("decided_by");
  } else {
    n.member("kind").expected("\"files\" or \"results\"");
  }
  s.a_label = n.required<std::string>("a_label");
  s.b_label = n.required<std::string>("b_label");
  return s;
}

SideContext context_of(const JsonField& n) {
  SideContext c{.hosts = n.required<std::vector<std::string>>("hosts")};
  c.accelerators = n.required<std::vector<Accelerator>>("accelerators");
  // Module parameters the guests reported (parameter -> value -> boots); absent in reports of
  // runs without them (plain files, abvm before the guests reported them).
  for (const auto& field : {std::pair{"module_params", &c.module_params}, std::pair{"facts", &c.facts}}) {
    if (!n.has(field.first)) continue;
    auto* into = field.second;
    for (const auto& [name, values] : n.member(field.first).members()) {
      for (const auto& [value, boots] : values.members()) {
        (*into)[name][value] = static_cast<int>(boots.as<std::uint64_t>());
      }
    }
  }
  // Each workload's run length (run/sizing.hpp); absent in reports without them.
  if (n.has("run_lengths")) {
    for (const JsonField& l : n.member("run_lengths", "a list").elements()) {
      RunLength length{.workload = l.required<std::string>("workload"),
                       .size = l.required<std::string>("size"),
                       .median_seconds = l.required<std::optional<double>>("median_seconds"),
                       .runs = l.required<std::uint64_t>("runs")};
      c.run_lengths.push_back(std::move(length));
    }
  }
  return c;
}

FailedRun failure_of(const JsonField& n) {
  return {.side = n.required<Side>("side"),
          .what = n.required<std::string>("what"),
          .outcome = n.required<std::string>("outcome"),
          .source = n.required<std::string>("source")};
}

MissingData missing_of(const JsonField& n) {
  return {.workload = n.required<std::string>("workload"),
          .metrics = n.required<std::vector<std::string>>("metrics"),
          .runs_a = n.member("runs", "an object").required<std::uint64_t>("a"),
          .runs_b = n.member("runs", "an object").required<std::uint64_t>("b"),
          .first_failure = n.required<std::string>("first_failure"),
          .reported = n.required<std::vector<std::string>>("reported")};
}

JsonSource origin_source(const JsonOrigin& origin) { return {.file = origin.file, .remedy = origin.advice}; }

}  // namespace

ReportModel read_report_data(const nlohmann::json& report, const JsonOrigin& origin) {
  const JsonSource source = origin_source(origin);
  const JsonField root(report, source);
  ReportModel r;
  r.schema_version = root.required<std::int64_t>("schema_version");
  if (r.schema_version != 1) {
    root.member("schema_version").invalid(fmt::format("is {}, and this abvm reads schema_version 1", r.schema_version));
  }
  r.tool_version = root.member("tool", "an object").required<std::string>("version");
  r.verdict = root.required<Verdict>("verdict");
  const JsonField options = root.member("options", "an object");
  r.margin = options.required<double>("margin");
  r.confidence = options.required<double>("confidence");
  r.interval_confidence = options.required<double>("interval_confidence");
  r.seed = options.required<std::uint64_t>("seed");
  r.bootstrap_resamples = options.required<std::uint64_t>("bootstrap_resamples");
  // Absent in reports of older abvm, which decided with the unpaired estimate.
  if (options.has("primary_estimate")) r.primary_estimate = options.required<Estimate>("primary_estimate");
  r.source = source_of(root.member("source", "an object"));
  r.context_a = context_of(root.member("context", "an object").member("a", "an object"));
  r.context_b = context_of(root.member("context", "an object").member("b", "an object"));
  r.failed_a = root.member("failed_runs", "an object").required<std::uint64_t>("a");
  r.failed_b = root.member("failed_runs", "an object").required<std::uint64_t>("b");
  for (const JsonField& f : root.member("failures", "a list").elements()) r.failures.push_back(failure_of(f));
  // The sentences ("warnings", "notes", "headline") are made from the findings: only these are read.
  r.findings = read_findings<ExperimentFinding>(root.member("findings", "a list"));
  // Absent in reports of older abvm, which dropped such workloads.
  if (const auto missing = root.find("missing")) {
    for (const JsonField& d : missing->elements()) r.missing.push_back(missing_of(d));
  }
  for (const JsonField& m : root.member("metrics", "a list").elements()) r.metrics.push_back(metric_of(m));
  return r;
}

ReportMetric read_report_metric(const nlohmann::json& metric, const JsonOrigin& origin, std::string path) {
  const JsonSource source = origin_source(origin);
  return metric_of(JsonField(metric, source, std::move(path)));
}

MissingData read_report_missing(const nlohmann::json& missing, const JsonOrigin& origin, std::string path) {
  const JsonSource source = origin_source(origin);
  return missing_of(JsonField(missing, source, std::move(path)));
}

HostEnvironment read_host_environment(const nlohmann::json& environment, const JsonOrigin& origin) {
  const JsonSource source = origin_source(origin);
  const JsonField root(environment, source);
  HostEnvironment e;
  e.hostname = root.required<std::string>("hostname");
  if (root.has("host_kernel")) {
    const JsonField k = root.member("host_kernel");
    e.host_kernel = HostEnvironment::Kernel{.sysname = k.required<std::string>("sysname"),
                                            .release = k.required<std::string>("release"),
                                            .machine = k.required<std::string>("machine")};
  }
  e.cpu_model = root.required<std::string>("cpu_model");
  e.cpus_online = root.required<std::uint64_t>("cpus_online");
  e.cpufreq_governor = root.required<std::optional<std::string>>("cpufreq_governor");
  e.load_average = root.optional<std::vector<double>>("load_average");
  e.libvirt_uri = root.required<std::string>("libvirt_uri");
  e.libvirt_version = root.required<std::string>("libvirt_version");
  e.qemu_version = root.required<std::string>("qemu_version");
  e.accelerator = root.required<Accelerator>("accelerator");
  e.accelerator_reason = root.required<std::string>("accelerator_reason");
  return e;
}

std::map<Side, SideKernel> read_side_kernels(const nlohmann::json& kernels, const JsonOrigin& origin) {
  const JsonSource source = origin_source(origin);
  const JsonField root(kernels, source);
  std::map<Side, SideKernel> out;
  for (Side side : kSides) {
    if (!root.has(to_string(side))) continue;
    const JsonField k = root.member(to_string(side));
    SideKernel& kernel = out[side];
    kernel.release = k.optional<std::string>("release");
    kernel.cmdline = k.optional<std::string>("cmdline");
  }
  return out;
}

}  // namespace abvm
