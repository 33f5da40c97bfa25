// run/designs/windows.hpp: the guest-to-host clock mapping and the overlap of a run with its
// partner's load, with values worked out by hand.
#include <gtest/gtest.h>

#include "guest/records.hpp"
#include "run/designs/watch.hpp"
#include "run/designs/windows.hpp"
#include "samples/overlap.hpp"

namespace abvm {
namespace {

// A paced run of step 0 whose guest clock is the host's minus 1000 s, printed marks arriving
// 2 ms late and words heard 4 ms after they were typed: offset bounds [1000.0 - 0.004 + ..].
GuestReport paced_report() {
  GuestReport r;
  GuestRun run{.workload = "dd", .index = 0, .t_start = 10.010, .t_end = 11.000};
  run.window = GuestWindow{.step = 0, .t_ready = 9.990, .t_go = 10.004, .t_fill = 11.002, .t_stop = 12.004,
                           .t_load_end = 12.050, .fills = 2};
  r.runs.push_back(run);
  r.clock_marks = {{.seq = 5, .t = 9.990, .step = 0}, {.seq = 6, .t = 11.003, .step = 0}};
  return r;
}

HostClockLog paced_log() {
  HostClockLog log;
  log.received = {{5, 1009.992}, {6, 1011.005}};  // 2 ms after printing
  log.typed = {{.word = "go 0", .at = 1010.000}, {.word = "stop 0", .at = 1012.000}};  // heard 4 ms later
  return log;
}

TEST(RunDesignsWindows, APacedRunIsMappedBetweenItsPrintedAndItsHeardBounds) {
  // Upper bounds: 1009.992 - 9.990 = 1000.002 and 1011.005 - 11.003 = 1000.002;
  // lower bounds: 1010.000 - 10.004 = 999.996 and 1012.000 - 12.004 = 999.996.
  // Offset 999.999 +- 0.003.
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0}};
  time_runs(paced_report(), paced_log(), runs);
  ASSERT_TRUE(runs[0].timing);
  const RunTiming& t = *runs[0].timing;
  EXPECT_NEAR(t.clock_error, 0.003, 1e-9);
  EXPECT_NEAR(t.start, 10.010 + 999.999, 1e-9);
  EXPECT_NEAR(t.end, 11.000 + 999.999, 1e-9);
  ASSERT_TRUE(t.fill);
  EXPECT_NEAR(*t.fill, 11.002 + 999.999, 1e-9);
  EXPECT_NEAR(t.load_end, 12.050 + 999.999, 1e-9);
  ASSERT_TRUE(t.go);
  EXPECT_DOUBLE_EQ(*t.go, 1010.000);
}

DomainStatsReading reading(double cpu, std::uint64_t bytes) {
  return {.stats = DomainStats{.cpu_seconds = cpu, .disk_bytes = bytes}};
}

// A paced window's cost ends at its DONE (seq 6, its filler just started), not at its stop: the
// faster side of a co-scheduled pair would otherwise pay for its filler's tail until the stop.
TEST(RunDesignsWindows, APacedWindowsCostEndsAtItsDoneNotAtItsStop) {
  HostClockLog log = paced_log();
  log.typed[0].stats = reading(1.0, 1000);
  log.typed[1].stats = reading(9.0, 1600);  // the stop: the filler's tail in it
  log.read_at = {{6, reading(1.5, 1500)}};  // as DONE arrived
  // The window's runs as the trial counted them: the measured one and the filler's finished one.
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0, .window_runs = 2}};
  cost_windows(paced_report(), log, runs);
  ASSERT_TRUE(runs[0].host_cost) << runs[0].host_cost_missing;
  EXPECT_DOUBLE_EQ(runs[0].host_cost->cpu_seconds, 0.5);
  EXPECT_EQ(runs[0].host_cost->disk_bytes, 500u);
  EXPECT_EQ(runs[0].window_runs, 1u) << "a window that ends at DONE holds the measured run only";
  // Without a reading at DONE (an older agent, a driver that read nothing then): the stop's, with
  // the filler's runs in it.
  log.read_at.clear();
  runs[0].window_runs = 2;
  cost_windows(paced_report(), log, runs);
  ASSERT_TRUE(runs[0].host_cost) << runs[0].host_cost_missing;
  EXPECT_DOUBLE_EQ(runs[0].host_cost->cpu_seconds, 8.0);
  EXPECT_EQ(runs[0].host_cost->disk_bytes, 600u);
  EXPECT_EQ(runs[0].window_runs, 2u);
  // A failed reading at DONE is a failed window end.
  log.read_at = {{6, DomainStatsReading{.error = "virDomainListGetStats: gone"}}};
  cost_windows(paced_report(), log, runs);
  EXPECT_FALSE(runs[0].host_cost);
  EXPECT_EQ(runs[0].host_cost_missing, "at the window's end: virDomainListGetStats: gone");
}

// An unpaced run's cost starts at its NEXT (read before its preparation), not at its RUN (read as the
// tool started: the read fell into dd's own time), and ends at its RUNEND; without a NEXT, at RUN.
TEST(RunDesignsWindows, AnUnpacedRunsCostStartsAtItsNextRecord) {
  GuestReport r;
  r.runs.push_back({.workload = "dd", .index = 0, .t_start = 2.0, .t_end = 3.0, .next_seq = 2});
  r.clock_marks = {{.seq = 3, .t = 2.0, .run = 0}, {.seq = 6, .t = 3.0, .run = 0}};
  HostClockLog log;
  log.read_at = {{2, reading(1.0, 100)}, {3, reading(1.25, 100)}, {6, reading(2.0, 1100)}};
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0}};
  cost_windows(r, log, runs);
  ASSERT_TRUE(runs[0].host_cost) << runs[0].host_cost_missing;
  EXPECT_DOUBLE_EQ(runs[0].host_cost->cpu_seconds, 1.0);
  EXPECT_EQ(runs[0].host_cost->disk_bytes, 1000u);
  r.runs[0].next_seq.reset();
  cost_windows(r, log, runs);
  ASSERT_TRUE(runs[0].host_cost) << runs[0].host_cost_missing;
  EXPECT_DOUBLE_EQ(runs[0].host_cost->cpu_seconds, 0.75);
}

// A local QEMU's reading: its live threads' schedstat (id, ns), and the process's ticks.
DomainStatsReading threads_reading(std::vector<ThreadCpu> threads, double ticks, std::uint64_t bytes) {
  double sum = 0;
  for (const auto& t : threads) sum += static_cast<double>(t.ns) / 1e9;
  return {.stats = DomainStats{.cpu_seconds = sum, .cpu_clock = CpuClock::schedstat, .threads = std::move(threads),
                               .tick_cpu_seconds = ticks, .disk_bytes = bytes}};
}

// The window's CPU on schedstat is each thread's own difference: a thread that began inside it adds
// all of its CPU, one that ended inside it adds nothing and takes none of its earlier CPU away (the
// sums' difference would), and is counted; a thread id taken again counts as a new thread.
TEST(RunDesignsWindows, AWindowsHostCpuIsEachThreadsOwnSchedstatDifference) {
  GuestReport r;
  r.runs.push_back({.workload = "dd", .index = 0, .t_start = 2.0, .t_end = 3.0, .next_seq = 2});
  r.clock_marks = {{.seq = 3, .t = 2.0, .run = 0}, {.seq = 6, .t = 3.0, .run = 0}};
  HostClockLog log;
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0}};
  const auto cost_of = [&](DomainStatsReading go, DomainStatsReading end) {
    log.read_at = {{2, std::move(go)}, {6, std::move(end)}};
    cost_windows(r, log, runs);
    return runs[0].host_cost;
  };
  const DomainStatsReading go = threads_reading({{10, 700'000'000}, {11, 300'000'000}, {12, 5'000'000}}, 0.99, 0);
  // 10 spent 0.2 s, 11 ended (its 0.3 s before the window stays out of it), 12 spent 0.001 s, 14 began
  // and spent 0.036 s: 0.237 s, where the sums' difference is -0.063 s.
  auto cost = cost_of(go, threads_reading({{10, 900'000'000}, {12, 6'000'000}, {14, 36'000'000}}, 1.30, 100));
  ASSERT_TRUE(cost) << runs[0].host_cost_missing;
  EXPECT_NEAR(cost->cpu_seconds, 0.237, 1e-12);
  EXPECT_EQ(cost->cpu_clock, CpuClock::schedstat);
  EXPECT_EQ(cost->threads_ended, 1u);
  // 12's id taken by a new thread with less CPU than the old one had: a new thread, the old one ended.
  cost = cost_of(go, threads_reading({{10, 900'000'000}, {11, 300'000'000}, {12, 2'000'000}}, 1.30, 100));
  ASSERT_TRUE(cost);
  EXPECT_NEAR(cost->cpu_seconds, 0.202, 1e-12);
  EXPECT_EQ(cost->threads_ended, 1u);
  // Every thread lived: no ended thread is said.
  cost = cost_of(go, threads_reading({{10, 800'000'000}, {11, 300'000'000}, {12, 5'000'000}}, 1.10, 100));
  ASSERT_TRUE(cost);
  EXPECT_NEAR(cost->cpu_seconds, 0.1, 1e-12);
  EXPECT_EQ(cost->threads_ended, 0u);
  // One reading in ticks (its threads' schedstat unreadable): both in ticks, 1.30 - 0.99.
  DomainStatsReading ticked = threads_reading({}, 1.30, 100);
  ticked.stats->cpu_clock = CpuClock::ticks, ticked.stats->cpu_seconds = 1.30;
  cost = cost_of(go, ticked);
  ASSERT_TRUE(cost);
  EXPECT_NEAR(cost->cpu_seconds, 0.31, 1e-12);
  EXPECT_EQ(cost->cpu_clock, CpuClock::ticks);
  // libvirt's cpu.time (a cgroup's usage) is its own clock; a reading on another clock has no window.
  cost = cost_of(reading(1.0, 0), reading(1.5, 100));
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->cpu_clock, CpuClock::libvirt);
  EXPECT_FALSE(cost_of(reading(1.0, 0), threads_reading({{10, 1}}, 1.5, 100)));
  EXPECT_EQ(runs[0].host_cost_missing, "the host's counters went back (or changed clocks) between the go and the stop");
}

// The watch reads the guest's statistics as an unpaced run's NEXT and RUNEND arrive, not at the RUN
// that NEXT announced (the tool is running then); at RUN only where no NEXT came; and at a paced DONE.
TEST(RunDesignsWindows, TheWatchReadsAtNextRunendAndDoneButNotAtAnAnnouncedRun) {
  const std::string nonce = "0123456789abcdef0123456789abcdef";
  GuestWatch watch;
  watch.attempt_started(nonce);
  int reads = 0;
  watch.stats_reader([&] { return reading(++reads, 0); });
  std::string console;
  std::uint64_t seq = 0;
  for (const auto& [type, payload] : std::vector<std::pair<std::string, std::string>>{
           {"NEXT", "dd,0,0"}, {"RUN", "dd,0,0,1.0"}, {"RUNEND", "dd,0,0,2.0"},  // seq 0-2
           {"RUN", "dd,1,0,3.0"}, {"RUNEND", "dd,1,0,4.0"},                       // 3-4: no NEXT
           {"DONE", "0"}}) {                                                       // 5
    console += format_guest_record(nonce, seq++, type, payload) + "\n";
  }
  watch.console(console);
  std::vector<std::uint64_t> read;
  for (const auto& [s, r] : watch.log().read_at) read.push_back(s);
  EXPECT_EQ(read, (std::vector<std::uint64_t>{0, 2, 3, 4, 5}));
}

TEST(RunDesignsWindows, AnUnpacedRunIsMappedByItsOwnMarks) {
  GuestReport r;
  r.runs.push_back({.workload = "dd", .index = 0, .t_start = 2.0, .t_end = 3.0});
  r.runs.push_back({.workload = "dd", .index = 1, .t_start = 4.0, .t_end = 5.0});
  r.clock_marks = {{.seq = 3, .t = 2.0, .run = 0}, {.seq = 6, .t = 3.0, .run = 0},
                   {.seq = 7, .t = 4.0, .run = 1}, {.seq = 9, .t = 5.0, .run = 1}};
  HostClockLog log;
  log.received = {{3, 102.010}, {6, 103.030}, {7, 104.001}, {9, 105.001}};
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0},
                              {.workload = "dd", .report_name = "dd", .index = 1}};
  time_runs(r, log, runs);
  // Run 0: upper bounds 100.010 and 100.030: offset 100.010, error 0.010.
  EXPECT_NEAR(runs[0].timing->start, 102.010, 1e-9);
  EXPECT_NEAR(runs[0].timing->clock_error, 0.010, 1e-9);
  EXPECT_FALSE(runs[0].timing->go);
  EXPECT_DOUBLE_EQ(runs[0].timing->load_end, runs[0].timing->end);
  // Run 1: 100.001 both.
  EXPECT_NEAR(runs[1].timing->end, 105.001, 1e-9);
  EXPECT_NEAR(runs[1].timing->clock_error, 0.0, 1e-9);
}

TEST(RunDesignsWindows, TimesAGuestCouldNotHaveHadGiveNoTiming) {
  GuestReport r;
  r.runs.push_back({.workload = "dd", .index = 0, .t_start = 3.0, .t_end = 2.0});  // ends before it starts
  r.runs.push_back({.workload = "dd", .index = 1, .t_start = 1.0, .t_end = 1e308 * 10});
  r.clock_marks = {{.seq = 1, .t = 3.0, .run = 0}, {.seq = 2, .t = 1.0, .run = 1}};
  HostClockLog log;
  log.received = {{1, 103.0}, {2, 101.0}};
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0},
                              {.workload = "dd", .report_name = "dd", .index = 1}};
  time_runs(r, log, runs);
  EXPECT_FALSE(runs[0].timing);
  EXPECT_FALSE(runs[1].timing);
}

TEST(RunDesignsWindows, ARunWithoutMarksHasNoTiming) {
  GuestReport r;
  r.runs.push_back({.workload = "dd", .index = 0, .t_start = 2.0, .t_end = 3.0});
  std::vector<RunResult> runs{{.workload = "dd", .report_name = "dd", .index = 0}};
  time_runs(r, {}, runs);
  EXPECT_FALSE(runs[0].timing);
}

TEST(RunDesignsWindows, TheGapBeforeAFillerIsNotLoad) {
  const RunTiming partner{.start = 10, .end = 12, .load_end = 20, .fill = 12.1};
  const auto run = [](double start, double end) { return RunTiming{.start = start, .end = end, .load_end = end}; };
  // Entirely inside the partner's run.
  EXPECT_DOUBLE_EQ(overlap_share(run(10.5, 11.5), partner), 1.0);
  // 11..15: 1 s in the run, the 0.1 s gap before its filler, 2.9 s in the filler: 3.9 / 4.
  EXPECT_DOUBLE_EQ(overlap_share(run(11, 15), partner), 3.9 / 4);
  // Starts before the partner: 9..11 is half covered.
  EXPECT_DOUBLE_EQ(overlap_share(run(9, 11), partner), 0.5);
  // After the partner's load: nothing.
  EXPECT_DOUBLE_EQ(overlap_share(run(21, 22), partner), 0.0);
  // A partner without a filler: only its run counts.
  EXPECT_DOUBLE_EQ(overlap_share(run(11, 13), run(10, 12)), 0.5);
}

TEST(RunDesignsWindows, PairsAreTheSameWorkloadAndIndexOfTheOtherSide) {
  TrialResult a, b;
  a.trial = {.id = "t0000", .side = Side::a};
  b.trial = {.id = "t0001", .side = Side::b};
  a.runs = {{.workload = "dd", .side = Side::a, .index = 0, .timing = RunTiming{.start = 0, .end = 1, .load_end = 4, .fill = 1}},
            {.workload = "dd", .side = Side::a, .index = 1, .timing = RunTiming{.start = 10, .end = 11, .load_end = 11}}};
  b.runs = {{.workload = "dd", .side = Side::b, .index = 0, .timing = RunTiming{.start = 0, .end = 4, .load_end = 4}},
            {.workload = "dd", .side = Side::b, .index = 1}};  // no timing: no overlap
  pair_overlaps({&a, &b});
  ASSERT_TRUE(a.runs[0].overlap);
  EXPECT_EQ(a.runs[0].overlap->partner, "t0001");
  EXPECT_DOUBLE_EQ(a.runs[0].overlap->run, 1.0);
  EXPECT_DOUBLE_EQ(b.runs[0].overlap->run, 1.0);  // A's filler covers B's 1..4
  EXPECT_DOUBLE_EQ(b.runs[0].overlap->pair, 1.0);
  EXPECT_FALSE(a.runs[1].overlap);
  EXPECT_FALSE(b.runs[1].overlap);
}

}  // namespace
}  // namespace abvm
