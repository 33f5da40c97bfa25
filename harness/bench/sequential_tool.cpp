// Calibration of sequential stopping: with the looks of a sequential experiment and abvm's real
// analysis at each look's nominal level, how often does an A/A experiment end in a false verdict,
// and how soon is a real 10 % loss caught? One row per `schedule.sequential.correction`, plus
// "unadjusted" (every look at the full confidence) to show what repeated looks do without one.
//
// The Lan-DeMets boundaries (plan/group_sequential.hpp) come from the asymptotic normal joint
// distribution of the statistics over the looks; abvm's verdict uses rank-based intervals on
// seed-like bimodal data (bench/seed_like_data.hpp), far from normal at 10 runs per side. This is
// the check that the error rate holds anyway.
//
// Usage: abvm_sequential_tool [simulations, default 1000] [seed, default 777]
//        [boots_per_side 10] [look_every 5] [max_boots_per_side 40]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/seed_like_data.hpp"
#include "plan/group_sequential.hpp"
#include "plan/looks.hpp"
#include "verdict/analysis.hpp"

namespace {

using abvm::Verdict;

struct Outcome {
  Verdict verdict = Verdict::inconclusive;
  int boots = 0;  // per side, at the look that decided (or the budget)
};

// Looks in order until one is not inconclusive, as run/runner.cpp does.
Outcome sequential(const abvm::SampleSet& all, const abvm::LookSchedule& looks, abvm::AnalysisOptions options) {
  Outcome o;
  for (const auto& l : looks.looks) {
    options.confidence = l.confidence;
    o.boots = l.boots_per_side;
    o.verdict = abvm::analyze(abvm::bench::first_runs(all, static_cast<std::size_t>(l.boots_per_side)), options).verdict;
    if (o.verdict != Verdict::inconclusive) break;
  }
  return o;
}

struct Tally {
  int regression = 0, improvement = 0, no_change = 0;
  double boots = 0;
  void add(const Outcome& o) {
    regression += o.verdict == Verdict::regression;
    improvement += o.verdict == Verdict::improvement;
    no_change += o.verdict == Verdict::no_change;
    boots += o.boots;
  }
};

struct Row {
  std::string name;
  abvm::LookSchedule looks;
  Tally aa, loss;
};

std::vector<Row> rows(int initial, int every, int budget, double confidence) {
  std::vector<Row> r;
  for (auto c : {abvm::LookCorrection::obrien_fleming, abvm::LookCorrection::pocock,
                 abvm::LookCorrection::pocock_spending, abvm::LookCorrection::bonferroni}) {
    r.push_back({abvm::to_string(c), abvm::make_look_schedule(initial, every, budget, confidence, c), {}, {}});
  }
  abvm::LookSchedule unadjusted = r[0].looks;
  for (auto& l : unadjusted.looks) {
    l.alpha = 1 - confidence;
    l.confidence = confidence;
    l.boundary = abvm::normal_upper_quantile_of(l.alpha / 2);
  }
  r.push_back({"unadjusted", unadjusted, {}, {}});
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int sims = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 777;
  const int initial = argc > 3 ? std::atoi(argv[3]) : 10;
  const int every = argc > 4 ? std::atoi(argv[4]) : 5;
  const int budget = argc > 5 ? std::atoi(argv[5]) : 40;
  abvm::AnalysisOptions options;      // margin 5 %, confidence 95 %
  options.bootstrap_resamples = 200;  // the bootstrap does not enter the verdict; keep the tool fast
  const double alpha = 1 - options.confidence;
  std::vector<Row> table = rows(initial, every, budget, options.confidence);
  std::printf("abvm sequential calibration: %d simulated experiments, seed %llu, looks after %d, every %d, up to %d "
              "boots per side (%zu looks), margin %.0f %%, overall confidence %.0f %%\n\n",
              sims, static_cast<unsigned long long>(seed), initial, every, budget, table[0].looks.looks.size(),
              options.margin * 100, options.confidence * 100);
  std::mt19937_64 rng(seed);
  const abvm::bench::Bimodal dist;
  for (int s = 0; s < sims; ++s) {
    // The same experiments for every row: the rows differ only in their looks.
    const abvm::SampleSet aa = abvm::bench::simulate(rng, dist, static_cast<std::size_t>(budget), 1.0);
    const abvm::SampleSet loss = abvm::bench::simulate(rng, dist, static_cast<std::size_t>(budget), 0.9);
    for (Row& r : table) {
      r.aa.add(sequential(aa, r.looks, options));
      r.loss.add(sequential(loss, r.looks, options));
    }
  }
  const auto pct = [&](int k) { return 100.0 * k / sims; };
  // Simulation noise: 3 binomial standard errors above the stated rate.
  const double limit = alpha + 3 * std::sqrt(alpha * (1 - alpha) / sims);
  std::printf("%-16s | %-17s | %-42s | %-28s\n", "", "last look", "A/A (no change)", "B 10 % slower");
  std::printf("%-16s | %8s %8s | %9s %9s %9s %9s | %9s %9s %8s\n", "correction", "level", "boundary", "false-reg",
              "any-false", "no_change", "boots", "detected", "no_change", "boots");
  bool ok = true;
  for (const Row& r : table) {
    const abvm::Look& last = r.looks.looks.back();
    const int any_false = r.aa.regression + r.aa.improvement;
    const bool adjusted = r.name != "unadjusted";
    const bool row_ok = any_false <= limit * sims;
    if (adjusted) ok = ok && row_ok;
    std::printf("%-16s | %7.2f%% %8.3f | %8.1f%% %8.1f%% %8.1f%% %9.1f | %8.1f%% %8.1f%% %8.1f%s\n", r.name.c_str(),
                last.confidence * 100, last.boundary, pct(r.aa.regression), pct(any_false), pct(r.aa.no_change),
                r.aa.boots / sims, pct(r.loss.regression), pct(r.loss.no_change), r.loss.boots / sims,
                row_ok ? "" : (adjusted ? "   <- error rate too high" : "   (no correction)"));
  }
  std::printf("\nfalse verdicts (regression or improvement) of the corrections %s 1 - confidence = %.0f %% "
              "(with simulation noise allowance)\n",
              ok ? "within" : "ABOVE", alpha * 100);
  return ok ? 0 : 1;
}
