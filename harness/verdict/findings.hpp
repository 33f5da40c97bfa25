#pragma once
// What the analysis found beyond the figures, as facts: one struct per kind of finding, with the
// numbers its sentence needs. The analysis records them; report/wording.hpp turns each into its
// sentence, once for every output (terminal, analysis.json, HTML, JUnit), and
// report/findings_json.hpp writes and reads them as analysis.json's "findings".
//
// A finding is a warning (something to act on) or a note (worth knowing, no action): its kind
// decides which (`severity` of each struct), so a reader cannot get a finding's weight wrong.
// The sums are closed: a new kind is a compile error in every std::visit until it has its words.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/vocabulary.hpp"

namespace abvm {

enum class Severity { warning, note };

// Runs named by a finding: the first kListedRuns of them (1-based, in the side's input order) and
// how many there are (2 x 1M runs may hold tens of thousands of outliers: a finding stays small).
inline constexpr std::size_t kListedRuns = 20;
struct RunList {
  std::size_t count = 0;
  std::vector<std::size_t> first;
  bool operator==(const RunList&) const = default;
};

// ---- findings about one metric ----

// Fewer than 10 units on a side: rank intervals are hardly informative.
struct FewUnits {
  static constexpr Severity severity = Severity::warning;
  bool per_boot = false;                    // units are boots (else runs)
  std::size_t a = 0, b = 0;                 // units per side
  std::optional<std::uint64_t> runs_needed; // MetricAnalysis::runs_needed
  bool operator==(const FewUnits&) const = default;
};

// Too few units for any interval at the asked confidence.
struct ConfidenceUnreachable {
  static constexpr Severity severity = Severity::warning;
  bool per_boot = false;
  std::size_t a = 0, b = 0;
  double confidence = 0, achieved = 0;
  bool operator==(const ConfidenceUnreachable&) const = default;
};

// One side holds more than twice the other's units.
struct UnbalancedSides {
  static constexpr Severity severity = Severity::warning;
  bool per_boot = false;
  std::size_t a = 0, b = 0;
  bool operator==(const UnbalancedSides&) const = default;
};

// Outlier runs on a side (Tukey fences or MAD z-score); kept in the analysis.
struct Outliers {
  static constexpr Severity severity = Severity::warning;
  Side side = Side::a;
  RunList runs;
  bool operator==(const Outliers&) const = default;
};

// A side's units trend with run order (Spearman, significant at the metric's level).
struct Drift {
  static constexpr Severity severity = Severity::warning;
  Side side = Side::a;
  double rho = 0, p = 1;
  bool operator==(const Drift&) const = default;
};

struct ModeRange {
  double low = 0, high = 0;                 // in the metric's unit
  double a_fraction = 0, b_fraction = 0;    // of each side's units
  bool operator==(const ModeRange&) const = default;
};

// The pooled units fall into more than one mode.
struct Multimodal {
  static constexpr Severity severity = Severity::warning;
  std::string metric, unit;
  std::vector<ModeRange> modes;
  bool operator==(const Multimodal&) const = default;
};

// One side spends significantly more units than the other in modes worse than the dominant one.
struct MoreInWorseModes {
  static constexpr Severity severity = Severity::note;
  Side side = Side::b;                      // the side that spends more there
  bool per_boot = false;
  double p = 1, alpha = 0;                  // Fisher one-sided, and the level it was judged at
  bool operator==(const MoreInWorseModes&) const = default;
};

// Runs in the worse mode at the same positions on both sides: the host slowed both alike.
struct SamePositionSlowdowns {
  static constexpr Severity severity = Severity::warning;
  RunList runs;
  double p = 1;                             // Fisher one-sided
  bool operator==(const SamePositionSlowdowns&) const = default;
};

// no_change, but the interval excludes 1.
struct SignificantInsideMargin {
  static constexpr Severity severity = Severity::note;
  double margin = 0;
  bool operator==(const SignificantInsideMargin&) const = default;
};

// Inconclusive: a significant shift estimated inside the margin whose interval reaches past it.
struct SignificantEstimatedInsideMargin {
  static constexpr Severity severity = Severity::note;
  bool worse = false;                       // B is worse (else better) than A
  double margin = 0;
  double shift = 0;                         // |oriented estimate - 1|
  bool operator==(const SignificantEstimatedInsideMargin&) const = default;
};

// Regression because B falls into worse modes more often, not because of the overall shift.
struct RegressionByModes {
  static constexpr Severity severity = Severity::note;
  bool operator==(const RegressionByModes&) const = default;
};

// A paired design with fewer than 2 complete blocks: the unpaired estimate decides.
struct PairingUnavailable {
  static constexpr Severity severity = Severity::warning;
  bool operator==(const PairingUnavailable&) const = default;
};

// A side has no valid run of the metric: nothing to compare, inconclusive.
struct NoValidRuns {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  Side side = Side::a;                      // the empty side
  bool operator==(const NoValidRuns&) const = default;
};

// Pairs of runs whose starts lay surely further apart than schedule.max_start_skew allows, left out
// on both sides (AnalysisOptions::max_start_skew_ms).
struct PairsSkewed {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  std::size_t voided = 0, pairs = 0;
  double max_start_skew_ms = 0, worst_skew_ms = 0;
  bool operator==(const PairsSkewed&) const = default;
};

// Those left a side with no run at all: nothing to compare, inconclusive.
struct AllPairsSkewed {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  std::size_t voided = 0, pairs = 0;
  double max_start_skew_ms = 0, worst_skew_ms = 0;
  Side side = Side::a;                      // the empty side
  bool operator==(const AllPairsSkewed&) const = default;
};

// The old rule's findings, as analysis.json of abvm before issue 26 holds them (read back, never
// made now): pairs of runs that overlapped less than schedule.min_overlap asked, left out.
struct PairsVoided {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  std::size_t voided = 0, pairs = 0;
  double threshold = 0, min = 0;            // shares, 0..1
  bool operator==(const PairsVoided&) const = default;
};

// Those left a side with no run at all: nothing to compare, inconclusive.
struct AllPairsVoided {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  std::size_t voided = 0, pairs = 0;
  double threshold = 0, min = 0;
  Side side = Side::a;                      // the empty side
  bool operator==(const AllPairsVoided&) const = default;
};

// A paired design whose pairs did not share the host's noise (NoiseAnatomy::pair_correlation).
struct WeakPairing {
  static constexpr Severity severity = Severity::warning;
  std::string metric;
  std::size_t blocks = 0;
  double correlation = 0, between_boot_sd = 0;
  bool operator==(const WeakPairing&) const = default;
};

// One host's paired B/A over its own blocks (HostEffect), as the host findings cite it.
struct HostFigure {
  std::string host;
  std::size_t blocks = 0;
  std::optional<double> estimate, low, high;  // nullopt: fewer than 2 blocks
  bool operator==(const HostFigure&) const = default;
};

// A pool's hosts disagree about the effect beyond chance (Kruskal-Wallis).
struct HostsDisagree {
  static constexpr Severity severity = Severity::warning;
  double p = 1;
  std::vector<HostFigure> hosts;
  bool operator==(const HostsDisagree&) const = default;
};

// They agree: each host's effect, for the record.
struct HostsAgree {
  static constexpr Severity severity = Severity::note;
  double p = 1;
  std::vector<HostFigure> hosts;
  bool operator==(const HostsAgree&) const = default;
};

// A host measures side A at under half or over twice the other hosts' median.
struct HostFarOff {
  static constexpr Severity severity = Severity::note;
  std::string host;
  double ratio = 1;                         // its A median / the others' median of A medians
  bool operator==(const HostFarOff&) const = default;
};

using MetricFinding =
    std::variant<FewUnits, ConfidenceUnreachable, UnbalancedSides, Outliers, Drift, Multimodal, MoreInWorseModes,
                 SamePositionSlowdowns, SignificantInsideMargin, SignificantEstimatedInsideMargin, RegressionByModes,
                 PairingUnavailable, NoValidRuns, PairsSkewed, AllPairsSkewed, PairsVoided, AllPairsVoided, WeakPairing, HostsDisagree, HostsAgree,
                 HostFarOff>;

// ---- findings about the whole experiment ----

// Some runs came from guests that are not what their side must be (outcome mismatch).
struct SidesMismatch {
  static constexpr Severity severity = Severity::warning;
  std::size_t runs = 0;
  bool operator==(const SidesMismatch&) const = default;
};

struct DifferentHosts {
  static constexpr Severity severity = Severity::warning;
  bool operator==(const DifferentHosts&) const = default;
};

struct DifferentAccelerators {
  static constexpr Severity severity = Severity::warning;
  bool operator==(const DifferentAccelerators&) const = default;
};

struct RanUnderTcg {
  static constexpr Severity severity = Severity::warning;
  bool operator==(const RanUnderTcg&) const = default;
};

// Under TCG with host cost metrics (samples/cost.hpp): the host's CPU includes the emulator.
struct HostCostUnderTcg {
  static constexpr Severity severity = Severity::note;
  bool operator==(const HostCostUnderTcg&) const = default;
};

struct RunsFailed {
  static constexpr Severity severity = Severity::warning;
  std::size_t a = 0, b = 0;
  bool operator==(const RunsFailed&) const = default;
};

// A side fails at least 3 times as often as the other (and at least 3 times).
struct OneSideFailsMore {
  static constexpr Severity severity = Severity::warning;
  Side side = Side::a;
  bool operator==(const OneSideFailsMore&) const = default;
};

// Every run failed: no metric at all.
struct NothingToCompare {
  static constexpr Severity severity = Severity::warning;
  bool operator==(const NothingToCompare&) const = default;
};

// A workload (or a metric asked for) with no valid run on either side (samples/sample.hpp MissingData).
struct WorkloadMissing {
  static constexpr Severity severity = Severity::warning;
  std::string workload;
  std::vector<std::string> metrics;
  std::size_t runs_a = 0, runs_b = 0;
  std::string first_failure;
  std::vector<std::string> reported;
  bool operator==(const WorkloadMissing&) const = default;
};

// A note that comes with the inputs in words of its own (samples/load: a partial dd record, an
// unfinished journal line; cli/compare's "baseline: " prefixes): its text is the fact.
struct InputNote {
  static constexpr Severity severity = Severity::note;
  std::string text;
  bool operator==(const InputNote&) const = default;
};

using ExperimentFinding = std::variant<SidesMismatch, DifferentHosts, DifferentAccelerators, RanUnderTcg,
                                       HostCostUnderTcg, RunsFailed, OneSideFailsMore, NothingToCompare,
                                       WorkloadMissing, InputNote>;

template <class Finding>
Severity severity_of(const Finding& finding) {
  return std::visit([](const auto& f) { return std::decay_t<decltype(f)>::severity; }, finding);
}

// The first finding of kind T, or nullptr.
template <class T, class Finding>
const T* find_finding(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (const T* x = std::get_if<T>(&f)) return x;
  }
  return nullptr;
}

}  // namespace abvm
