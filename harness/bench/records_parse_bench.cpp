// The console record parser against hostile consoles (issue 11): each worst case of
// tests/hostile_console.hpp at 10 MB, then one 100 MB console made of all of them, timed once and
// printed as MB/s and seconds per 10 MB (target: well under a second per 10 MB). The parser is
// linear (guest/records.hpp, ParseWork; the unit test counts the work), so the figure holds for
// any size; what abvm keeps of a console is capped anyway (schedule.console_limit).
#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>

#include "guest/records.hpp"
#include "tests/hostile_console.hpp"

namespace {

constexpr std::string_view kNonce = "hostilenonce1";

void BM_ParseHostileConsole(benchmark::State& state) {
  const auto kind = abvm::test::kHostileKinds[static_cast<std::size_t>(state.range(0))];
  const std::string console = abvm::test::hostile_console(kNonce, 10 << 20, kind);
  state.SetLabel(std::string(abvm::test::to_string(kind)));
  for (auto _ : state) benchmark::DoNotOptimize(abvm::parse_guest_console(console, kNonce));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * console.size()));
}
BENCHMARK(BM_ParseHostileConsole)->DenseRange(0, abvm::test::kHostileKinds.size() - 1)->Unit(benchmark::kMillisecond);

// 100 MB: 20 MB of each worst case, one after the other in one console.
void time_100mb() {
  std::string console;
  for (const auto kind : abvm::test::kHostileKinds) console += abvm::test::hostile_console(kNonce, 20 << 20, kind);
  abvm::ParseWork work;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const abvm::GuestReport report = abvm::parse_guest_console(console, kNonce, &work);
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double mb = static_cast<double>(console.size()) / 1e6;
  std::printf("hostile console of %.0f MB: %.2f s (%.2f s CPU), %.0f MB/s, %.3f s per 10 MB (%zu problems "
              "listed; %.1f bytes visited and %.1f hashed per console byte)\n",
              mb, seconds, cpu, mb / seconds, seconds * 10 / mb, report.problems.size(),
              static_cast<double>(work.scanned) / static_cast<double>(console.size()),
              static_cast<double>(work.hashed) / static_cast<double>(console.size()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  time_100mb();
  return 0;
}
