// The journal sink of `abvm run`: finished trials (with real dd and fio output captured on
// this machine, tests/data/dd and tests/data/fio) -> journal lines; output that does not parse
// or a fio job error becomes a failure, never a sample; --resume's journal pruning.
#include <gtest/gtest.h>

#include <filesystem>

#include "run/journal_sink.hpp"
#include "core/files.hpp"
#include "samples/load.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

std::string fixture(const std::string& rel) { return read_file(fs::path(ABVM_TEST_DATA) / rel); }

std::vector<Workload> workloads() {
  return {Workload{.name = "dd-write", .spec = DdWorkload{}, .repetitions = 2},
          Workload{.name = "seqwrite", .spec = FioWorkload{}, .repetitions = 1}};
}

TrialResult trial(const std::string& id, Side side, int position, const std::string& dd0, const std::string& dd1,
                  const std::string& fio) {
  TrialResult r;
  r.trial = {.id = id, .side = side, .block = position / 2, .position = position};
  r.time = "2026-11-29T20:01:02Z";
  r.accelerator = Accelerator::tcg;
  r.runs = {{.workload = "dd-write", .side = side, .index = 0, .exit_status = 0, .output = dd0},
            {.workload = "dd-write", .side = side, .index = 1, .exit_status = 0, .output = dd1},
            {.workload = "seqwrite", .side = side, .index = 0, .exit_status = 0, .output = fio}};
  return r;
}

class JournalSinkTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("abvm-js-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(JournalSinkTest, OkRunsBecomeMetricsWithOrderBootAndBlock) {
  JournalSink sink(dir / "journal.jsonl", workloads(), "host1");
  const std::string dd = fixture("dd/gnu-8M-16-direct.txt");
  const std::string fio = fixture("fio/seqwrite.json");
  const auto entries = sink.entries_for(trial("t0003", Side::b, 3, dd, dd, fio));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].trial, "t0003");
  EXPECT_EQ(entries[0].boot, "t0003");
  EXPECT_EQ(entries[0].side, Side::b);
  EXPECT_EQ(entries[0].block, 1);
  // 3 runs per trial: position 3 -> orders 9, 10, 11.
  EXPECT_EQ(entries[0].order, 9);
  EXPECT_EQ(entries[2].order, 11);
  EXPECT_EQ(entries[1].run, 1);
  EXPECT_EQ(entries[0].outcome, Outcome::ok);
  ASSERT_EQ(entries[0].metrics.size(), 1u);
  EXPECT_EQ(entries[0].metrics[0].name, "dd-write.bandwidth");
  // 134217728 bytes in 0.0723784 s (the fixture's own figures).
  EXPECT_DOUBLE_EQ(entries[0].metrics[0].value, 134217728 / 0.0723784);
  EXPECT_EQ(entries[0].host, "host1");
  EXPECT_EQ(entries[0].accelerator, Accelerator::tcg);
  EXPECT_EQ(entries[2].workload, "seqwrite");
  EXPECT_FALSE(entries[2].metrics.empty());
  EXPECT_EQ(entries[2].metrics[0].unit, "B/s");
}

// Issue 27: each ok run's cost and its metrics. fio's own CPU (66.67 % of 6 ms = 4 ms over 16 MiB:
// 0.256 s/GiB, 16 context switches) beside the guest's ticks; dd's from the guest's ticks (30 busy
// of 100: 0.3 s over 128 MiB, 2.4 s/GiB); the host's from the window (1 s over 256 MiB the disk
// received, 4 s/GiB; 1000 requests, 1000 us/req, fio only). A run without any says nothing.
TEST_F(JournalSinkTest, EachOkRunCarriesItsCostAndItsCostMetrics) {
  JournalSink sink(dir / "journal.jsonl", workloads(), "host1");
  const std::string dd = fixture("dd/gnu-8M-16-direct.txt");
  TrialResult r = trial("t0000", Side::a, 0, dd, dd, fixture("fio/seqwrite.json"));
  const HostWindowCost host{.cpu_seconds = 1, .disk_bytes = 256u << 20, .disk_requests = 1000};
  r.runs[0].guest_cpu = GuestCpuTicks{.busy = 30, .all = 100};
  r.runs[0].host_cost = host;
  r.runs[2].guest_cpu = GuestCpuTicks{.busy = 2, .all = 100};
  r.runs[2].host_cost = host;
  r.runs[1].host_cost_missing = "at the go: no stats";
  const auto entries = sink.entries_for(r);
  const auto value = [](const JournalEntry& e, const std::string& name) -> std::optional<double> {
    for (const auto& m : e.metrics) {
      if (m.name == name) return m.value;
    }
    return std::nullopt;
  };
  ASSERT_TRUE(entries[0].cost);
  EXPECT_DOUBLE_EQ(*entries[0].cost->guest_cpu_seconds, 0.3);
  EXPECT_NEAR(*value(entries[0], "dd-write.guest_cpu_per_gib"), 2.4, 1e-12);
  EXPECT_NEAR(*value(entries[0], "dd-write.host_cpu_per_gib"), 4.0, 1e-12);
  EXPECT_FALSE(value(entries[0], "dd-write.host_cpu_per_req")) << "dd's requests are not its unit of work";
  ASSERT_TRUE(entries[1].cost);
  EXPECT_FALSE(entries[1].cost->guest_cpu_seconds);
  EXPECT_EQ(entries[1].cost->host_missing, "at the go: no stats");
  EXPECT_EQ(entries[1].metrics.size(), 1u);  // bandwidth alone: no cost of zero
  const JournalEntry& fio = entries[2];
  ASSERT_TRUE(fio.cost);
  EXPECT_NEAR(*fio.cost->guest_cpu_seconds, 0.004, 1e-9);
  EXPECT_EQ(fio.cost->guest_ticks, (GuestTicks{.busy = 2, .all = 100}));
  EXPECT_EQ(fio.cost->fio_ctx, 16u);
  EXPECT_EQ(fio.cost->tool_bytes, 16777216u);
  EXPECT_NEAR(*value(fio, "seqwrite.guest_cpu_per_gib"), 0.256, 1e-6);
  EXPECT_NEAR(*value(fio, "seqwrite.host_cpu_per_req"), 1000.0, 1e-9);
}

TEST_F(JournalSinkTest, BadOutputAndFioErrorsAreFailuresNotSamples) {
  JournalSink sink(dir / "journal.jsonl", workloads(), "host1");
  const std::string dd = fixture("dd/gnu-8M-16-direct.txt");
  const auto entries =
      sink.entries_for(trial("t0000", Side::a, 0, "dd: invalid number: '8Q'\n", dd, fixture("fio/error-devfull.json")));
  EXPECT_EQ(entries[0].outcome, Outcome::invalid_output);
  EXPECT_TRUE(entries[0].metrics.empty());
  EXPECT_NE(entries[0].detail.find("trials/t0000/dd-write-run0.out"), std::string::npos) << entries[0].detail;
  EXPECT_EQ(entries[1].outcome, Outcome::ok);
  EXPECT_EQ(entries[2].outcome, Outcome::workload_failed);
  EXPECT_NE(entries[2].detail.find("reported error 28"), std::string::npos) << entries[2].detail;
}

TEST_F(JournalSinkTest, FailedTrialRunsKeepTheTrialOutcome) {
  JournalSink sink(dir / "journal.jsonl", workloads(), "host1");
  TrialResult r = trial("t0001", Side::b, 1, "", "", "");
  for (auto& run : r.runs) {
    run.outcome = Outcome::panic;
    run.detail = "Kernel panic - not syncing";
  }
  const auto entries = sink.entries_for(r);
  for (const auto& e : entries) {
    EXPECT_EQ(e.outcome, Outcome::panic);
    EXPECT_EQ(e.detail, "Kernel panic - not syncing");
  }
}

// The progress line's effect leaves the sizing block out once a workload grew (run/sizing.hpp).
TEST_F(JournalSinkTest, TheRunningEffectLeavesOutASizingBlockThatWasResized) {
  JournalSink sink(dir / "journal.jsonl", workloads(), "host1");
  const auto entry = [](Side side, double value, bool sizing) {
    JournalEntry e;
    e.side = side;
    e.workload = "dd";
    e.sizing_block = sizing;
    e.metrics = {{"dd.bandwidth", "B/s", Better::higher, value}};
    return e;
  };
  sink.remember({entry(Side::a, 1, true), entry(Side::b, 2, true)});
  EXPECT_EQ(sink.effect_estimate(), "dd.bandwidth B/A 2.000 (1 vs 1 runs)");
  sink.remember({entry(Side::a, 10, false), entry(Side::b, 5, false)});
  sink.set_workloads(workloads(), {});  // nothing grew: the sizing block counts
  EXPECT_EQ(sink.effect_estimate(), "dd.bandwidth B/A 0.636 (2 vs 2 runs)");
  sink.set_workloads(workloads(), {{"dd", 3}});
  EXPECT_EQ(sink.effect_estimate(), "dd.bandwidth B/A 0.500 (1 vs 1 runs)");
}

TEST_F(JournalSinkTest, JournalIsReadableByTheAnalysisAndGivesTheEffect) {
  const fs::path journal = dir / "journal.jsonl";
  JournalSink sink(journal, workloads(), "host1");
  const std::string a = fixture("dd/gnu-8M-16-direct.txt");
  const std::string b = fixture("dd/gnu-1G-4.txt");
  const std::string fio = fixture("fio/seqwrite.json");
  EXPECT_EQ(sink.effect_estimate(), "");
  sink.on_trial_finished(trial("t0000", Side::a, 0, a, a, fio));
  sink.on_trial_finished(trial("t0001", Side::b, 1, b, b, fio));
  sink.on_trial_finished(trial("t0002", Side::b, 2, b, b, fio));
  sink.on_trial_finished(trial("t0003", Side::a, 3, a, a, fio));
  EXPECT_TRUE(sink.effect_estimate().starts_with("dd-write.bandwidth B/A ")) << sink.effect_estimate();
  const SampleSet s = load_results_dir(dir);
  ASSERT_FALSE(s.metrics.empty());
  EXPECT_EQ(s.metrics[0].name, "dd-write.bandwidth");
  EXPECT_EQ(s.metrics[0].a.size(), 4u);
  EXPECT_EQ(s.metrics[0].b.size(), 4u);
  EXPECT_TRUE(s.metrics[0].a[0].order_known);
  EXPECT_EQ(s.metrics[0].a[0].run().boot, "t0000");
}

TEST_F(JournalSinkTest, PruneRemovesUnfinishedTrialsAndATruncatedLine) {
  const fs::path journal = dir / "journal.jsonl";
  JournalSink sink(journal, workloads(), "host1");
  const std::string dd = fixture("dd/gnu-8M-16-direct.txt");
  const std::string fio = fixture("fio/seqwrite.json");
  sink.on_trial_finished(trial("t0000", Side::a, 0, dd, dd, fio));
  sink.on_trial_finished(trial("t0001", Side::b, 1, dd, dd, fio));
  // Killed while writing t0001's lines to the ledger: t0001 is not done.
  write_file_atomic(journal, read_file(journal) + "{\"journal_version\":1,\"trial\":\"t00");
  std::vector<std::string> notes;
  const auto kept = prune_journal(journal, {"t0000"}, notes);
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_EQ(read_journal(journal).size(), 3u);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("unfinished trial t0001 removed"), std::string::npos) << notes[1];
  // Nothing to remove: the file is left as it is.
  const auto before = fs::last_write_time(journal);
  notes.clear();
  EXPECT_EQ(prune_journal(journal, {"t0000"}, notes).size(), 3u);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(fs::last_write_time(journal), before);
}

}  // namespace
}  // namespace abvm
