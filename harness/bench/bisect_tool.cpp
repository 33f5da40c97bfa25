// Calibration of `abvm bisect`: simulated bisections of series of 4 to 64 patches with one or two
// culprits of 3-20 % (or none), each step an A/B experiment on simulated data, decided by abvm's
// real analysis (verdict/analysis) at the looks of plan/looks.hpp, judged by the finding function
// abvm bisect uses (bisect/classify.hpp) and searched by its strategy (bisect/strategy.hpp) with
// its error budget. Against it, a plain `git bisect` that calls each step by one fixed A/B run's
// verdict (regression: bad, anything else: good), at the experiment's confidence, no correction.
//
// The data are the seed's (bench/seed_like_data.hpp: 70 % of runs near 4.5 GB/s, 30 % in a slow mode
// near 1.4 GB/s) as co-scheduled blocks see them: the seed's slow runs fell at the same positions on
// both sides (the host, not the kernel), so each block draws one host mode shared by its A and B
// guests, and every run its own noise within that mode; R runs per boot, the boot's median is the
// unit and the paired estimate decides, as in the shipped configs. The per-block ratio then moves
// about as much as measured here (README: sd(pair) 0.046).
//
// Usage: abvm_bisect_tool [simulations per row, default 100] [seed, default 777] [margin, default 0.02]
// Prints one row per series length and culprits: how often the right patch is named, how often a
// wrong one is (a patch, or a range holding no culprit), and the boots per side used.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/seed_like_data.hpp"
#include "bisect/classify.hpp"
#include "bisect/strategy.hpp"
#include "plan/looks.hpp"
#include "verdict/analysis.hpp"

namespace {

using abvm::StepFinding;

constexpr int kRunsPerBoot = 10;
constexpr int kFirstLook = 10, kLookEvery = 10, kStepBudget = 80;  // blocks, as a step's [schedule.sequential]
constexpr int kGitBlocks = 10;                                       // blocks of each git bisect step

struct Culprit {
  int patch = 0;
  double effect = 1;  // speed factor: 0.9 is 10 % slower
};

struct Scenario {
  int patches = 0;
  std::vector<double> effects;  // magnitudes of the culprits; positions drawn per simulation
  std::string name;
};

using abvm::bench::uniform;

// One co-scheduled block: a host mode for both guests, kRunsPerBoot runs each.
void add_block(std::mt19937_64& rng, const abvm::bench::Bimodal& d, int block, double ratio, abvm::MetricSamples& m) {
  const bool fast = uniform(rng) < d.fast_fraction;
  const double median = fast ? d.fast_median : d.slow_median, sigma = fast ? d.fast_sigma : d.slow_sigma;
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < kRunsPerBoot; ++i) {
      const double z = std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
      abvm::Sample s{.value = median * std::exp(sigma * z) * (side == 1 ? ratio : 1.0),
                     .order = static_cast<std::int64_t>((2 * block + side) * kRunsPerBoot + i),
                     .order_known = true,
                     .origin = abvm::sample_origin("", {.boot = std::string(side == 0 ? "a" : "b") + std::to_string(block),
                                                  .run_in_boot = i,
                                                  .block = block})};
      (side == 0 ? m.a : m.b).push_back(s);
    }
  }
}

abvm::SampleSet experiment(std::mt19937_64& rng, int blocks, double ratio) {
  abvm::MetricSamples m{.name = "dd-write.bandwidth", .unit = "B/s", .better = abvm::Better::higher};
  for (int b = 0; b < blocks; ++b) add_block(rng, abvm::bench::Bimodal{}, b, ratio, m);
  abvm::SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}


struct StepResult {
  StepFinding finding = StepFinding::unknown;
  int blocks = 0;
};

// One abvm bisect step: looks until the finding is not unknown, as run/runner.cpp stops a step.
StepResult abvm_step(std::mt19937_64& rng, double ratio, const abvm::LookSchedule& looks, abvm::AnalysisOptions o) {
  const abvm::SampleSet all = experiment(rng, kStepBudget, ratio);
  StepResult r;
  for (const auto& l : looks.looks) {
    o.confidence = l.confidence;
    r.blocks = l.boots_per_side;
    r.finding = abvm::judge_step(abvm::analyze(abvm::bench::first_runs(all, static_cast<std::size_t>(l.boots_per_side * kRunsPerBoot)), o)).finding;
    if (r.finding != StepFinding::unknown) break;
  }
  return r;
}

struct Truth {
  std::vector<Culprit> culprits;
  int patches = 0;
  double speed(int k) const {
    double s = 1;
    for (const auto& c : culprits) s *= c.patch <= k ? c.effect : 1.0;
    return s;
  }
  bool culprit(int patch) const {
    return std::any_of(culprits.begin(), culprits.end(), [&](const Culprit& c) { return c.patch == patch; });
  }
};

struct Score {
  int right = 0, wrong = 0, range = 0, all = 0;
  double boots = 0, steps = 0;
};

// abvm bisect: the strategy, asked until it is done.
void abvm_bisect(std::mt19937_64& rng, const Truth& t, const abvm::AnalysisOptions& options, double confidence,
                 Score& score) {
  const abvm::BisectShape shape{.patches = t.patches, .max_steps = abvm::default_max_steps(t.patches)};
  const abvm::LookSchedule looks = abvm::make_look_schedule(
      kFirstLook, kLookEvery, kStepBudget, abvm::step_confidence(confidence, shape.max_steps),
      abvm::LookCorrection::obrien_fleming);
  std::vector<abvm::StepAnswer> answers;
  abvm::BisectState s = abvm::bisect_state(shape, answers);
  for (; s.next; s = abvm::bisect_state(shape, answers)) {
    const StepResult r = abvm_step(rng, t.speed(s.next->kernel) / t.speed(s.next->reference), looks, options);
    score.boots += r.blocks;
    answers.push_back({*s.next, r.finding});
  }
  score.steps += static_cast<double>(answers.size());
  bool wrong = false, right = false;
  std::set<int> named;
  for (const auto& c : s.culprits) {
    bool holds = false;
    for (int p = c.first; p <= c.last; ++p) holds = holds || t.culprit(p);
    wrong = wrong || !holds;
    if (c.exact() && holds) named.insert(c.first);
    right = right || (c.exact() && holds);
  }
  if (t.culprits.empty()) right = s.culprits.empty();
  score.wrong += wrong;
  score.right += right && !wrong;
  score.range += !right && !wrong && !s.culprits.empty();
  score.all += !wrong && named.size() == t.culprits.size() && !t.culprits.empty();
}

// git bisect: the tip's A/B first (the run that said "regression"), then good/bad by one A/B each.
void git_bisect(std::mt19937_64& rng, const Truth& t, abvm::AnalysisOptions options, double confidence,
                Score& score) {
  options.confidence = confidence;
  const auto bad = [&](int k) {
    score.boots += kGitBlocks;
    score.steps += 1;
    return abvm::analyze(experiment(rng, kGitBlocks, t.speed(k)), options).verdict == abvm::Verdict::regression;
  };
  if (!bad(t.patches)) {
    score.right += t.culprits.empty();
    return;
  }
  int good = 0, first_bad = t.patches;
  while (first_bad - good > 1) {
    const int mid = (good + first_bad) / 2;
    (bad(mid) ? first_bad : good) = mid;
  }
  const bool hit = t.culprit(first_bad);
  score.right += hit;
  score.wrong += !hit;
}

Truth draw_truth(std::mt19937_64& rng, const Scenario& sc) {
  Truth t{.patches = sc.patches};
  std::set<int> used;
  for (double e : sc.effects) {
    int p = 0;
    do p = 1 + static_cast<int>(uniform(rng) * sc.patches);
    while (used.contains(p));
    used.insert(p);
    t.culprits.push_back({p, e});
  }
  std::sort(t.culprits.begin(), t.culprits.end(), [](const Culprit& a, const Culprit& b) { return a.patch < b.patch; });
  return t;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  for (int n : {4, 8, 16, 32, 64}) {
    out.push_back({n, {0.80}, "one, 20 %"});
    out.push_back({n, {0.90}, "one, 10 %"});
    out.push_back({n, {0.95}, "one, 5 %"});
    out.push_back({n, {0.97}, "one, 3 %"});
    out.push_back({n, {0.90, 0.95}, "two, 10 % + 5 %"});
    out.push_back({n, {}, "none"});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int sims = argc > 1 ? std::atoi(argv[1]) : 100;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 777;
  abvm::AnalysisOptions options;
  options.margin = argc > 3 ? std::atof(argv[3]) : 0.02;
  options.paired_primary = true;
  options.bootstrap_resamples = 50;  // the bootstrap does not enter the verdict; keep the tool fast
  const double confidence = 0.95;
  std::printf("abvm bisect calibration: %d simulated bisections per row, seed %llu, margin %.0f %%, confidence %.0f %% "
              "for the whole bisection\nco-scheduled seed-like data, %d dd runs per boot; abvm bisect: looks after %d, "
              "every %d, up to %d blocks per step, each step at 1 - 5 %% / (3 + 2 ceil(log2 N));\ngit bisect: one A/B "
              "of %d blocks per step at 95 %%, regression = bad, anything else = good\n\n",
              sims, static_cast<unsigned long long>(seed), options.margin * 100, confidence * 100, kRunsPerBoot,
              kFirstLook, kLookEvery, kStepBudget, kGitBlocks);
  std::printf("| patches | culprits | abvm: right | abvm: wrong | abvm: range only | abvm: all named | abvm: boots/side "
              "| abvm: steps | git: right | git: wrong | git: boots/side |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::mt19937_64 rng(seed);
  for (const Scenario& sc : scenarios()) {
    Score a, g;
    for (int i = 0; i < sims; ++i) {
      const Truth t = draw_truth(rng, sc);
      abvm_bisect(rng, t, options, confidence, a);
      git_bisect(rng, t, options, confidence, g);
    }
    const auto pct = [&](int k) { return 100.0 * k / sims; };
    const std::string all = sc.effects.size() > 1 ? std::to_string(static_cast<int>(std::lround(pct(a.all)))) + " %" : "-";
    std::printf("| %d | %s | %.0f %% | %.0f %% | %.0f %% | %s | %.0f | %.1f | %.0f %% | %.0f %% | %.0f |\n", sc.patches,
                sc.name.c_str(), pct(a.right), pct(a.wrong), pct(a.range), all.c_str(), a.boots / sims, a.steps / sims,
                pct(g.right), pct(g.wrong), g.boots / sims);
    std::fflush(stdout);
  }
  return 0;
}
