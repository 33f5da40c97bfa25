// How stable is the verdict of a paired design near the margin, and what does the decision rule
// cost in errors? Simulated co-scheduled experiments (each block's two boots share the host's
// speed; what differs is each boot's own noise), looked at as run/runner.cpp does (Pocock looks
// after 10, 15, ... 40 blocks), decided by two rules from the same analyses:
//   significance: regression when the interval lies below 1 (and not wholly inside the margin), as
//                 abvm decided before 2026-12-02;
//   abvm:         abvm's verdict as it is now (verdict/decision.cpp decide()).
// For each true ratio B/A (no change, 2.5 % and 4 % slower: inside the ±5 % margin; 5 %: on it; 7 % and
// 10 %: beyond it) the share of experiments ending in each verdict and the blocks they took.
//
// Usage: abvm_decision_rule_tool [simulations, default 1000] [seed, default 777]
//        [per-block sd of ln B/A, default 0.045 (the demo's 0.032-0.062)]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/seed_like_data.hpp"
#include "plan/looks.hpp"
#include "verdict/analysis.hpp"

namespace {

using abvm::Verdict;

// `blocks` co-scheduled blocks, one run per boot: host speed shared by the block (sd 0.12 of ln, as
// measured between boots), each boot's own noise sd/sqrt(2) so that ln(B/A) per block has sd `sd`.
abvm::SampleSet simulate(std::mt19937_64& rng, int blocks, double ratio, double sd) {
  abvm::MetricSamples m{.name = "dd.bandwidth", .unit = "B/s", .better = abvm::Better::higher};
  for (int j = 0; j < blocks; ++j) {
    const double host = 0.12 * abvm::bench::standard_normal(rng);
    const double a = 4e9 * std::exp(host + sd / std::sqrt(2.0) * abvm::bench::standard_normal(rng));
    const double b = 4e9 * ratio * std::exp(host + sd / std::sqrt(2.0) * abvm::bench::standard_normal(rng));
    m.a.push_back({.value = a, .order = 2 * j, .order_known = true,
                   .origin = abvm::sample_origin("", {.boot = "a" + std::to_string(j), .block = j})});
    m.b.push_back({.value = b, .order = 2 * j + 1, .order_known = true,
                   .origin = abvm::sample_origin("", {.boot = "b" + std::to_string(j), .block = j})});
  }
  abvm::SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}

// The rule before: significant is enough, however small the estimate.
Verdict significance_rule(const abvm::MetricAnalysis& m, double margin) {
  const abvm::OrientedEffect e = abvm::oriented_effect(m);
  if (m.effect.achieved_confidence + 1e-9 < m.effect.confidence) return Verdict::inconclusive;
  if (e.low > 1 - margin && e.high < 1 + margin) return Verdict::no_change;
  if (e.high < 1) return Verdict::regression;
  if (e.low > 1) return Verdict::improvement;
  return Verdict::inconclusive;
}

struct Tally {
  int regression = 0, no_change = 0, improvement = 0, inconclusive = 0;
  double blocks = 0;
  void add(Verdict v, int n) {
    regression += v == Verdict::regression;
    no_change += v == Verdict::no_change;
    improvement += v == Verdict::improvement;
    inconclusive += v == Verdict::inconclusive;
    blocks += n;
  }
};

struct Result {
  Tally before, now;
};

// Looks in order until a verdict, separately for each rule, from the same analyses.
void look(const abvm::SampleSet& all, const abvm::LookSchedule& looks, abvm::AnalysisOptions options, Result& r) {
  bool before_done = false, now_done = false;
  for (std::size_t i = 0; i < looks.looks.size(); ++i) {
    const abvm::Look& l = looks.looks[i];
    const bool last = i + 1 == looks.looks.size();
    options.confidence = l.confidence;
    const abvm::Analysis a = abvm::analyze(abvm::bench::first_runs(all, static_cast<std::size_t>(l.boots_per_side)), options);
    const Verdict before = significance_rule(a.metrics.front(), options.margin);
    if (!before_done && (before != Verdict::inconclusive || last)) {
      r.before.add(before, l.boots_per_side);
      before_done = true;
    }
    if (!now_done && (a.verdict != Verdict::inconclusive || last)) {
      r.now.add(a.verdict, l.boots_per_side);
      now_done = true;
    }
    if (before_done && now_done) return;
  }
}

void print_row(const char* rule, double ratio, const Tally& t, int sims) {
  const auto pct = [&](int k) { return 100.0 * k / sims; };
  std::printf("%6.3f  %-13s | %9.1f%% %9.1f%% %9.1f%% %9.1f%% | %6.1f\n", ratio, rule, pct(t.regression),
              pct(t.no_change), pct(t.improvement), pct(t.inconclusive), t.blocks / sims);
}

}  // namespace

int main(int argc, char** argv) {
  const int sims = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 777;
  const double sd = argc > 3 ? std::atof(argv[3]) : 0.045;
  abvm::AnalysisOptions options;  // margin 5 %, confidence 95 %
  options.paired_primary = true;
  options.bootstrap_resamples = 200;  // the bootstrap does not enter the verdict; keep the tool fast
  const abvm::LookSchedule looks =
      abvm::make_look_schedule(10, 5, 40, options.confidence, abvm::LookCorrection::pocock);
  std::printf("abvm decision rules: %d simulated co-scheduled experiments per ratio, seed %llu, per-block sd of ln B/A "
              "%.3f, Pocock looks after 10, 15, ... 40 blocks, margin %.0f %%, confidence %.0f %%\n\n",
              sims, static_cast<unsigned long long>(seed), sd, options.margin * 100, options.confidence * 100);
  std::printf("%6s  %-13s | %10s %10s %10s %10s | %6s\n", "B/A", "rule", "regression", "no_change", "improvement",
              "inconcl.", "blocks");
  for (double ratio : {1.0, 0.975, 0.96, 0.95, 0.93, 0.90}) {
    std::mt19937_64 rng(seed);  // the same noise for every ratio
    Result r;
    for (int s = 0; s < sims; ++s) look(simulate(rng, 40, ratio, sd), looks, options, r);
    print_row("significance", ratio, r.before, sims);
    print_row("abvm", ratio, r.now, sims);
  }
  return 0;
}
