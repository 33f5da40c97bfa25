// The whole analysis of one metric (verdict/analyze: per-side summaries, outliers, modes, the
// Hodges-Lehmann interval, Mann-Whitney, bootstrap, mode test, warnings) at 2 x N samples.
// Target: 2 x 100,000 in under 1 s, with peak memory printed as a counter. BM_AnalyzeAndReport
// adds analysis.json (report/json_report) at 2 x 100k and 2 x 1M: the sizes of issue 11, whose
// report listed every run (353 MB, 2.2 GB peak). bench/analyze_size.sh measures the same through
// the real `abvm analyze --json` on plain-number files. The peak RSS counter is the process's
// peak so far: the runs go in ascending size, so each row's figure is its own peak.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cmath>
#include <random>

#include "report/json_report.hpp"
#include "samples/sample.hpp"
#include "verdict/analysis.hpp"

namespace {

abvm::SampleSet make_samples(std::size_t n) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> fast(std::log(4.5e9), 0.08), slow(std::log(1.4e9), 0.15);
  std::bernoulli_distribution is_fast(0.7);
  abvm::MetricSamples m{.name = "dd.bandwidth", .unit = "B/s", .better = abvm::Better::higher};
  for (std::size_t i = 0; i < n; ++i) {
    m.a.push_back({.value = is_fast(rng) ? fast(rng) : slow(rng), .order = static_cast<std::int64_t>(2 * i)});
    m.b.push_back({.value = 0.97 * (is_fast(rng) ? fast(rng) : slow(rng)), .order = static_cast<std::int64_t>(2 * i + 1)});
  }
  abvm::SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void BM_AnalyzeOneMetric(benchmark::State& state) {
  const auto samples = make_samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto analysis = abvm::analyze(samples, {});
    benchmark::DoNotOptimize(analysis);
  }
  state.counters["samples_per_side"] = static_cast<double>(state.range(0));
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_AnalyzeOneMetric)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_AnalyzeAndReport(benchmark::State& state) {
  const auto samples = make_samples(static_cast<std::size_t>(state.range(0)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto analysis = abvm::analyze(samples, {});
    bytes = abvm::json_report_text(abvm::report_model(analysis, {.kind = "files"})).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["samples_per_side"] = static_cast<double>(state.range(0));
  state.counters["json_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_AnalyzeAndReport)->Arg(100000)->Arg(1000000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
