// Calibration of the verdict: how often does abvm cry "regression" when nothing changed, and how
// often does it catch a real 10 % bandwidth loss, as a function of the number of runs per side?
//
// Data are drawn from a seed-like bimodal distribution (the motivating dd runs: about 70 % of runs
// near 4.5 GB/s with ~8 % spread, 30 % in a slow mode near 1.4 GB/s with ~15 % spread), independently
// per run. The false-regression rate must stay at or below 1 - confidence (printed with a verdict).
//
// Usage: abvm_calibration_tool [simulations per cell, default 1000] [seed, default 12345]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/seed_like_data.hpp"
#include "verdict/analysis.hpp"

using abvm::bench::Bimodal;
using abvm::bench::simulate;

int main(int argc, char** argv) {
  const int sims = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 12345;
  abvm::AnalysisOptions options;  // margin 5 %, confidence 95 %
  options.bootstrap_resamples = 200;  // the bootstrap does not enter the verdict; keep the tool fast
  const Bimodal dist;
  const double allowed = 1 - options.confidence;
  std::printf("abvm calibration: %d simulations per cell, seed %llu, margin %.0f %%, confidence %.0f %%\n", sims,
              static_cast<unsigned long long>(seed), options.margin * 100, options.confidence * 100);
  std::printf("distribution: %.0f %% fast (median %.2g, sigma %.2f), slow (median %.2g, sigma %.2f)\n\n",
              dist.fast_fraction * 100, dist.fast_median, dist.fast_sigma, dist.slow_median, dist.slow_sigma);
  std::printf("%6s | %-34s | %-44s\n", "", "A/A (no change)", "B 10 % slower");
  std::printf("%6s | %10s %10s %10s | %10s %10s %10s %10s\n", "n/side", "false-reg", "no_change", "inconcl",
              "detected", "no_change", "inconcl", "improve");
  bool ok = true;
  std::mt19937_64 rng(seed);
  for (std::size_t n : {5, 10, 20, 40, 80, 160}) {
    int aa_reg = 0, aa_same = 0, aa_inc = 0, l_reg = 0, l_same = 0, l_inc = 0, l_imp = 0;
    for (int s = 0; s < sims; ++s) {
      auto v = abvm::analyze(simulate(rng, dist, n, 1.0), options).verdict;
      aa_reg += v == abvm::Verdict::regression;
      aa_same += v == abvm::Verdict::no_change;
      aa_inc += v == abvm::Verdict::inconclusive;
      auto w = abvm::analyze(simulate(rng, dist, n, 0.9), options).verdict;
      l_reg += w == abvm::Verdict::regression;
      l_same += w == abvm::Verdict::no_change;
      l_inc += w == abvm::Verdict::inconclusive;
      l_imp += w == abvm::Verdict::improvement;
    }
    auto r = [&](int k) { return 100.0 * k / sims; };
    // Allow for simulation noise: 3 binomial standard errors above the nominal rate.
    double limit = allowed + 3 * std::sqrt(allowed * (1 - allowed) / sims);
    bool cell_ok = aa_reg <= limit * sims;
    ok = ok && cell_ok;
    std::printf("%6zu | %9.1f%% %9.1f%% %9.1f%% | %9.1f%% %9.1f%% %9.1f%% %9.1f%%%s\n", n, r(aa_reg), r(aa_same),
                r(aa_inc), r(l_reg), r(l_same), r(l_inc), r(l_imp), cell_ok ? "" : "   <- false-regression rate too high");
  }
  std::printf("\nfalse-regression rate %s 1 - confidence = %.0f %% (with simulation noise allowance)\n",
              ok ? "within" : "ABOVE", allowed * 100);
  return ok ? 0 : 1;
}
