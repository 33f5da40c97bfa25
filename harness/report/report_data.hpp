#pragma once
// What the HTML report shows, as typed values, and the one strict reader of each file it comes
// from: the JSON report (analysis.json, report/schema.json) and environment.json.
//
// Every field the report uses is required. A field that is missing or of the wrong type is an
// Error naming the file and the JSON path, with what to do:
//   "r/analysis.json: metrics[1].effect.ci_low is missing; regenerate it with 'abvm analyze ...'"
// never a silent "", 0 or NaN. A null where the schema allows one (a number that was not finite
// when written) reads as NaN; fields that really may be absent are optional here too.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"
#include "report/json_report.hpp"
#include "samples/sample.hpp"
#include "verdict/analysis.hpp"

namespace abvm {

// A ratio B/A with its interval. NaN where the JSON has null.
struct ReportEffect {
  double estimate = 0, low = 0, high = 0, confidence = 0;
  double achieved_confidence = 0;   // NaN for the bootstrap interval, which has none
  std::string method;               // "" for the bootstrap interval
};

// One side of one metric: its summary over runs.
struct ReportSide {
  std::uint64_t n = 0;
  double median = 0, mean = 0, sd = 0, mad = 0, iqr = 0, min = 0, max = 0, cv = 0;
  std::vector<std::uint64_t> outliers;   // 0-based indices into the side's runs
  std::uint64_t units = 0;               // boots (per_boot) or runs analysed
  bool per_boot = false;                 // "unit_kind": "boot"
};

struct ReportMode {
  double low = 0, high = 0, a_fraction = 0, b_fraction = 0;
  std::uint64_t a_count = 0, b_count = 0;
  bool dominant = false;
};

struct ReportModeTest {
  double p_two_sided = 0, p_b_more_in_worse = 0, alpha = 0;
  std::optional<ReportEffect> dominant_mode_effect;
};

struct ReportMannWhitney {
  double u = 0, p = 0, p_holm = 0;
  bool exact = false;
};

struct ReportNoise {
  double between_boot_sd = 0, within_boot_sd = 0, pair_sd = 0, pair_correlation = 0, drift_rho = 0;
  std::uint64_t pairs = 0;
  std::optional<std::uint64_t> blocks_unpaired, blocks_paired;
};

// A pool's hosts (analysis.json metrics[].hosts).
struct ReportHosts {
  struct Host {
    std::string host;
    std::uint64_t blocks = 0;
    double median_a = 0, median_b = 0;
    std::optional<ReportEffect> paired_effect;
  };
  std::vector<Host> hosts;
  double h = 0, p = 1;
  bool disagree = false;
};

// How much the pairs of runs overlapped (analysis.json metrics[].overlap).
struct ReportOverlap {
  std::uint64_t pairs = 0, voided = 0;
  double min = 0, median = 0;         // NaN where the JSON has null
  std::optional<double> threshold;    // null: the design leaves nothing out
};

struct ReportMetric {
  std::string name, unit;
  Better better = Better::higher;
  Verdict verdict = Verdict::inconclusive;
  ReportSide a, b;
  ReportEffect effect;                         // the primary estimate's (decides the verdict)
  Estimate primary_estimate = Estimate::unpaired;  // absent in reports of older abvm: unpaired
  std::optional<ReportEffect> paired_effect;
  std::optional<ReportEffect> unpaired_effect;  // absent in reports of older abvm (effect was it)
  std::optional<ReportNoise> noise;            // absent in reports of older abvm
  std::optional<ReportHosts> hosts;            // a pool's hosts; absent on one host
  std::optional<ReportOverlap> overlap;        // absent when no run records its overlap
  ReportMannWhitney mann_whitney;
  ReportEffect bootstrap_median_ratio;
  std::vector<ReportMode> modes;
  std::optional<ReportModeTest> mode_test;
  std::optional<std::uint64_t> runs_needed;
  std::vector<std::string> warnings, notes;
};

// The JSON report (schema_version 1) as the HTML report uses it.
struct ReportData {
  std::string tool_version;
  std::int64_t schema_version = 1;
  Verdict verdict = Verdict::inconclusive;
  double margin = 0, confidence = 0, interval_confidence = 0;
  std::uint64_t seed = 0;
  ReportSource source;                   // with its side labels
  SideContext context_a, context_b;      // hosts and accelerators
  std::uint64_t failed_a = 0, failed_b = 0;
  std::vector<FailedRun> failures;
  std::vector<std::string> warnings;
  std::vector<MissingData> missing;      // workloads with no valid run on either side ("missing")
  std::vector<ReportMetric> metrics;
};

// environment.json (run/environment.hpp writes it).
struct HostEnvironment {
  struct Kernel {
    std::string sysname, release, machine;
  };
  std::string hostname;
  std::optional<Kernel> host_kernel;               // absent when uname() failed
  std::string cpu_model;                           // "" when /proc/cpuinfo names none
  std::uint64_t cpus_online = 0;
  std::optional<std::string> cpufreq_governor;     // null: the host has no cpufreq (most VMs)
  std::optional<std::vector<double>> load_average; // absent when /proc/loadavg was unreadable
  std::string libvirt_uri, libvirt_version, qemu_version;
  Accelerator accelerator = Accelerator::kvm;
  std::string accelerator_reason;
};

// Where the JSON came from, for messages: `file` names it, `advice` says what to do about a
// damaged one ("regenerate it with 'abvm analyze DIR --json FILE'").
struct JsonOrigin {
  std::string file;
  std::string advice;
};

// Throw Error "<file>: <path> is missing; <advice>" (or "... is "x", not a number; <advice>").
ReportData read_report_data(const nlohmann::json& report, const JsonOrigin& origin);
// One element of the report's "metrics"; `path` is its place in the file, e.g. "metrics[2]".
ReportMetric read_report_metric(const nlohmann::json& metric, const JsonOrigin& origin, std::string path);
// One element of the report's "missing"; `path` is its place in the file, e.g. "missing[0]".
MissingData read_report_missing(const nlohmann::json& missing, const JsonOrigin& origin, std::string path);
HostEnvironment read_host_environment(const nlohmann::json& environment, const JsonOrigin& origin);

}  // namespace abvm
