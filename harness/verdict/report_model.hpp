#pragma once
// The report model: the verdict stage's output as every reporter takes it (terminal, analysis.json,
// JUnit, HTML, plots). It holds exactly what analysis.json holds, so that a report made in memory at
// the end of a run and one read back from analysis.json (`abvm report DIR`, `abvm compare`, through
// report/report_data.hpp's one strict reader) are the same value, and a writer cannot tell them
// apart. report_model() makes it from an Analysis; report/json_report.hpp writes it.
//
// Doubles are NaN where analysis.json has null (a number that was not finite); fields that reports
// of older abvm lack are optional here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "samples/sample.hpp"
#include "verdict/analysis.hpp"
#include "verdict/findings.hpp"

namespace abvm {

// What the caller knows about where the data came from (input files or a results directory).
struct ReportSource {
  std::string kind;                 // "files" or "results"
  std::vector<std::string> a, b;    // input files per side (kind "files")
  std::string results_dir;          // kind "results"
  std::string a_label = "A", b_label = "B";
  // kind "results": the run's design ("sequential-blocks", "co-scheduled") and, for sequential
  // stopping, the look that decided and its level (run.json's stop_reason); "" when not known.
  std::string design, decided_by;
  bool operator==(const ReportSource&) const = default;
};

// Runs listed per side and metric: a reader (the plots, a CI job) needs a picture of the runs, not
// all of 2 x 1,000,000 of them (the journal keeps every run). Beyond the limit the listing is an
// evenly spaced selection over the input order; each listed run carries its index (what the outlier
// lists refer to) and the side says how many runs it left out. The outlier lists hold their first
// kMaxListedRuns indices.
inline constexpr std::size_t kMaxListedRuns = 2000;

// A ratio B/A with its interval.
struct ReportEffect {
  double estimate = 0, low = 0, high = 0, confidence = 0;
  double achieved_confidence = 0;   // NaN for the bootstrap interval, which has none
  std::string method;               // "" for the bootstrap interval
  bool operator==(const ReportEffect&) const = default;
};

// One listed run (analysis.json runs[]): when it ran, without the filler's start (RunTiming::fill
// is not reported).
struct ReportRun {
  std::uint64_t index = 0;          // into the side's runs, input order
  double value = 0;
  std::int64_t order = 0;
  std::int64_t run_in_boot = 0;
  std::optional<std::string> boot;
  std::optional<std::int64_t> block;
  std::optional<RunTiming> timing;
  std::optional<double> overlap;
  bool operator==(const ReportRun&) const = default;
};

// One side of one metric: its summary over runs and the runs listed.
struct ReportSide {
  std::uint64_t n = 0;
  double median = 0, mean = 0, sd = 0, mad = 0, iqr = 0, min = 0, max = 0, cv = 0;
  std::vector<std::uint64_t> outliers, outliers_tukey, outliers_modified_z;  // 0-based run indices
  std::uint64_t outliers_omitted = 0;
  std::uint64_t units = 0;               // boots (per_boot) or runs analysed
  bool per_boot = false;                 // "unit_kind": "boot"
  std::vector<ReportRun> runs;
  std::uint64_t runs_omitted = 0;
  // Runs left out for too little overlap; present when the metric's runs record their overlap.
  std::optional<std::vector<ReportRun>> voided_runs;
  bool operator==(const ReportSide&) const = default;
};

struct ReportMode {
  double low = 0, high = 0, a_fraction = 0, b_fraction = 0;
  std::uint64_t a_count = 0, b_count = 0;
  bool dominant = false;
  bool operator==(const ReportMode&) const = default;
};

struct ReportModeTest {
  double p_two_sided = 0, p_b_more_in_worse = 0, p_a_more_in_worse = 0, alpha = 0;
  bool b_more_in_worse = false, a_more_in_worse = false;
  std::optional<ReportEffect> dominant_mode_effect;
  bool operator==(const ReportModeTest&) const = default;
};

struct ReportMannWhitney {
  double u = 0, p = 0, p_holm = 0;
  bool exact = false;
  bool operator==(const ReportMannWhitney&) const = default;
};

struct ReportNoise {
  double between_boot_sd = 0, within_boot_sd = 0, pair_sd = 0, pair_correlation = 0, drift_rho = 0;
  std::uint64_t pairs = 0;
  std::optional<std::uint64_t> blocks_unpaired, blocks_paired;
  bool operator==(const ReportNoise&) const = default;
};

// A pool's hosts (analysis.json metrics[].hosts).
struct ReportHosts {
  struct Host {
    std::string host;
    std::uint64_t blocks = 0;
    double median_a = 0, median_b = 0;
    std::optional<ReportEffect> paired_effect;
    bool operator==(const Host&) const = default;
  };
  std::vector<Host> hosts;
  double h = 0, p = 1;
  bool disagree = false;
  bool operator==(const ReportHosts&) const = default;
};

// How much the pairs of runs overlapped and how far apart they started (analysis.json
// metrics[].overlap; verdict/analysis.hpp OverlapSummary).
struct ReportOverlap {
  std::uint64_t pairs = 0, voided = 0;
  double min = 0, median = 0;
  double skew_median_ms = 0, skew_max_ms = 0;  // NaN: no pair records both timings, or an older report
  std::optional<double> max_start_skew_ms;     // null: the design leaves nothing out
  std::optional<double> threshold;             // schedule.min_overlap, in reports of abvm before issue 26 only
  bool operator==(const ReportOverlap&) const = default;
};

struct ReportMetric {
  std::string name, unit;
  Better better = Better::higher;
  bool judged = true;                          // false: reported, not judged (absent in older reports: true)
  Verdict verdict = Verdict::inconclusive;
  ReportSide a, b;
  ReportEffect effect;                         // the primary estimate's (decides the verdict)
  Estimate primary_estimate = Estimate::unpaired;  // absent in reports of older abvm: unpaired
  std::optional<ReportEffect> paired_effect;
  std::optional<ReportEffect> unpaired_effect;  // absent in reports of older abvm (effect was it)
  // The primary estimate over every pair, none left out (MetricAnalysis::all_pairs); absent in
  // reports of abvm before issue 26, null when there is no estimate.
  std::optional<ReportEffect> all_pairs_effect;
  std::optional<ReportNoise> noise;            // absent in reports of older abvm
  std::optional<ReportHosts> hosts;            // a pool's hosts; absent on one host
  std::optional<ReportOverlap> overlap;        // absent when no run records its overlap
  ReportMannWhitney mann_whitney;
  ReportEffect bootstrap_median_ratio;
  std::vector<ReportMode> modes;
  std::optional<ReportModeTest> mode_test;
  std::optional<std::uint64_t> runs_needed;
  // What the analysis found beyond the figures; report/wording.hpp says each (and the headline).
  std::vector<MetricFinding> findings;
  bool operator==(const ReportMetric&) const = default;
};

// The whole analysis as reported (analysis.json, schema_version 1).
struct ReportModel {
  std::string tool_version;
  std::int64_t schema_version = 1;
  Verdict verdict = Verdict::inconclusive;
  double margin = 0, confidence = 0, interval_confidence = 0;
  std::uint64_t seed = 0;
  std::uint64_t bootstrap_resamples = 0;
  Estimate primary_estimate = Estimate::unpaired;  // the design's choice, for every metric
  ReportSource source;                   // with its side labels
  SideContext context_a, context_b;      // hosts and accelerators
  std::uint64_t failed_a = 0, failed_b = 0;
  std::vector<FailedRun> failures;
  std::vector<ExperimentFinding> findings;  // experiment-wide (hosts, accelerators, failures, inputs)
  std::vector<MissingData> missing;      // workloads with no valid run on either side ("missing")
  std::vector<ReportMetric> metrics;
  bool operator==(const ReportModel&) const = default;
};

// The report of `analysis` from `source`; the runs listed as kMaxListedRuns says.
ReportModel report_model(const Analysis& analysis, const ReportSource& source);

// A metric's effect oriented so that above 1 is better (verdict/analysis.hpp oriented_effect).
OrientedEffect oriented_effect(const ReportMetric& metric);

}  // namespace abvm
