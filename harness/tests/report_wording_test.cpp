// The words of the analysis's findings (report/wording), their JSON (report/findings_json), and that
// every output shows one sentence per finding. The sentences are the ones abvm printed before the
// findings were facts (issue 21): they are pinned here word for word.
#include "report_model_support.hpp"
#include "report/wording.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_read.hpp"
#include "report/findings_json.hpp"
#include "report/json_report.hpp"
#include "report/terminal.hpp"

using namespace abvm;
using namespace abvm::test;
using ::testing::HasSubstr;

namespace {

// The findings of `findings`, read as a part of analysis.json at `path`.
template <class Finding>
std::vector<Finding> findings_read(const nlohmann::json& findings, const std::string& path) {
  const JsonSource source{.file = "analysis.json"};
  return read_findings<Finding>(JsonField(findings, source, path));
}

const HostFigure kHost1{.host = "h1", .blocks = 8, .estimate = 1.0, .low = 0.99, .high = 1.01};
const HostFigure kHost2{.host = "h2", .blocks = 1};
const std::string kFirstFailure =
    "dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: dd: failed to open "
    "'/dev/null': Invalid argument";

RunList runs_1_to(std::size_t count) {
  RunList out{.count = count};
  for (std::size_t k = 1; k <= std::min(count, kListedRuns); ++k) out.first.push_back(k);
  return out;
}

// Every kind of metric finding at least once, with the sentence abvm says for it.
std::vector<std::pair<MetricFinding, std::string>> worded_metric_findings() {
  return {
      {FewUnits{.per_boot = true, .a = 6, .b = 6, .runs_needed = 14},
       "Few boots: A has 6, B has 6. Rank-based intervals need about 10 per side to be informative; about 14 per side "
       "would likely settle this."},
      {FewUnits{.per_boot = false, .a = 3, .b = 4},
       "Few runs: A has 3, B has 4. Rank-based intervals need about 10 per side to be informative; add boots per "
       "side."},
      {ConfidenceUnreachable{.a = 1, .b = 10, .confidence = 0.95, .achieved = 1 - 2.0 / 11},
       "With 1 and 10 runs, no interval can reach 95.0 % confidence; the widest one reaches 81.8 %. Add runs."},
      {UnbalancedSides{.a = 3, .b = 10},
       "The sides differ much in size (A 3 runs, B 10): check why runs are missing on one side (failed trials?) and "
       "balance them."},
      {Outliers{.side = Side::a, .runs = {.count = 2, .first = {5, 7}}},
       "Side A has 2 outlier run(s) (#5, #7) by Tukey fences or MAD z-score. They are kept in the analysis; check "
       "their logs and host load."},
      {Outliers{.side = Side::b, .runs = runs_1_to(23)},
       "Side B has 23 outlier run(s) (#1, #2, #3, #4, #5, #6, #7, #8, #9, #10, #11, #12, #13, #14, #15, #16, #17, "
       "#18, #19, #20 and 3 more) by Tukey fences or MAD z-score. They are kept in the analysis; check their logs and "
       "host load."},
      {Drift{.side = Side::b, .rho = 0.8123, .p = 0.000123},
       "Side B drifts with run order (Spearman rho = 0.81, p = 0.000123): the host changed during the experiment. "
       "Keep A and B interleaved and check host load, CPU frequency scaling and thermal state."},
      {Multimodal{.metric = "dd.bandwidth",
                  .unit = "B/s",
                  .modes = {{.low = 4e9, .high = 4.4e9, .a_fraction = 0.7, .b_fraction = 0.6},
                            {.low = 1.2e9, .high = 1.6e9, .a_fraction = 0.3, .b_fraction = 0.4}}},
       "dd.bandwidth is multimodal: 2 modes (4e+09..4.4e+09 B/s (A 70.0 %, B 60.0 %), 1.2e+09..1.6e+09 B/s (A 30.0 "
       "%, B 40.0 %)). A single median hides this; look at the runs in the slow mode (host interference, caching, "
       "CPU frequency) and keep A and B interleaved so that both sides meet it alike."},
      {MoreInWorseModes{.side = Side::b, .per_boot = false, .p = 0.0123, .alpha = 0.0125},
       "B spends significantly more runs than A in modes worse than the dominant one by more than the margin (Fisher "
       "one-sided p = 0.0123 < 0.0125)."},
      {MoreInWorseModes{.side = Side::a, .per_boot = true, .p = 0.001, .alpha = 0.025},
       "A spends significantly more boots than B in modes worse than the dominant one by more than the margin (Fisher "
       "one-sided p = 0.001 < 0.025)."},
      {SamePositionSlowdowns{.runs = {.count = 3, .first = {5, 7, 9}}, .p = 0.0123},
       "The runs in the worse mode fall at the same positions on both sides (runs #5, #7, #9; Fisher p = 0.0123): the "
       "slowdowns came from the host and hit both sides alike. Running all of A before all of B would confound them "
       "with the change: use interleaved A/B runs (abvm run does this)."},
      {SignificantInsideMargin{.margin = 0.05}, "The shift is statistically significant but inside the ±5.0 % margin."},
      {SignificantEstimatedInsideMargin{.worse = true, .margin = 0.05, .shift = 0.031},
       "B is significantly worse than A, but by less than the ±5.0 % margin as far as the estimate goes (3.1 %); the "
       "interval still reaches past the margin, so more runs are needed to show the change is within it."},
      {SignificantEstimatedInsideMargin{.worse = false, .margin = 0.1, .shift = 0.052},
       "B is significantly better than A, but by less than the ±10.0 % margin as far as the estimate goes (5.2 %); the "
       "interval still reaches past the margin, so more runs are needed to show the change is within it."},
      {RegressionByModes{},
       "Regression by modes: B falls significantly more often than A into a mode worse than the dominant one by more "
       "than the margin, even though the overall shift alone does not show it."},
      {PairingUnavailable{},
       "The design pairs A with B in blocks, but fewer than 2 blocks have valid runs on both sides: the unpaired "
       "estimate decides. Look at the failed trials."},
      {NoValidRuns{.metric = "m", .side = Side::b},
       "No valid runs of m on side B: nothing to compare. Check the failed trials."},
      {PairsSkewed{.metric = "bw", .voided = 2, .pairs = 36, .max_start_skew_ms = 50, .worst_skew_ms = 400.2},
       "2 of 36 pairs of runs of bw started further apart than the 50 ms schedule.max_start_skew allows, beyond both "
       "runs' clock errors (the worst 400 ms): they are left out on both sides, since one side of each measured partly "
       "alone; the estimate over every pair is shown beside. Look at their timing (analysis.json runs[].timing, the "
       "timeline plot); if many pairs start apart, check that each block's guests share their host CPUs and nothing "
       "else loads them."},
      {AllPairsSkewed{.metric = "bw", .voided = 36, .pairs = 36, .max_start_skew_ms = 50, .worst_skew_ms = 211,
                      .side = Side::a},
       "36 of 36 pairs of runs of bw started further apart than the 50 ms schedule.max_start_skew allows (the worst "
       "211 ms), and side A has no run left once they are left out: nothing to compare. A's and B's runs did not "
       "start together; look at their timing (analysis.json runs[].timing, the timeline plot) and the host's load "
       "before running again."},
      {PairsVoided{.metric = "bw", .voided = 2, .pairs = 36, .threshold = 0.95, .min = 0.5},
       "2 of 36 pairs of runs of bw overlapped less than the 95 % schedule.min_overlap asks (the worst 50 %): they are "
       "left out on both sides, since one side of each measured partly alone. Look at their timing (analysis.json "
       "runs[].timing, the timeline plot); if many pairs drift apart, check that each block's guests share their host "
       "CPUs and nothing else loads them, and add blocks to make up for those left out."},
      {AllPairsVoided{.metric = "bw", .voided = 36, .pairs = 36, .threshold = 0.95, .min = 0.5, .side = Side::a},
       "36 of 36 pairs of runs of bw overlapped less than the 95 % schedule.min_overlap asks (the worst 50 %), and "
       "side A has no run left once they are left out: nothing to compare. A's and B's runs did not run at the same "
       "time; look at their timing (analysis.json runs[].timing, the timeline plot) and the host's load before "
       "running again."},
      {WeakPairing{.metric = "bw", .blocks = 12, .correlation = -0.001, .between_boot_sd = 0.1044},
       "The pairing of A and B in bw did not work: over 12 blocks their correlation is 0.00 (co-scheduled A/A runs "
       "pair at about 0.95), although the boots differ by 0.104 (sd of ln), so A's and B's runs did not share the "
       "host's noise and the paired interval is no narrower than the unpaired one. Check that each block's guests ran "
       "at the same time on the same host CPUs (the runs' overlap and timing) and that nothing else loads them."},
      {HostsDisagree{.p = 0.00123, .hosts = {kHost1, kHost2}},
       "The hosts disagree about the effect beyond chance (Kruskal-Wallis p = 0.00123): B/A 1.000 [0.990, 1.010] on "
       "h1 (8 blocks); 1 blocks on h2. The verdict pools every block (each pairs A with B on one host); look at what "
       "differs between the hosts (CPU, kernel, load, libvirt, QEMU)."},
      {HostsAgree{.p = 0.5, .hosts = {kHost1, kHost2}},
       "Per host: B/A 1.000 [0.990, 1.010] on h1 (8 blocks); 1 blocks on h2 (hosts agree: Kruskal-Wallis p = 0.5)."},
      {HostFarOff{.host = "h2", .ratio = 0.4},
       "Host h2 measures side A at 0.40x the other hosts' median: a much slower host (its blocks still pair A with B "
       "there)."},
      {HostFarOff{.host = "h3", .ratio = 2.5},
       "Host h3 measures side A at 2.50x the other hosts' median: a much faster host (its blocks still pair A with B "
       "there)."},
  };
}

std::vector<std::pair<ExperimentFinding, std::string>> worded_experiment_findings() {
  return {
      {SidesMismatch{.runs = 1},
       "THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS: 1 run(s) came from guests whose kernel, command line or "
       "negotiated features differ from their side's (outcome mismatch, listed below). Fix the configuration or the "
       "kernels before trusting any verdict."},
      {DifferentHosts{},
       "A and B were measured on different hosts: host differences are confounded with the change. Run both sides on "
       "the same host."},
      {DifferentAccelerators{},
       "A and B ran under different accelerators (KVM vs TCG): the comparison is meaningless. Run both sides with the "
       "same accelerator."},
      {RanUnderTcg{},
       "Guests ran under TCG (software emulation): the numbers describe the emulator as much as the kernel. Use a host "
       "with working KVM for conclusions about real hardware."},
      {HostCostUnderTcg{},
       "Under TCG the host's CPU per GiB and per request include the emulator translating every guest instruction: "
       "they compare the two sides' cost to the emulator, not to a CPU running them."},
      {RunsFailed{.a = 0, .b = 3},
       "0 run(s) failed on side A and 3 on side B; they are listed and left out of the statistics."},
      {OneSideFailsMore{.side = Side::b},
       "Side B fails much more often than side A: that is itself a finding. Look at the failed trials' console logs."},
      {NothingToCompare{}, "No valid run on either side: nothing to compare. Look at the failed trials' console logs."},
      {WorkloadMissing{.workload = "dd-read", .runs_a = 2, .runs_b = 2, .first_failure = kFirstFailure},
       "Workload dd-read has no valid run on either side: every one of its runs failed (2 on A, 2 on B), so none of "
       "its metrics is compared and the overall verdict is inconclusive whatever the other metrics say. First "
       "failure: dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: dd: failed to open "
       "'/dev/null': Invalid argument. Fix the workload (each run's output is kept in trials/<trial>/) and run again."},
      {WorkloadMissing{.workload = "fio-w",
                       .metrics = {"fio-w.iops"},
                       .runs_a = 20,
                       .runs_b = 20,
                       .reported = {"fio-w.fio-w.write.iops"}},
       "No run of workload fio-w reported fio-w.iops, which [analysis] metrics asks for (its runs report "
       "fio-w.fio-w.write.iops), so the overall verdict is inconclusive whatever the other metrics say. Ask for those "
       "in [analysis] metrics."},
      {WorkloadMissing{.workload = "dd-read", .metrics = {"dd-read.bandwidth"}},
       "Workload dd-read has no run in the results (asked for: dd-read.bandwidth), so the overall verdict is "
       "inconclusive whatever the other metrics say."},
      {InputNote{.text = "baseline: a.txt: a partial dd record is left out"},
       "baseline: a.txt: a partial dd record is left out"},
  };
}

template <class Finding>
std::vector<Finding> findings_of(const std::vector<std::pair<Finding, std::string>>& worded) {
  std::vector<Finding> out;
  for (const auto& [finding, words] : worded) out.push_back(finding);
  return out;
}

// Every alternative of the sum appears: a new kind fails here until it has its words and JSON.
template <class Finding>
void expect_every_kind(const std::vector<Finding>& findings) {
  std::set<std::size_t> kinds;
  for (const Finding& f : findings) kinds.insert(f.index());
  EXPECT_EQ(kinds.size(), std::variant_size_v<Finding>);
}

std::vector<Sample> runs_of(const std::vector<double>& values) {
  std::vector<Sample> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back({.value = values[i], .order = static_cast<std::int64_t>(i)});
  return out;
}

// One metric "m" (higher is better), `n` runs per side: A evenly spread by ±`spread` around 1000, B
// the same values in another order (`b_shuffle`) scaled by `factor` (verdict_analysis_test's data).
Analysis analysis_of(double factor, std::size_t n = 20, double spread = 0.01, std::size_t b_shuffle = 3) {
  std::vector<double> a, b;
  for (std::size_t i = 0; i < n; ++i) {
    const double k = 2.0 * static_cast<double>((i * 7) % n) / static_cast<double>(n - 1) - 1;
    const double l = 2.0 * static_cast<double>((i * b_shuffle) % n) / static_cast<double>(n - 1) - 1;
    a.push_back(1000 * (1 + spread * k));
    b.push_back(1000 * factor * (1 + spread * l));
  }
  SampleSet s;
  s.metrics.push_back({.name = "m", .unit = "B/s", .better = Better::higher, .a = runs_of(a), .b = runs_of(b)});
  return analyze(s, {});
}

}  // namespace

TEST(ReportWording, EveryMetricFindingInItsWords) {
  const auto worded = worded_metric_findings();
  expect_every_kind(findings_of(worded));
  for (const auto& [finding, words] : worded) EXPECT_EQ(sentence(finding), words);
}

TEST(ReportWording, EveryExperimentFindingInItsWords) {
  const auto worded = worded_experiment_findings();
  expect_every_kind(findings_of(worded));
  for (const auto& [finding, words] : worded) EXPECT_EQ(sentence(finding), words);
}

// A kind's severity decides whether it is listed with the warnings or the notes, in the order found.
TEST(ReportWording, SentencesAreSortedBySeverityInTheOrderFound) {
  const std::vector<MetricFinding> found = {PairingUnavailable{}, RegressionByModes{},
                                            NoValidRuns{.metric = "m", .side = Side::a},
                                            SignificantInsideMargin{.margin = 0.05}};
  EXPECT_EQ(sentences(found, Severity::warning),
            (std::vector<std::string>{sentence(found[0]), sentence(found[2])}));
  EXPECT_EQ(sentences(found, Severity::note), (std::vector<std::string>{sentence(found[1]), sentence(found[3])}));
}

TEST(ReportWording, TheHeadlineSaysSizeDirectionIntervalAndVerdict) {
  const Analysis loss = analysis_of(0.8);
  const std::string h = headline(loss.metrics[0], loss.options.margin);
  EXPECT_THAT(h, HasSubstr("slower than A in m"));
  EXPECT_THAT(h, HasSubstr(": regression"));
  EXPECT_TRUE(h.starts_with("B is 20.0 % slower than A in m (95 % CI ")) << h;
}

// The headline (terminal, JSON, JUnit, HTML) says a significant shift with the verdict word.
TEST(ReportWording, TheHeadlineQualifiesASignificantShiftInsideTheMargin) {
  const Analysis tiny = analysis_of(0.98, 40);
  ASSERT_EQ(tiny.verdict, Verdict::no_change);
  EXPECT_THAT(headline(tiny.metrics[0], 0.05), HasSubstr("no_change (a significant shift, inside the ±5.0 % margin)"));

  const Analysis small = analysis_of(0.97, 12, 0.045, 5);
  ASSERT_EQ(small.verdict, Verdict::inconclusive);
  ASSERT_TRUE(find_finding<SignificantEstimatedInsideMargin>(small.metrics[0].findings) != nullptr);
  EXPECT_THAT(headline(small.metrics[0], 0.05),
              HasSubstr("inconclusive (a significant shift, estimated inside the ±5.0 % margin; its interval reaches "
                        "past it)"));
}

TEST(ReportWording, TheHeadlineOfAPairedEstimateSaysSo) {
  Analysis r = analysis_of(0.8);
  r.metrics[0].primary = Estimate::paired;
  r.metrics[0].verdict = Verdict::inconclusive;
  r.metrics[0].runs_needed = 30;
  EXPECT_THAT(headline(r.metrics[0], 0.05), HasSubstr("than A in m (paired, 95 % CI "));
  EXPECT_THAT(headline(r.metrics[0], 0.05), HasSubstr("; about 30 A/B blocks would likely settle it"));
}

// With nothing to compare the headline says why, not an effect that does not exist.
TEST(ReportWording, TheHeadlineOfAMetricWithNothingToCompareSaysWhy) {
  MetricAnalysis m{.name = "bw"};
  m.findings = {AllPairsVoided{.metric = "bw", .voided = 36, .pairs = 36, .threshold = 0.95, .min = 0.5, .side = Side::a}};
  EXPECT_EQ(headline(m, 0.05), "bw: no run of side A overlapped its partner by 95 %: inconclusive");
  m.findings = {AllPairsSkewed{.metric = "bw", .voided = 36, .pairs = 36, .max_start_skew_ms = 50, .worst_skew_ms = 211,
                               .side = Side::a}};
  EXPECT_EQ(headline(m, 0.05), "bw: no run of side A started within 50 ms of its partner: inconclusive");
  m.findings = {NoValidRuns{.metric = "bw", .side = Side::b}};
  EXPECT_EQ(headline(m, 0.05), "bw: no valid runs on side B: inconclusive");
}

TEST(ReportFindingsJson, EveryKindRoundTrips) {
  const auto metric = findings_of(worded_metric_findings());
  const auto experiment = findings_of(worded_experiment_findings());
  // Through the text too: what a reader of analysis.json parses.
  const auto metric_json = nlohmann::json::parse(findings_json(metric).dump());
  const auto experiment_json = nlohmann::json::parse(findings_json(experiment).dump());
  EXPECT_EQ(findings_read<MetricFinding>(metric_json, "metrics[0].findings"), metric);
  EXPECT_EQ(findings_read<ExperimentFinding>(experiment_json, "findings"), experiment);
  EXPECT_EQ(metric_json[0]["kind"], "few_units");
  EXPECT_EQ(metric_json[0]["severity"], "warning");
  EXPECT_EQ(metric_json[0]["a"], 6);
}

TEST(ReportFindingsJson, AnUnknownKindOrAMissingNumberIsAnErrorNamingItsPath) {
  const auto expect_error = [](nlohmann::json findings, const std::string& words) {
    try {
      findings_read<MetricFinding>(findings, "metrics[0].findings");
      ADD_FAILURE() << "no error for " << findings.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.what(), words);
    }
  };
  const nlohmann::json few = findings_json(std::vector<MetricFinding>{FewUnits{.a = 6, .b = 6}});
  nlohmann::json unknown = few;
  unknown[0]["kind"] = "few_units_v2";
  expect_error(unknown, "analysis.json: field \"metrics[0].findings[0].kind\" is \"few_units_v2\", an unknown kind of finding");
  nlohmann::json missing = few;
  missing[0].erase("b");
  expect_error(missing, "analysis.json: field \"metrics[0].findings[0].b\" is missing (an integer >= 0)");
  nlohmann::json mistyped = few;
  mistyped[0]["a"] = "six";
  expect_error(mistyped, "analysis.json: field \"metrics[0].findings[0].a\" must be an integer >= 0, not \"six\"");
  nlohmann::json wrong_weight = few;
  wrong_weight[0]["severity"] = "note";
  expect_error(wrong_weight,
               "analysis.json: field \"metrics[0].findings[0].severity\" must be \"warning\" for a few_units, not \"note\"");
  const nlohmann::json hosts = findings_json(std::vector<MetricFinding>{HostsAgree{.p = 0.5, .hosts = {kHost1}}});
  nlohmann::json nested = hosts;
  nested[0]["hosts"][0].erase("host");
  expect_error(nested, "analysis.json: field \"metrics[0].findings[0].hosts[0].host\" is missing (a string)");
  // An experiment-wide kind is no metric finding.
  expect_error(findings_json(std::vector<ExperimentFinding>{RanUnderTcg{}}),
               "analysis.json: field \"metrics[0].findings[0].kind\" is \"ran_under_tcg\", an unknown kind of finding");
}

// Each finding, whatever its kind, is one sentence in the terminal and in analysis.json's
// "warnings" or "notes" (which the HTML and JUnit show), and analysis.json's "findings" rebuild it.
TEST(ReportWording, TheTerminalAndTheJsonShowTheSameSentenceForEveryKind) {
  Analysis r = analysis_of(1.0);
  r.metrics[0].findings = findings_of(worded_metric_findings());
  r.findings = findings_of(worded_experiment_findings());
  const std::string terminal = terminal_report(r);
  const nlohmann::json json = json_report(r, {.kind = "files"});
  const auto listed = [](const nlohmann::json& strings, const std::string& words) {
    return std::find(strings.begin(), strings.end(), words) != strings.end();
  };
  for (const auto& [finding, words] : worded_metric_findings()) {
    const bool warning = severity_of(finding) == Severity::warning;
    EXPECT_THAT(terminal, HasSubstr((warning ? "\n  warning: " : "\n  note: ") + words + "\n"));
    EXPECT_TRUE(listed(json["metrics"][0][warning ? "warnings" : "notes"], words)) << words;
  }
  for (const auto& [finding, words] : worded_experiment_findings()) {
    const bool warning = severity_of(finding) == Severity::warning;
    EXPECT_THAT(terminal, HasSubstr((warning ? "\nwarning: " : "\nnote: ") + words + "\n"));
    EXPECT_TRUE(listed(json[warning ? "warnings" : "notes"], words)) << words;
  }
  EXPECT_EQ(findings_read<MetricFinding>(json["metrics"][0]["findings"], "metrics[0].findings"), r.metrics[0].findings);
  EXPECT_EQ(findings_read<ExperimentFinding>(json["findings"], "findings"), r.findings);
  EXPECT_EQ(json["metrics"][0]["headline"], headline(r.metrics[0], r.options.margin));
}
