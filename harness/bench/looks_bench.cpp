// The looks of a sequential run (issue 21): a 40-look run with 1,000 runs per side, its journal
// growing by 25 runs per side (25 blocks of one run per boot) before each look, looked at through
// the real look object (verdict/look.hpp LookDecider, which `abvm run` wraps in
// cli/results_analysis.hpp sequential_looks: the journal read as it grows, the verdict alone) and,
// on the same journal at the same look, through the path every look took before it: what
// cli/results_analysis.cpp decide() does (the whole journal parsed, the full analysis,
// analysis.json's and summary.txt's text; bench/ may not include cli/, so full_decision() repeats
// it). Target: the 40 looks under 1 s in total. Printed: both totals, their ratio, and how many
// looks' verdicts differ (must be 0). Appending the runs is not timed. Arg: 0 sequential-blocks
// (unpaired), 1 co-scheduled (paired, overlaps recorded).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "plan/looks.hpp"
#include "report/json_report.hpp"
#include "report/terminal.hpp"
#include "results/directory.hpp"
#include "samples/journal.hpp"
#include "samples/select.hpp"
#include "verdict/design_rules.hpp"
#include "verdict/look.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kLooks = 40;
constexpr int kRunsPerSideEachLook = 25;

abvm::Experiment experiment(abvm::Design design) {
  abvm::Experiment e;
  e.name = "looks-bench";
  e.a.label = "A";
  e.b.label = "B";
  e.schedule.design = design;
  return e;
}

// The journal lines of block `block`: one boot a side with one dd run each, B about 1 % slower.
std::string block_lines(int block, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, 0.05);
  std::string lines;
  for (abvm::Side side : {abvm::Side::a, abvm::Side::b}) {
    const int order = 2 * block + (side == abvm::Side::b ? 1 : 0);
    const std::string trial = "t" + std::to_string(order);
    abvm::JournalEntry entry{.trial = trial, .side = side, .boot = trial, .order = order, .block = block,
                             .workload = "dd-write", .host = "bench-host", .accelerator = abvm::Accelerator::kvm,
                             .time = "2026-12-03T12:00:00Z"};
    const double value = 4.5e9 * (side == abvm::Side::b ? 0.99 : 1.0) * std::exp(noise(rng));
    entry.metrics = {{"dd-write.bandwidth", "B/s", abvm::Better::higher, value}};
    entry.overlap = abvm::RunOverlap{.partner = "t" + std::to_string(order ^ 1), .run = 0.99, .pair = 0.99};
    lines += abvm::to_journal_line(entry) + "\n";
  }
  return lines;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A look as it was: cli::decide() (full analysis and both reports), its verdict kept.
abvm::Verdict full_decision(const abvm::Experiment& e, const abvm::ResultsDir& dir, double confidence) {
  const abvm::Analysis analysis =
      abvm::analyze(abvm::select_metrics(abvm::load_results_dir(dir.root()), e.analysis.metrics),
                    abvm::experiment_analysis_options(e, confidence));
  const abvm::ReportSource source{.kind = "results", .results_dir = dir.root().string(), .a_label = e.a.label,
                                  .b_label = e.b.label, .design = abvm::to_string(e.schedule.design),
                                  .decided_by = abvm::read_manifest(dir).stop_reason};
  const abvm::ReportModel report = abvm::report_model(analysis, source);
  benchmark::DoNotOptimize(abvm::json_report_text(report));
  const double seconds_per_block = abvm::seconds_per_block({}, e.schedule);  // no ledger here
  benchmark::DoNotOptimize(abvm::terminal_report(
      report, {.a_label = e.a.label, .b_label = e.b.label, .color = false, .seconds_per_block = seconds_per_block}));
  return analysis.verdict;
}

struct FortyLooks {
  double looks_seconds = 0, full_decide_seconds = 0;
  int disagreements = 0;
};

// One run of 40 looks in a fresh results directory; both paths look at the same journal.
FortyLooks forty_looks(const abvm::Experiment& e, const fs::path& root) {
  fs::remove_all(root);
  fs::create_directories(root);
  const abvm::ResultsDir dir(root);
  abvm::write_manifest(dir, {});
  const abvm::LookSchedule schedule =
      abvm::make_look_schedule(kRunsPerSideEachLook, kRunsPerSideEachLook, kLooks * kRunsPerSideEachLook, 0.95,
                               abvm::LookCorrection::obrien_fleming);
  abvm::LookDecider look(e);
  std::mt19937_64 rng(21);
  FortyLooks out;
  int blocks = 0;
  for (const abvm::Look& l : schedule.looks) {
    {
      std::ofstream journal(dir.journal(), std::ios::app);
      for (; blocks < l.boots_per_side; ++blocks) journal << block_lines(blocks, rng);
    }
    auto start = std::chrono::steady_clock::now();
    const abvm::Verdict decided = look.verdict(root, l.confidence);
    out.looks_seconds += seconds_since(start);
    start = std::chrono::steady_clock::now();
    const abvm::Verdict full = full_decision(e, dir, l.confidence);
    out.full_decide_seconds += seconds_since(start);
    out.disagreements += decided != full;
  }
  return out;
}

void BM_FortyLooks(benchmark::State& state) {
  const auto design = state.range(0) == 0 ? abvm::Design::sequential_blocks : abvm::Design::co_scheduled;
  const abvm::Experiment e = experiment(design);
  const fs::path root = fs::temp_directory_path() / ("abvm-looks-bench-" + std::to_string(::getpid()));
  FortyLooks last;
  for (auto _ : state) {
    last = forty_looks(e, root);
    state.SetIterationTime(last.looks_seconds);
  }
  fs::remove_all(root);
  state.SetLabel(abvm::to_string(design));
  state.counters["looks_s"] = last.looks_seconds;
  state.counters["full_decide_s"] = last.full_decide_seconds;
  state.counters["ratio"] = last.full_decide_seconds / last.looks_seconds;
  state.counters["disagreements"] = last.disagreements;
  std::printf("%s: %d looks, %d runs per side: looks %.3f s in total (target < 1 s), a full decide() per look "
              "%.3f s: %.1fx; verdicts that differ: %d\n",
              abvm::to_string(design), kLooks, kLooks * kRunsPerSideEachLook, last.looks_seconds,
              last.full_decide_seconds, last.full_decide_seconds / last.looks_seconds, last.disagreements);
  if (last.disagreements > 0) state.SkipWithError("a look's verdict differs from the full analysis's");
}
BENCHMARK(BM_FortyLooks)->Arg(0)->Arg(1)->Iterations(2)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
