// Speed and memory of the rank statistics at the sizes the issue asks about: the Hodges-Lehmann
// shift with its interval (selection, never all n*m pairs) and the Mann-Whitney test on
// 2 x 1,000, 2 x 10,000 and 2 x 100,000 samples; 100k must stay well under a second.
// peak_rss_MiB is the process's high-water mark so far (getrusage ru_maxrss): it grows with the
// largest case run, and staying in the tens of MiB at 2 x 100k shows memory is O(n + m) --
// the 10^10 differences would need 80 GB.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cmath>
#include <random>
#include <vector>

#include "stats/hodges_lehmann.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/wilcoxon.hpp"

namespace {

// Log bandwidths shaped like the seed: most runs near 4.5 GB/s, one in five near 1.4 GB/s.
std::vector<double> seed_like(std::size_t n, double shift, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution slow(0.2);
  std::normal_distribution<double> fast_mode(std::log(4.5e9), 0.05), slow_mode(std::log(1.4e9), 0.1);
  std::vector<double> v(n);
  for (double& x : v) x = (slow(rng) ? slow_mode(rng) : fast_mode(rng)) + shift;
  return v;
}

void report_peak_memory(benchmark::State& state) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB
}

void BM_HodgesLehmannShift(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<double> a = seed_like(n, 0.0, 1), b = seed_like(n, -0.05, 2);
  for (auto _ : state) benchmark::DoNotOptimize(abvm::stats::hodges_lehmann_shift(a, b, 0.95));
  state.SetComplexityN(state.range(0));
  report_peak_memory(state);
}

void BM_MannWhitney(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<double> a = seed_like(n, 0.0, 1), b = seed_like(n, -0.05, 2);
  for (auto _ : state) benchmark::DoNotOptimize(abvm::stats::mann_whitney(a, b));
  state.SetComplexityN(state.range(0));
  report_peak_memory(state);
}

// What one metric costs the verdict stage: test + shift interval together.
void BM_ShiftAndTest(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<double> a = seed_like(n, 0.0, 1), b = seed_like(n, -0.05, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(abvm::stats::mann_whitney(a, b));
    benchmark::DoNotOptimize(abvm::stats::hodges_lehmann_shift(a, b, 0.95));
  }
  report_peak_memory(state);
}

// Paired: n(n+1)/2 Walsh averages (5 * 10^9 at 100k), also by selection.
void BM_HodgesLehmannPaired(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<double> a = seed_like(n, 0.0, 1), b = seed_like(n, -0.05, 2);
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = b[i] - a[i];
  for (auto _ : state) {
    benchmark::DoNotOptimize(abvm::stats::hodges_lehmann_paired(d, 0.95));
    benchmark::DoNotOptimize(abvm::stats::wilcoxon_signed_rank(d));
  }
  report_peak_memory(state);
}

BENCHMARK(BM_HodgesLehmannShift)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);
BENCHMARK(BM_MannWhitney)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);
BENCHMARK(BM_ShiftAndTest)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HodgesLehmannPaired)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
