#include "report/wording.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace abvm {
namespace {

std::string percent_of(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }
std::string share(double fraction) { return fmt::format("{:.3g} %", fraction * 100); }
const char* units_word(bool per_boot) { return per_boot ? "boots" : "runs"; }
const char* other_side(Side side) { return to_string(side == Side::a ? Side::b : Side::a); }

// "#3, #7, ... and 12 more": a warning is read, not parsed.
std::string list_runs(const RunList& runs) {
  std::string out;
  for (std::size_t run : runs.first) out += (out.empty() ? "#" : ", #") + std::to_string(run);
  if (runs.count > runs.first.size()) out += fmt::format(" and {} more", runs.count - runs.first.size());
  return out;
}

// "1.020 [1.010, 1.030] on h1 (4 blocks); 1 blocks on h2"
std::string host_figures(const std::vector<HostFigure>& hosts) {
  std::vector<std::string> each;
  for (const HostFigure& x : hosts) {
    each.push_back(x.estimate ? fmt::format("{:.3f} [{:.3f}, {:.3f}] on {} ({} blocks)", *x.estimate, x.low.value_or(0),
                                            x.high.value_or(0), x.host, x.blocks)
                              : fmt::format("{} blocks on {}", x.blocks, x.host));
  }
  return fmt::format("{}", fmt::join(each, "; "));
}

std::string mode_ranges(const Multimodal& m) {
  std::vector<std::string> each;
  for (const ModeRange& mode : m.modes) {
    each.push_back(fmt::format("{:.4g}..{:.4g} {} (A {}, B {})", mode.low, mode.high, m.unit, percent_of(mode.a_fraction),
                               percent_of(mode.b_fraction)));
  }
  return fmt::format("{}", fmt::join(each, ", "));
}

// One overload per kind of metric finding: std::visit does not compile while one is missing.
struct MetricWords {
  std::string operator()(const FewUnits& f) const {
    return fmt::format("Few {}: A has {}, B has {}. Rank-based intervals need about 10 per side to be informative; {}.",
                       units_word(f.per_boot), f.a, f.b,
                       f.runs_needed ? fmt::format("about {} per side would likely settle this", *f.runs_needed)
                                     : std::string("add boots per side"));
  }
  std::string operator()(const ConfidenceUnreachable& f) const {
    return fmt::format("With {} and {} {}, no interval can reach {} confidence; the widest one reaches {}. Add {}.", f.a,
                       f.b, units_word(f.per_boot), percent_of(f.confidence), percent_of(f.achieved), units_word(f.per_boot));
  }
  std::string operator()(const UnbalancedSides& f) const {
    return fmt::format("The sides differ much in size (A {} {}, B {}): check why runs are missing on one side (failed "
                       "trials?) and balance them.",
                       f.a, units_word(f.per_boot), f.b);
  }
  std::string operator()(const Outliers& f) const {
    return fmt::format("Side {} has {} outlier run(s) ({}) by Tukey fences or MAD z-score. They are kept in the "
                       "analysis; check their logs and host load.",
                       to_string(f.side), f.runs.count, list_runs(f.runs));
  }
  std::string operator()(const Drift& f) const {
    return fmt::format("Side {} drifts with run order (Spearman rho = {:.2f}, p = {:.3g}): the host changed during the "
                       "experiment. Keep A and B interleaved and check host load, CPU frequency scaling and thermal "
                       "state.",
                       to_string(f.side), f.rho, f.p);
  }
  std::string operator()(const Multimodal& f) const {
    return fmt::format("{} is multimodal: {} modes ({}). A single median hides this; look at the runs in the slow mode "
                       "(host interference, caching, CPU frequency) and keep A and B interleaved so that both sides "
                       "meet it alike.",
                       f.metric, f.modes.size(), mode_ranges(f));
  }
  std::string operator()(const MoreInWorseModes& f) const {
    return fmt::format("{} spends significantly more {} than {} in modes worse than the dominant one by more than the "
                       "margin (Fisher one-sided p = {:.3g} < {:.3g}).",
                       to_string(f.side), units_word(f.per_boot), other_side(f.side), f.p, f.alpha);
  }
  std::string operator()(const SamePositionSlowdowns& f) const {
    return fmt::format("The runs in the worse mode fall at the same positions on both sides (runs {}; Fisher p = "
                       "{:.3g}): the slowdowns came from the host and hit both sides alike. Running all of A before "
                       "all of B would confound them with the change: use interleaved A/B runs (abvm run does this).",
                       list_runs(f.runs), f.p);
  }
  std::string operator()(const SignificantInsideMargin& f) const {
    return fmt::format("The shift is statistically significant but inside the ±{} margin.", percent_of(f.margin));
  }
  std::string operator()(const SignificantEstimatedInsideMargin& f) const {
    return fmt::format("B is significantly {} than A, but by less than the ±{} margin as far as the estimate goes ({}); "
                       "the interval still reaches past the margin, so more runs are needed to show the change is "
                       "within it.",
                       f.worse ? "worse" : "better", percent_of(f.margin), percent_of(f.shift));
  }
  std::string operator()(const RegressionByModes&) const {
    return "Regression by modes: B falls significantly more often than A into a mode worse than the dominant one by "
           "more than the margin, even though the overall shift alone does not show it.";
  }
  std::string operator()(const PairingUnavailable&) const {
    return "The design pairs A with B in blocks, but fewer than 2 blocks have valid runs on both sides: the unpaired "
           "estimate decides. Look at the failed trials.";
  }
  std::string operator()(const NoValidRuns& f) const {
    return fmt::format("No valid runs of {} on side {}: nothing to compare. Check the failed trials.", f.metric,
                       to_string(f.side));
  }
  std::string operator()(const PairsSkewed& f) const {
    return fmt::format("{} of {} pairs of runs of {} started further apart than the {} ms schedule.max_start_skew "
                       "allows, beyond both runs' clock errors (the worst {:.0f} ms): they are left out on both sides, "
                       "since one side of each measured partly alone; the estimate over every pair is shown beside. "
                       "Look at their timing (analysis.json runs[].timing, the timeline plot); if many pairs start "
                       "apart, check that each block's guests share their host CPUs and nothing else loads them.",
                       f.voided, f.pairs, f.metric, f.max_start_skew_ms, f.worst_skew_ms);
  }
  std::string operator()(const AllPairsSkewed& f) const {
    return fmt::format("{} of {} pairs of runs of {} started further apart than the {} ms schedule.max_start_skew "
                       "allows (the worst {:.0f} ms), and side {} has no run left once they are left out: nothing to "
                       "compare. A's and B's runs did not start together; look at their timing (analysis.json "
                       "runs[].timing, the timeline plot) and the host's load before running again.",
                       f.voided, f.pairs, f.metric, f.max_start_skew_ms, f.worst_skew_ms, to_string(f.side));
  }
  std::string operator()(const PairsVoided& f) const {
    return fmt::format("{} of {} pairs of runs of {} overlapped less than the {} schedule.min_overlap asks (the worst "
                       "{}): they are left out on both sides, since one side of each measured partly alone. Look at "
                       "their timing (analysis.json runs[].timing, the timeline plot); if many pairs drift apart, "
                       "check that each block's guests share their host CPUs and nothing else loads them, and add "
                       "blocks to make up for those left out.",
                       f.voided, f.pairs, f.metric, share(f.threshold), share(f.min));
  }
  std::string operator()(const AllPairsVoided& f) const {
    return fmt::format("{} of {} pairs of runs of {} overlapped less than the {} schedule.min_overlap asks (the worst "
                       "{}), and side {} has no run left once they are left out: nothing to compare. A's and B's runs "
                       "did not run at the same time; look at their timing (analysis.json runs[].timing, the timeline "
                       "plot) and the host's load before running again.",
                       f.voided, f.pairs, f.metric, share(f.threshold), share(f.min), to_string(f.side));
  }
  std::string operator()(const WeakPairing& f) const {
    return fmt::format("The pairing of A and B in {} did not work: over {} blocks their correlation is {:.2f} "
                       "(co-scheduled A/A runs pair at about 0.95), although the boots differ by {:.3f} (sd of ln), so "
                       "A's and B's runs did not share the host's noise and the paired interval is no narrower than "
                       "the unpaired one. Check that each block's guests ran at the same time on the same host CPUs "
                       "(the runs' overlap and timing) and that nothing else loads them.",
                       f.metric, f.blocks, std::abs(f.correlation) < 0.005 ? 0.0 : f.correlation,  // never "-0.00"
                       f.between_boot_sd);
  }
  std::string operator()(const HostsDisagree& f) const {
    return fmt::format("The hosts disagree about the effect beyond chance (Kruskal-Wallis p = {:.3g}): B/A {}. The "
                       "verdict pools every block (each pairs A with B on one host); look at what differs between the "
                       "hosts (CPU, kernel, load, libvirt, QEMU).",
                       f.p, host_figures(f.hosts));
  }
  std::string operator()(const HostsAgree& f) const {
    return fmt::format("Per host: B/A {} (hosts agree: Kruskal-Wallis p = {:.3g}).", host_figures(f.hosts), f.p);
  }
  std::string operator()(const HostFarOff& f) const {
    return fmt::format("Host {} measures side A at {:.2f}x the other hosts' median: a much {} host (its blocks still "
                       "pair A with B there).",
                       f.host, f.ratio, f.ratio < 1 ? "slower" : "faster");
  }
};

// A workload with no valid run, what is missing and why, that it makes the verdict inconclusive,
// and what to do.
std::string workload_missing_words(const WorkloadMissing& d) {
  const std::string asked = d.metrics.empty() ? "" : fmt::format(" (asked for: {})", fmt::join(d.metrics, ", "));
  const std::string verdict = "the overall verdict is inconclusive whatever the other metrics say";
  if (!d.reported.empty()) {
    return fmt::format("No run of workload {} reported {}, which [analysis] metrics asks for (its runs report {}), so "
                       "{}. Ask for those in [analysis] metrics.",
                       d.workload, fmt::join(d.metrics, ", "), fmt::join(d.reported, ", "), verdict);
  }
  if (d.first_failure.empty()) return fmt::format("Workload {} has no run in the results{}, so {}.", d.workload, asked, verdict);
  return fmt::format("Workload {} has no valid run on either side: every one of its runs failed ({} on A, {} on B), "
                     "so none of its metrics is compared{} and {}. First failure: {}. Fix the workload (each run's "
                     "output is kept in trials/<trial>/) and run again.",
                     d.workload, d.runs_a, d.runs_b, asked, verdict, d.first_failure);
}

// One overload per kind of experiment-wide finding.
struct ExperimentWords {
  std::string operator()(const SidesMismatch& f) const {
    return fmt::format("THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS: {} run(s) came from guests whose kernel, command "
                       "line or negotiated features differ from their side's (outcome mismatch, listed below). Fix the "
                       "configuration or the kernels before trusting any verdict.",
                       f.runs);
  }
  std::string operator()(const DifferentHosts&) const {
    return "A and B were measured on different hosts: host differences are confounded with the change. Run both sides "
           "on the same host.";
  }
  std::string operator()(const DifferentAccelerators&) const {
    return "A and B ran under different accelerators (KVM vs TCG): the comparison is meaningless. Run both sides with "
           "the same accelerator.";
  }
  std::string operator()(const RanUnderTcg&) const {
    return "Guests ran under TCG (software emulation): the numbers describe the emulator as much as the kernel. Use a "
           "host with working KVM for conclusions about real hardware.";
  }
  std::string operator()(const HostCostUnderTcg&) const {
    return "Under TCG the host's CPU per GiB and per request include the emulator translating every guest "
           "instruction: they compare the two sides' cost to the emulator, not to a CPU running them.";
  }
  std::string operator()(const RunsFailed& f) const {
    return fmt::format("{} run(s) failed on side A and {} on side B; they are listed and left out of the statistics.",
                       f.a, f.b);
  }
  std::string operator()(const OneSideFailsMore& f) const {
    return fmt::format("Side {} fails much more often than side {}: that is itself a finding. Look at the failed "
                       "trials' console logs.",
                       to_string(f.side), other_side(f.side));
  }
  std::string operator()(const NothingToCompare&) const {
    return "No valid run on either side: nothing to compare. Look at the failed trials' console logs.";
  }
  std::string operator()(const WorkloadMissing& f) const { return workload_missing_words(f); }
  std::string operator()(const InputNote& f) const { return f.text; }
};

template <class Finding>
std::vector<std::string> sentences_of(const std::vector<Finding>& findings, Severity severity) {
  std::vector<std::string> out;
  for (const Finding& f : findings) {
    if (severity_of(f) == severity) out.push_back(sentence(f));
  }
  return out;
}

bool is_time_unit(const std::string& unit) { return unit == "ns" || unit == "us" || unit == "ms" || unit == "s"; }

// The word for a ratio B/A above or below 1 in the metric's terms: a bandwidth below 1 is slower,
// a latency above 1 is.
std::string change_word(double ratio, const std::string& unit) {
  if (unit == "B/s" || unit == "IOPS") return ratio < 1 ? "slower" : "faster";
  if (is_time_unit(unit)) return ratio > 1 ? "slower" : "faster";
  return ratio < 1 ? "lower" : "higher";
}

// "4.9 %": how far a ratio lies from 1, whichever way.
std::string distance(double ratio) { return percent_of(std::abs(ratio - 1)); }

// "dma-api (B) is 4.9 % slower than direct (A) in dd-write.bandwidth": the raw ratio B/A in the
// metric's own terms (a latency 7.6 % higher is 7.6 % slower), which is what a developer measures.
std::string change_words(const ReportMetric& m, const ReportSource& sides) {
  const double r = m.effect.estimate;
  const std::string a = labelled("A", sides.a_label), b = labelled("B", sides.b_label);
  if (std::abs(r - 1) < 5e-4) return fmt::format("{} is as fast as {} in {}", b, a, m.name);
  return fmt::format("{} is {} {} than {} in {}", b, distance(r), change_word(r, m.unit), a, m.name);
}

// "paired, 97.5 % CI 2.1 to 7.6 % slower", or "95 % CI from 3.0 % slower to 6.0 % faster" for an
// interval that holds 1.
std::string interval_words(const ReportMetric& m) {
  const double lo = m.effect.low, hi = m.effect.high;
  const std::string ci = fmt::format("{}{:.3g} % CI", m.primary_estimate == Estimate::paired ? "paired, " : "",
                                     m.effect.confidence * 100);
  if ((lo - 1) * (hi - 1) > 0) {
    const double near = std::abs(lo - 1) < std::abs(hi - 1) ? lo : hi, far = near == lo ? hi : lo;
    return fmt::format("{} {:.1f} to {} {}", ci, std::abs(near - 1) * 100, distance(far), change_word(lo, m.unit));
  }
  return fmt::format("{} from {} {} to {} {}", ci, distance(lo), change_word(lo, m.unit), distance(hi),
                     change_word(hi, m.unit));
}

// "regression", "no_change (a significant shift, inside the ±5.0 % margin)", "inconclusive; about
// 30 A/B blocks would likely settle it".
std::string verdict_words(const ReportMetric& m, double margin) {
  std::string text = to_string(m.verdict);
  // Said with the verdict, not only in a note: a reader of the verdict alone must see it.
  if (const std::string q = margin_qualifier(m.verdict, oriented_effect(m), margin); !q.empty()) text += " (" + q + ")";
  if (m.runs_needed) {
    text += m.primary_estimate == Estimate::paired
                ? fmt::format("; about {} A/B blocks would likely settle it", *m.runs_needed)
                : fmt::format("; about {} {} per side would likely settle it", *m.runs_needed, units_word(m.a.per_boot));
  }
  return text;
}

// Why a metric has no effect to state, or "" when it has one.
std::string no_effect_words(const ReportMetric& m, const ReportSource& sides) {
  const auto side = [&](Side s) { return labelled(to_string(s), s == Side::a ? sides.a_label : sides.b_label); };
  if (const auto* f = find_finding<NoValidRuns>(m.findings)) return "no valid runs on side " + side(f->side);
  if (const auto* f = find_finding<AllPairsSkewed>(m.findings)) {
    return fmt::format("no run of side {} started within {} ms of its partner", side(f->side), f->max_start_skew_ms);
  }
  if (const auto* f = find_finding<AllPairsVoided>(m.findings)) {
    return fmt::format("no run of side {} overlapped its partner by {}", side(f->side), share(f->threshold));
  }
  if (!std::isfinite(m.effect.estimate)) return "no estimate";
  return "";
}

}  // namespace

std::string sentence(const MetricFinding& finding) { return std::visit(MetricWords{}, finding); }
std::string sentence(const ExperimentFinding& finding) { return std::visit(ExperimentWords{}, finding); }

std::vector<std::string> sentences(const std::vector<MetricFinding>& findings, Severity severity) {
  return sentences_of(findings, severity);
}
std::vector<std::string> sentences(const std::vector<ExperimentFinding>& findings, Severity severity) {
  return sentences_of(findings, severity);
}

std::string margin_qualifier(Verdict verdict, const OrientedEffect& e, double margin) {
  const bool significant = e.high < 1 || e.low > 1;
  if (!significant) return "";
  if (verdict == Verdict::no_change) return fmt::format("a significant shift, inside the ±{} margin", percent_of(margin));
  if (verdict == Verdict::inconclusive && std::abs(e.estimate - 1) < margin) {
    return fmt::format("a significant shift, estimated inside the ±{} margin; its interval reaches past it",
                       percent_of(margin));
  }
  return "";
}

std::string labelled(const std::string& letter, const std::string& label) {
  return label.empty() || label == letter ? letter : fmt::format("{} ({})", label, letter);
}

std::string headline(const ReportMetric& metric, const ReportModel& report) {
  // With nothing to compare, the headline says why instead of an effect that does not exist.
  if (const std::string why = no_effect_words(metric, report.source); !why.empty()) {
    return fmt::format("{}: {}: {}", metric.name, why, verdict_words(metric, report.margin));
  }
  std::string text = change_words(metric, report.source);
  if (std::isfinite(metric.effect.low) && std::isfinite(metric.effect.high)) text += " (" + interval_words(metric) + ")";
  return text + ": " + verdict_words(metric, report.margin);
}

std::string verdict_headline(const ReportModel& report) {
  std::string text = to_string(report.verdict);
  // A verdict word that a significant shift stands behind says so, metric by metric.
  std::vector<std::string> qualified;
  for (const ReportMetric& m : report.metrics) {
    if (!m.judged) continue;  // no part of the verdict
    const std::string q = margin_qualifier(m.verdict, oriented_effect(m), report.margin);
    if (!q.empty()) qualified.push_back(m.name + ": " + q);
  }
  if (!qualified.empty()) text += fmt::format(" ({})", fmt::join(qualified, "; "));
  // Said with the verdict itself, which is what a reader looks at first and last.
  const bool mismatch = std::any_of(report.failures.begin(), report.failures.end(),
                                    [](const FailedRun& f) { return f.outcome == "mismatch"; });
  if (mismatch) text += " (BUT THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS: see the mismatch warning)";
  return text;
}

std::vector<std::string> run_length_lines(const SideContext& a, const SideContext& b) {
  std::vector<std::string> out;
  const auto time = [](const RunLength* l) {
    if (l == nullptr) return std::string("no ok run");
    return l->median_seconds ? fmt::format("{:.3f} s", *l->median_seconds) : std::string("not timed");
  };
  std::vector<std::string> names;
  for (const SideContext* c : {&a, &b}) {
    for (const RunLength& l : c->run_lengths) {
      if (std::find(names.begin(), names.end(), l.workload) == names.end()) names.push_back(l.workload);
    }
  }
  for (const std::string& name : names) {
    const auto find = [&](const SideContext& c) -> const RunLength* {
      const auto it = std::find_if(c.run_lengths.begin(), c.run_lengths.end(),
                                   [&](const RunLength& l) { return l.workload == name; });
      return it == c.run_lengths.end() ? nullptr : &*it;
    };
    const RunLength* la = find(a);
    const RunLength* lb = find(b);
    const std::string size_a = la ? la->size : "", size_b = lb ? lb->size : "";
    const std::string size = size_a == size_b || size_b.empty() ? size_a : size_a.empty() ? size_b : "";
    const std::string sizes = !size.empty() ? size + ", " : size_a != size_b ? fmt::format("A {}, B {}, ", size_a, size_b) : "";
    out.push_back(fmt::format("{}: {}median run {} on A, {} on B", name, sizes, time(la), time(lb)));
  }
  return out;
}

const char* const kNotJudgedWords =
    "reported, not judged: its verdict is no part of the experiment's (name it in [analysis] metrics to judge it)";

}  // namespace abvm
