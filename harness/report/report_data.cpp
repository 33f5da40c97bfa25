#include "report/report_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "report/findings_json.hpp"

namespace abvm {
namespace {

using nlohmann::json;

// One node of the JSON being read, with its path ("metrics[2].effect") for messages. Every
// accessor checks presence and type and throws Error naming the file, the path and what to do.
class Node {
 public:
  Node(const JsonOrigin& origin, const json& j, std::string path)
      : origin_(origin), j_(j), path_(std::move(path)) {}

  Node operator[](std::string_view key) const {
    expect(j_.is_object(), "an object");
    const auto it = j_.find(std::string(key));
    const std::string path = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
    if (it == j_.end()) Node(origin_, j_, path).fail("is missing");
    return {origin_, *it, path};
  }
  bool has(std::string_view key) const {
    expect(j_.is_object(), "an object");
    return j_.contains(std::string(key));
  }
  bool is_null() const { return j_.is_null(); }

  std::string str() const {
    expect(j_.is_string(), "a string");
    return j_.get<std::string>();
  }
  double number() const {
    expect(j_.is_number(), "a number");
    return j_.get<double>();
  }
  // null is a number that was not finite when written.
  double number_or_null() const { return is_null() ? std::numeric_limits<double>::quiet_NaN() : number(); }
  std::int64_t integer() const {
    expect(j_.is_number_integer(), "an integer");
    return j_.get<std::int64_t>();
  }
  std::uint64_t count() const {
    expect(j_.is_number_unsigned() || (j_.is_number_integer() && j_.get<std::int64_t>() >= 0), "an integer >= 0");
    return j_.get<std::uint64_t>();
  }
  bool flag() const {
    expect(j_.is_boolean(), "true or false");
    return j_.get<bool>();
  }

  // f(Node) for every element of an array, in order.
  template <class F>
  void each(F f) const {
    expect(j_.is_array(), "an array");
    for (std::size_t i = 0; i < j_.size(); ++i) f(Node(origin_, j_[i], fmt::format("{}[{}]", path_, i)));
  }
  // f(key, Node) for every member of an object, in key order.
  template <class F>
  void members(F f) const {
    expect(j_.is_object(), "an object");
    for (const auto& [key, value] : j_.items()) f(key, Node(origin_, value, fmt::format("{}.{}", path_, key)));
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    each([&](const Node& n) { out.push_back(n.str()); });
    return out;
  }

  // One of `words` (to_string of an enum), parsed by `parse`.
  template <class Parse>
  auto word(Parse parse, std::string_view words) const {
    const auto v = parse(str());
    if (!v) fail(fmt::format("is {}, not one of {}", j_.dump(), words));
    return *v;
  }

  // The typed findings at this node (report/findings_json.hpp), its errors in this reader's words.
  template <class Finding>
  std::vector<Finding> findings() const {
    try {
      return read_findings<Finding>(j_, path_);
    } catch (const Error& e) {
      std::string_view what = e.what();
      if (what.starts_with("analysis.json ")) what.remove_prefix(std::string_view("analysis.json ").size());
      throw Error(fmt::format("{}: {}; {}", origin_.file, what, origin_.advice));
    }
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("{}: {} {}; {}", origin_.file, path_.empty() ? "the top level" : path_, what,
                            origin_.advice));
  }

 private:
  void expect(bool ok, std::string_view wanted) const {
    if (ok) return;
    std::string shown = j_.is_object() ? "an object" : j_.is_array() ? "an array" : j_.dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    fail(fmt::format("is {}, not {}", shown, wanted));
  }

  const JsonOrigin& origin_;
  const json& j_;
  std::string path_;
};

Verdict verdict_of(const Node& n) { return n.word(parse_verdict, "regression, improvement, no_change, inconclusive"); }

// The effects of report/schema.json's "effect"; the bootstrap interval has no method and no
// achieved confidence.
ReportEffect effect_of(const Node& n, bool bootstrap = false) {
  ReportEffect e{.estimate = n["estimate"].number_or_null(),
                 .low = n["ci_low"].number_or_null(),
                 .high = n["ci_high"].number_or_null(),
                 .confidence = n["confidence"].number_or_null(),
                 .achieved_confidence = std::numeric_limits<double>::quiet_NaN()};
  if (bootstrap) return e;
  e.achieved_confidence = n["achieved_confidence"].number_or_null();
  e.method = n["method"].str();
  return e;
}

std::optional<ReportEffect> effect_or_null(const Node& n) {
  if (n.is_null()) return std::nullopt;
  return effect_of(n);
}

std::vector<std::uint64_t> indices_of(const Node& n) {
  std::vector<std::uint64_t> out;
  n.each([&](const Node& i) { out.push_back(i.count()); });
  return out;
}

std::optional<std::int64_t> integer_or_null(const Node& n) {
  if (n.is_null()) return std::nullopt;
  return n.integer();
}

RunTiming timing_of(const Node& n) {
  RunTiming t{.start = n["start"].number(), .end = n["end"].number(), .load_end = n["load_end"].number(),
              .clock_error = n["clock_error"].number()};
  if (const Node go = n["go"]; !go.is_null()) t.go = go.number();
  return t;
}

std::vector<ReportRun> runs_of(const Node& n) {
  std::vector<ReportRun> runs;
  n.each([&](const Node& r) {
    ReportRun run{.index = r["index"].count(), .value = r["value"].number_or_null(), .order = r["order"].integer(),
                  .run_in_boot = r["run_in_boot"].integer(), .block = integer_or_null(r["block"])};
    if (const Node boot = r["boot"]; !boot.is_null()) run.boot = boot.str();
    if (r.has("timing")) run.timing = timing_of(r["timing"]);
    if (r.has("overlap")) run.overlap = r["overlap"].number();
    runs.push_back(std::move(run));
  });
  return runs;
}

ReportSide side_of(const Node& n) {
  ReportSide s{.n = n["n"].count(),
               .median = n["median"].number_or_null(),
               .mean = n["mean"].number_or_null(),
               .sd = n["sd"].number_or_null(),
               .mad = n["mad"].number_or_null(),
               .iqr = n["iqr"].number_or_null(),
               .min = n["min"].number_or_null(),
               .max = n["max"].number_or_null(),
               .cv = n["cv"].number_or_null(),
               .outliers = indices_of(n["outliers"])};
  // Absent in reports of older abvm.
  if (n.has("outliers_tukey")) s.outliers_tukey = indices_of(n["outliers_tukey"]);
  if (n.has("outliers_modified_z")) s.outliers_modified_z = indices_of(n["outliers_modified_z"]);
  s.outliers_omitted = n["outliers_omitted"].count();
  s.units = n["units"].count();
  const Node kind = n["unit_kind"];
  const std::string k = kind.str();
  if (k != "boot" && k != "run") kind.fail(fmt::format("is \"{}\", not one of boot, run", k));
  s.per_boot = k == "boot";
  s.runs = runs_of(n["runs"]);
  s.runs_omitted = n["runs_omitted"].count();
  if (n.has("voided_runs")) s.voided_runs = runs_of(n["voided_runs"]);
  return s;
}

ReportMode mode_of(const Node& n) {
  return {.low = n["low"].number_or_null(),
          .high = n["high"].number_or_null(),
          .a_fraction = n["a_fraction"].number(),
          .b_fraction = n["b_fraction"].number(),
          .a_count = n["a_count"].count(),
          .b_count = n["b_count"].count(),
          .dominant = n["dominant"].flag()};
}

std::optional<ReportModeTest> mode_test_of(const Node& n) {
  if (n.is_null()) return std::nullopt;
  ReportModeTest t{.p_two_sided = n["p_two_sided"].number_or_null(),
                   .p_b_more_in_worse = n["p_b_more_in_worse"].number_or_null(),
                   .p_a_more_in_worse = n["p_a_more_in_worse"].number_or_null(),
                   .alpha = n["alpha"].number_or_null(),
                   .b_more_in_worse = n["b_more_in_worse"].flag(),
                   .a_more_in_worse = n["a_more_in_worse"].flag(),
                   .dominant_mode_effect = effect_or_null(n["dominant_mode_effect"])};
  return t;
}

std::optional<Estimate> parse_estimate(std::string_view s) {
  for (Estimate e : {Estimate::unpaired, Estimate::paired}) {
    if (s == to_string(e)) return e;
  }
  return std::nullopt;
}

ReportNoise noise_of(const Node& n) {
  const auto count_or_null = [](const Node& c) { return c.is_null() ? std::nullopt : std::optional(c.count()); };
  return {.between_boot_sd = n["between_boot_sd_log"].number_or_null(),
          .within_boot_sd = n["within_boot_sd_log"].number_or_null(),
          .pair_sd = n["pair_sd_log"].number_or_null(),
          .pair_correlation = n["pair_correlation"].number_or_null(),
          .drift_rho = n["pair_drift_rho"].number_or_null(),
          .pairs = n["pairs"].count(),
          .blocks_unpaired = count_or_null(n["blocks_for_half_margin_unpaired"]),
          .blocks_paired = count_or_null(n["blocks_for_half_margin_paired"])};
}

std::optional<ReportHosts> hosts_of(const Node& n) {
  if (n.is_null()) return std::nullopt;
  ReportHosts h{.h = n["h"].number_or_null(), .p = n["p"].number_or_null(), .disagree = n["disagree"].flag()};
  n["hosts"].each([&](const Node& x) {
    h.hosts.push_back({.host = x["host"].str(),
                       .blocks = x["blocks"].count(),
                       .median_a = x["median_a"].number_or_null(),
                       .median_b = x["median_b"].number_or_null(),
                       .paired_effect = effect_or_null(x["paired_effect"])});
  });
  return h;
}

ReportOverlap overlap_of(const Node& n) {
  ReportOverlap o{.pairs = n["pairs"].count(),
                  .voided = n["voided"].count(),
                  .min = n["min"].number_or_null(),
                  .median = n["median"].number_or_null()};
  // Reports of abvm before issue 26 hold the overlap rule's "threshold" and no skews.
  o.skew_median_ms = n.has("start_skew_median_ms") ? n["start_skew_median_ms"].number_or_null()
                                                   : std::numeric_limits<double>::quiet_NaN();
  o.skew_max_ms = n.has("start_skew_max_ms") ? n["start_skew_max_ms"].number_or_null()
                                             : std::numeric_limits<double>::quiet_NaN();
  if (n.has("max_start_skew_ms") && !n["max_start_skew_ms"].is_null()) o.max_start_skew_ms = n["max_start_skew_ms"].number();
  if (n.has("threshold") && !n["threshold"].is_null()) o.threshold = n["threshold"].number();
  return o;
}

ReportMetric metric_of(const Node& n) {
  ReportMetric m{.name = n["name"].str(),
                 .unit = n["unit"].str(),
                 .better = n["better"].word(parse_better, "higher, lower"),
                 .verdict = verdict_of(n["verdict"]),
                 .a = side_of(n["a"]),
                 .b = side_of(n["b"]),
                 .effect = effect_of(n["effect"]),
                 .paired_effect = effect_or_null(n["paired_effect"])};
  if (n.has("judged")) m.judged = n["judged"].flag();
  if (n.has("primary_estimate")) {
    m.primary_estimate = n["primary_estimate"].word(parse_estimate, "paired, unpaired");
  }
  if (n.has("unpaired_effect")) m.unpaired_effect = effect_of(n["unpaired_effect"]);
  if (n.has("all_pairs_effect")) m.all_pairs_effect = effect_or_null(n["all_pairs_effect"]);
  if (n.has("noise")) m.noise = noise_of(n["noise"]);
  if (n.has("hosts")) m.hosts = hosts_of(n["hosts"]);
  if (n.has("overlap")) m.overlap = overlap_of(n["overlap"]);
  const Node mw = n["mann_whitney"];
  m.mann_whitney = {.u = mw["u"].number_or_null(),
                    .p = mw["p"].number_or_null(),
                    .p_holm = mw["p_holm"].number_or_null(),
                    .exact = mw["exact"].flag()};
  m.bootstrap_median_ratio = effect_of(n["bootstrap_median_ratio"], true);
  n["modes"].each([&](const Node& md) { m.modes.push_back(mode_of(md)); });
  m.mode_test = mode_test_of(n["mode_test"]);
  if (const Node r = n["runs_needed"]; !r.is_null()) m.runs_needed = r.count();
  m.findings = n["findings"].findings<MetricFinding>();
  return m;
}

ReportSource source_of(const Node& n) {
  ReportSource s{.kind = n["kind"].str()};
  if (s.kind == "files") {
    s.a = n["a"].strings();
    s.b = n["b"].strings();
  } else if (s.kind == "results") {
    s.results_dir = n["results_dir"].str();
    if (n.has("design")) s.design = n["design"].str();
    if (n.has("decided_by")) s.decided_by = n["decided_by"].str();
  } else {
    n["kind"].fail(fmt::format("is \"{}\", not one of files, results", s.kind));
  }
  s.a_label = n["a_label"].str();
  s.b_label = n["b_label"].str();
  return s;
}

SideContext context_of(const Node& n) {
  SideContext c{.hosts = n["hosts"].strings()};
  n["accelerators"].each([&](const Node& a) { c.accelerators.push_back(a.word(parse_accelerator, "kvm, tcg")); });
  // Module parameters the guests reported (parameter -> value -> boots); absent in reports of
  // runs without them (plain files, abvm before the guests reported them).
  // (No structured binding: clang 15 cannot capture one in the lambdas below.)
  for (const auto& field : {std::pair{"module_params", &c.module_params}, std::pair{"facts", &c.facts}}) {
    if (!n.has(field.first)) continue;
    auto* into = field.second;
    n[field.first].members([&](const std::string& name, const Node& values) {
      values.members([&](const std::string& value, const Node& boots) {
        (*into)[name][value] = static_cast<int>(boots.count());
      });
    });
  }
  // Each workload's run length (run/sizing.hpp); absent in reports without them.
  if (n.has("run_lengths")) {
    n["run_lengths"].each([&](const Node& l) {
      RunLength length{.workload = l["workload"].str(), .size = l["size"].str(), .runs = l["runs"].count()};
      if (!l["median_seconds"].is_null()) length.median_seconds = l["median_seconds"].number();
      c.run_lengths.push_back(std::move(length));
    });
  }
  return c;
}

FailedRun failure_of(const Node& n) {
  return {.side = n["side"].word(parse_side, "A, B"),
          .what = n["what"].str(),
          .outcome = n["outcome"].str(),
          .source = n["source"].str()};
}

MissingData missing_of(const Node& n) {
  return {.workload = n["workload"].str(),
          .metrics = n["metrics"].strings(),
          .runs_a = n["runs"]["a"].count(),
          .runs_b = n["runs"]["b"].count(),
          .first_failure = n["first_failure"].str(),
          .reported = n["reported"].strings()};
}

}  // namespace

ReportModel read_report_data(const nlohmann::json& report, const JsonOrigin& origin) {
  const Node root(origin, report, "");
  ReportModel r;
  r.schema_version = root["schema_version"].integer();
  if (r.schema_version != 1) {
    root["schema_version"].fail(fmt::format("is {}, and this abvm reads schema_version 1", r.schema_version));
  }
  r.tool_version = root["tool"]["version"].str();
  r.verdict = verdict_of(root["verdict"]);
  const Node options = root["options"];
  r.margin = options["margin"].number();
  r.confidence = options["confidence"].number();
  r.interval_confidence = options["interval_confidence"].number();
  r.seed = options["seed"].count();
  r.bootstrap_resamples = options["bootstrap_resamples"].count();
  // Absent in reports of older abvm, which decided with the unpaired estimate.
  if (options.has("primary_estimate")) r.primary_estimate = options["primary_estimate"].word(parse_estimate, "paired, unpaired");
  r.source = source_of(root["source"]);
  r.context_a = context_of(root["context"]["a"]);
  r.context_b = context_of(root["context"]["b"]);
  r.failed_a = root["failed_runs"]["a"].count();
  r.failed_b = root["failed_runs"]["b"].count();
  root["failures"].each([&](const Node& f) { r.failures.push_back(failure_of(f)); });
  // The sentences ("warnings", "notes", "headline") are made from the findings: only these are read.
  r.findings = root["findings"].findings<ExperimentFinding>();
  // Absent in reports of older abvm, which dropped such workloads.
  if (root.has("missing")) root["missing"].each([&](const Node& d) { r.missing.push_back(missing_of(d)); });
  root["metrics"].each([&](const Node& m) { r.metrics.push_back(metric_of(m)); });
  return r;
}

ReportMetric read_report_metric(const nlohmann::json& metric, const JsonOrigin& origin, std::string path) {
  return metric_of(Node(origin, metric, std::move(path)));
}

MissingData read_report_missing(const nlohmann::json& missing, const JsonOrigin& origin, std::string path) {
  return missing_of(Node(origin, missing, std::move(path)));
}

HostEnvironment read_host_environment(const nlohmann::json& environment, const JsonOrigin& origin) {
  const Node root(origin, environment, "");
  HostEnvironment e;
  e.hostname = root["hostname"].str();
  if (root.has("host_kernel")) {
    const Node k = root["host_kernel"];
    e.host_kernel = HostEnvironment::Kernel{
        .sysname = k["sysname"].str(), .release = k["release"].str(), .machine = k["machine"].str()};
  }
  e.cpu_model = root["cpu_model"].str();
  e.cpus_online = root["cpus_online"].count();
  if (const Node g = root["cpufreq_governor"]; !g.is_null()) e.cpufreq_governor = g.str();
  if (root.has("load_average")) {
    e.load_average.emplace();
    root["load_average"].each([&](const Node& l) { e.load_average->push_back(l.number()); });
  }
  e.libvirt_uri = root["libvirt_uri"].str();
  e.libvirt_version = root["libvirt_version"].str();
  e.qemu_version = root["qemu_version"].str();
  e.accelerator = root["accelerator"].word(parse_accelerator, "kvm, tcg");
  e.accelerator_reason = root["accelerator_reason"].str();
  return e;
}

std::map<Side, SideKernel> read_side_kernels(const nlohmann::json& kernels, const JsonOrigin& origin) {
  const Node root(origin, kernels, "");
  std::map<Side, SideKernel> out;
  for (Side side : kSides) {
    if (!root.has(to_string(side))) continue;
    const Node k = root[to_string(side)];
    SideKernel& kernel = out[side];
    if (k.has("release")) kernel.release = k["release"].str();
    if (k.has("cmdline")) kernel.cmdline = k["cmdline"].str();
  }
  return out;
}

}  // namespace abvm
