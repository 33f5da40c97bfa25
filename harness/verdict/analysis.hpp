#pragma once
// The verdict stage: from samples of both sides to a decision per metric and overall.
//
// For each metric, with its direction (higher or lower is better):
//   1. Runs that share a boot are aggregated to one value per boot (the median of its runs):
//      the boot is the experimental unit, runs of one boot are not independent.
//   2. Effect = ratio B/A as the Hodges-Lehmann shift on the log scale, with the distribution-free
//      interval from inverting the Mann-Whitney test (stats/hodges_lehmann). When A and B units were
//      interleaved in blocks, the paired estimate (Walsh averages of per-block log ratios, Wilcoxon
//      signed-rank interval) is reported too. Which of the two is primary (decides the verdict) is
//      fixed by the design before any data is seen (AnalysisOptions::paired_primary): a design that
//      runs A and B together in each block (co-scheduled) pairs them, sequential blocks do not.
//   3. Family-wise error over k metrics: intervals at Bonferroni level 1 - alpha/k (the interval
//      analogue of Holm), Mann-Whitney p-values Holm-adjusted.
//   4. Verdict from the interval [lo, hi] of the ratio oriented so that > 1 is better, with margin d:
//      no_change if lo > 1-d and hi < 1+d; else regression if hi < 1; improvement if lo > 1; else
//      inconclusive, with an estimate of how many units per side would likely settle it.
//   5. Modes: one set of cut points for the pooled units (stats/modes.hpp; the dominant mode chosen
//      without regard to side or direction). A mode is worse when its median lies beyond the margin
//      from the dominant mode's in the metric's worse direction (oriented ratio below 1 - d, as the
//      effects are judged). Fisher's exact test (one-sided, at alpha/2 of the family level, so that
//      the false-regression rate stays within alpha) asks whether B spends more units than A in
//      worse modes: if so, a no_change or inconclusive verdict becomes a regression even if the
//      dominant mode did not move; an improvement stays one (the finding says B's worse mode). The
//      shift inside the dominant mode is estimated separately.
// Metrics reported but not judged (cost metrics the experiment did not name: MetricSamples::judged)
// are analysed at the same level and left out of the family, of Holm's adjustment and of the verdict.
// The overall verdict is the worst over metrics: regression > inconclusive > improvement > no_change;
// but while a workload the experiment asks about has no valid run on either side (every run failed:
// SampleSet::missing), it is inconclusive whatever the other metrics say: that workload's question
// was never measured, and an answer would claim it was (issue 20). Each such workload gets a warning.
// The analysis records facts (verdict/findings.hpp); the words are report/wording.hpp's.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/decision_defaults.hpp"
#include "samples/sample.hpp"
#include "stats/bootstrap.hpp"
#include "stats/descriptive.hpp"
#include "stats/fisher.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/modes.hpp"
#include "stats/outliers.hpp"
#include "verdict/findings.hpp"

namespace abvm {

enum class Verdict { no_change, improvement, inconclusive, regression };
const char* to_string(Verdict v);
// "regression", "improvement", "no_change", "inconclusive"; nullopt otherwise.
std::optional<Verdict> parse_verdict(std::string_view text);
// Severity order used for the overall verdict: regression > inconclusive > improvement > no_change.
Verdict worst(Verdict x, Verdict y);

// Defaults and allowed ranges: core/decision_defaults.hpp (shared with the experiment keys and the
// CLI flags). analyze() throws Error for values outside the ranges.
struct AnalysisOptions {
  double margin = kDefaultMargin;            // margin of practical interest d
  double confidence = kDefaultConfidence;    // family-wise confidence level
  std::uint64_t seed = kDefaultAnalysisSeed; // bootstrap seed
  std::size_t bootstrap_resamples = 2000;
  // The paired estimate decides (co-scheduled blocks share the host's noise); the unpaired one is
  // still reported. A metric with fewer than 2 complete blocks falls back to the unpaired estimate.
  bool paired_primary = false;
  // For designs whose A and B runs are meant to overlap (co-scheduled): a pair of runs whose starts
  // lay surely more than this many milliseconds apart on the host's clock (|start_A - start_B| less
  // both runs' RunTiming::clock_error) is left out on both sides before anything is computed,
  // counted and warned about (MetricAnalysis::overlap). The rule reads nothing that the runs'
  // results can move (issue 26): a rule on the overlap itself kept the pairs whose ratio was near 1.
  // nullopt: nothing is left out (designs whose runs alternate by intent, inputs without timings);
  // the overlaps and skews are still summarised. At least 0.
  std::optional<double> max_start_skew_ms;
  // Only what decides the verdict (a sequential look): the secondary figures are left at their
  // defaults (the bootstrap, the noise anatomy, the hosts' agreement, the shift inside the dominant
  // mode, and the paired estimate of a design that does not decide by it). The verdicts, per metric
  // and overall, are those of the full analysis.
  bool verdict_only = false;
};

// How much the pairs of runs of a metric overlapped, and how far apart they started, over the runs
// that record it (Sample::overlap, Sample::timing). A pair is the A run and the B run of one block
// with one run index (a run without a block is a pair of its own); it is judged by the smaller of its
// runs' overlaps (they carry the same). The overlap is a fact reported, never a reason to leave a
// pair out (it moves with the pair's own ratio); the start skew is.
struct OverlapSummary {
  std::size_t pairs = 0;             // pairs with an overlap
  double min = 0, median = 0;        // of the pairs' overlaps (shares, 0..1)
  // Start skews (ms, |start_A - start_B| on the host's clock) of the pairs whose runs both record
  // their timing; NaN when none does.
  double skew_median_ms = std::numeric_limits<double>::quiet_NaN();
  double skew_max_ms = std::numeric_limits<double>::quiet_NaN();
  std::size_t voided = 0;            // pairs left out: started surely further apart than the rule allows
  std::optional<double> max_start_skew_ms;  // AnalysisOptions::max_start_skew_ms; nullopt: nothing left out
};

enum class Estimate { unpaired, paired };
const char* to_string(Estimate e);

// Where a metric's noise comes from, on the log scale (ln of the values): what decides how many
// boots a verdict costs, and which design buys them cheapest. NaN where the data cannot tell.
struct NoiseAnatomy {
  double between_boot_sd = std::numeric_limits<double>::quiet_NaN();  // boot values within a side
  double within_boot_sd = std::numeric_limits<double>::quiet_NaN();   // runs around their boot's median
  double pair_sd = std::numeric_limits<double>::quiet_NaN();          // per-block ln(B/A)
  double pair_correlation = std::numeric_limits<double>::quiet_NaN(); // A's and B's boot values over blocks
  double drift_rho = std::numeric_limits<double>::quiet_NaN();        // Spearman of ln(B/A) against block
  std::size_t pairs = 0;                                              // complete blocks
  // Blocks an interval of ±margin/2 would take (normal approximation, Hodges-Lehmann efficiency
  // 3/pi): with the unpaired estimate (boots per side) and with the paired one.
  std::optional<std::uint64_t> blocks_unpaired, blocks_paired;
};

struct SideAnalysis {
  std::vector<Sample> samples;         // every run as given (value, order, boot), input order
  stats::Summary summary;              // over runs (input order)
  stats::Outliers outliers;            // indices into the side's runs, input order
  std::vector<double> units;           // values analysed: one per boot when runs share boots, else the runs'
  std::vector<double> sorted_units;    // the units ascending: sorted once for every statistic of them
  bool per_boot = false;               // units are boots (medians of their runs)
  std::vector<std::int64_t> unit_order;  // order position of each unit (first run of the boot)
  // Runs left out by the pair rule (AnalysisOptions::max_start_skew_ms), as given; in none of the
  // figures above (kept for the reports: the timeline shows them).
  std::vector<Sample> voided;
};

// A ratio B/A in the metric's own units with its interval.
struct Effect {
  double estimate = 1, low = 1, high = 1;
  double confidence = 0.95;            // level the interval was computed at
  double achieved_confidence = 0.95;   // below `confidence` when the samples are too small
  std::string method;
};

// A pool's hosts (issue 12): each host's own paired effect over the blocks it ran, and whether
// the hosts agree beyond chance (Kruskal-Wallis on the per-block log ratios grouped by host).
struct HostEffect {
  std::string host;
  std::size_t blocks = 0;
  double median_a = 0, median_b = 0;   // of the host's boot values, in the metric's units
  std::optional<Effect> effect;        // paired B/A, at the analysis level (2 blocks or more)
};

struct HostAgreement {
  std::vector<HostEffect> hosts;       // in order of first appearance
  double h = 0, p = 1;                 // Kruskal-Wallis over the hosts with 2 blocks or more
  bool disagree = false;               // p below the analysis alpha
};

struct ModeAnalysis {
  stats::ModeSplit split;
  // Per mode: worse than the dominant one by more than the margin (its median against the dominant
  // mode's, oriented as the effects are: below 1 - margin). Only these modes count as worse.
  std::vector<bool> worse;
  std::optional<stats::FisherResult> fisher;   // units in worse modes vs the rest, by side
  double alpha = 0;                            // level the one-sided test was judged at
  bool b_more_in_worse = false;                // significant: B spends more units in worse modes
  bool a_more_in_worse = false;
  std::optional<Effect> dominant_shift;        // HL ratio inside the dominant mode
};

struct MetricAnalysis {
  std::string name, unit;
  Better better = Better::higher;
  // False: reported, not judged (MetricSamples::judged): its verdict is its own, the experiment's
  // ignores it, and it takes no share of the family's error rate.
  bool judged = true;
  SideAnalysis a, b;
  Effect effect;                        // the primary estimate's, which decides the verdict
  Estimate primary = Estimate::unpaired;
  Effect unpaired;                      // HL of the units, ratio B/A
  std::optional<Effect> paired;         // interleaved blocks only
  // The primary estimate over every pair, none left out: `effect` itself when nothing was left
  // out, else computed again with the left-out pairs in (nullopt only without any effect). Always
  // reported beside the decided one, so that a reader sees what leaving pairs out changed.
  std::optional<Effect> all_pairs;
  NoiseAnatomy noise;
  std::optional<HostAgreement> hosts;   // blocks ran on more than one host
  std::optional<OverlapSummary> overlap;  // runs that record their pair's overlap; nullopt: none does
  double mw_u = 0, mw_p = 1, mw_p_holm = 1;
  bool mw_exact = false;
  stats::Interval bootstrap;            // ratio of medians B/A, secondary
  ModeAnalysis modes;
  Verdict verdict = Verdict::inconclusive;
  // Units per side (boots, or runs) likely to settle an inconclusive verdict; for a paired
  // primary estimate, blocks.
  std::optional<std::uint64_t> runs_needed;
  // Warnings and notes as facts, in the order found (report/wording.hpp says them; the headline
  // is report/wording.hpp's too, from the figures above).
  std::vector<MetricFinding> findings;
};

struct Analysis {
  Verdict verdict = Verdict::no_change;
  AnalysisOptions options;
  double interval_confidence = 0.95;    // per-metric level after the family-wise correction
  std::vector<MetricAnalysis> metrics;
  // Workloads (or metrics asked for) with no valid run on either side (samples/sample.hpp MissingData):
  // each one makes the overall verdict inconclusive, with a warning naming it.
  std::vector<MissingData> missing;
  std::vector<FailedRun> failures;
  std::size_t failed_a = 0, failed_b = 0;
  // Experiment-wide (hosts, accelerators, failures, missing workloads) and the inputs' own notes
  // (partial dd records, an unfinished journal line), in the order found.
  std::vector<ExperimentFinding> findings;
  SideContext context_a, context_b;
};

// A metric's primary effect oriented so that above 1 is better: B/A for a higher-is-better metric,
// A/B otherwise (the interval's ends swapped accordingly). The verdict judges this interval
// against the margin; `abvm bisect` reads it to tell "not slower by more than the margin".
struct OrientedEffect {
  double estimate = 1, low = 1, high = 1;
};
OrientedEffect oriented_effect(const MetricAnalysis& metric);
// The same from a ratio B/A and its interval, as a report holds them.
OrientedEffect oriented_effect(double estimate, double low, double high, Better better);

// Throws Error when the options are out of range. Values must be > 0 (they are analysed on the
// log scale). A metric with no valid unit on a side (every run failed, or every pair was left out
// for their start skew) is inconclusive with a warning that says why.
Analysis analyze(const SampleSet& samples, const AnalysisOptions& options);
// The same, taking the samples over instead of copying them (at 2 x 1M runs a copy is ~350 MB).
Analysis analyze(SampleSet&& samples, const AnalysisOptions& options);

// Exit code for a verdict (see core/error.hpp): 0 no_change/improvement, 1 regression, 4 inconclusive.
int exit_code_for(Verdict v);

}  // namespace abvm
