#pragma once
// Internal to verdict/: the steps of analyze() (verdict/analysis.cpp), one concern a file, each
// declared here under the file that holds it; what each step means is said where it is defined.
// The contract is verdict/analysis.hpp's; nothing outside verdict/ includes this header.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "samples/sample.hpp"
#include "stats/hodges_lehmann.hpp"
#include "verdict/analysis.hpp"

namespace abvm::analysis_steps {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- effects.cpp: the effects B/A, unpaired and paired, from Hodges-Lehmann shifts of logs ----
std::vector<double> logs(const std::vector<double>& v);
Effect effect_from_shift(const stats::ShiftEstimate& e);
std::vector<double> block_log_ratios(const std::vector<Sample>& a_samples, const std::vector<Sample>& b_samples);
void choose_primary(MetricAnalysis& r, bool paired_primary);

// ---- pairs.cpp: a pair's runs: their overlap (a fact) and their start skew (what may leave a pair out) ----
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

// The pairs' facts, their summary (MetricAnalysis::overlap), the runs of the pairs left out for
// their start skew (AnalysisOptions::max_start_skew_ms) and the findings about them.
Pairs pair_facts(const std::vector<Sample>& a, const std::vector<Sample>& b);
std::optional<OverlapSummary> summarize_pairs(const Pairs& pairs, std::optional<double> max_start_skew_ms);
void void_runs(std::vector<Sample>& side, std::vector<Sample>& voided, const Pairs& pairs,
               std::optional<double> max_start_skew_ms);
void mark_all_voided(MetricAnalysis& r, double alpha);
void record_voided(MetricAnalysis& r);

// ---- boot_units.cpp: a side's runs as units, their range, their trend, what they warn about ----
SideAnalysis side_analysis(std::vector<Sample>&& taken, const std::string& metric, Side side);
void check_ratio_range(const MetricAnalysis& m);

struct Trend {
  double rho = 0, p = 1;
};
Trend spearman_trend(const std::vector<double>& values, const std::vector<std::int64_t>& order);
RunList run_list(const std::vector<std::size_t>& idx);
void record_unit_findings(MetricAnalysis& r, double alpha);

// ---- host_agreement.cpp: a pool's hosts, each host's paired effect and whether they agree ----
std::optional<HostAgreement> host_agreement(const std::vector<Sample>& a, const std::vector<Sample>& b, double alpha);
void record_hosts(MetricAnalysis& r);

// ---- runs_needed.cpp: the units or blocks that would settle a verdict or narrow an interval ----
std::optional<std::uint64_t> blocks_for_half_margin(double sd, double margin, bool per_side, double alpha);
std::optional<std::uint64_t> runs_needed_to_settle(const MetricAnalysis& r, std::size_t pairs, double margin,
                                                   double alpha);

// ---- noise_anatomy.cpp: where a metric's noise comes from, and a paired design's weak pairing ----
NoiseAnatomy noise_anatomy(const MetricAnalysis& r, const std::vector<double>& d, double margin);
void record_weak_pairing(MetricAnalysis& r, bool paired_design);

// ---- decision.cpp: effects oriented so that above 1 is better, and the verdict against the margin ----
double oriented(double ratio, Better better);
void decide(MetricAnalysis& r, double margin);

// ---- modes_rule.cpp: the worse modes, B's share of them against A's, and their findings ----
void analyze_modes(MetricAnalysis& r, const std::vector<double>& la, const std::vector<double>& lb, double alpha,
                   double margin, bool verdict_only);
void record_modes(MetricAnalysis& r, const std::vector<Sample>& a_samples, const std::vector<Sample>& b_samples,
                  double alpha);

// ---- experiment_findings.cpp: what the analysis finds about the experiment as a whole ----
void record_experiment_findings(Analysis& out, const SampleSet& samples);

}  // namespace abvm::analysis_steps
