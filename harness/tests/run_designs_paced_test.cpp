// Paced blocks (run/designs/paced.hpp) through the fake driver, whose emulated agent speaks the
// paced protocol of guests/agent/init.sh: READY, the host's go, DONE, the host's stop, records.
// The barrier must release both guests on one go, hold the faster one's load until the slower one
// is done, and survive every fault of the window without hanging: a guest that never says READY,
// one that hangs after its go, one that never hears its go, one whose QEMU dies mid-window or
// after its DONE.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "fake_driver.hpp"
#include "results/directory.hpp"
#include "run/journal_sink.hpp"
#include "run/orchestrator.hpp"
#include "samples/journal.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kDdOutput = read_file(fs::path(ABVM_TEST_DATA) / "dd" / "gnu-8M-16-direct.txt");

struct RecordingSink : TrialSink {
  std::vector<TrialResult> results;
  void on_trial_finished(const TrialResult& r) override { results.push_back(r); }
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class PacedTest : public ::testing::Test {
 protected:
  fs::path dir;
  ExecutionSpec spec;
  test::FakeDriver driver;
  RecordingSink sink;

  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("abvm-paced-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_file_atomic(dir / "base.cpio.gz", std::string(1000, 'x'));
    spec.results_dir = dir;
    spec.base_image = dir / "base.cpio.gz";
    spec.a = {.label = "fast", .kernel = "/k/vmlinuz-a", .cmdline = "console=ttyS0 a"};
    spec.b = {.label = "slow", .kernel = "/k/vmlinuz-b", .cmdline = "console=ttyS0 b"};
    spec.design = Design::co_scheduled;
    spec.workloads = {Workload{.name = "dd-write", .spec = DdWorkload{}, .repetitions = 3, .warmup = 1}};
    spec.lanes = {{.name = "cpu 0", .host_cpus = "0", .scratch = {dir / "scratch.raw", dir / "scratch-1.raw"}}};
    spec.boot_timeout = 2s;
    spec.run_timeout = 1s;
    spec.infra_retries = 1;
    driver.emulate_agent = true;
    driver.agent_output = kDdOutput;
    driver.run_time = 20ms;
  }
  void TearDown() override { fs::remove_all(dir); }

  // Block 0: A then B (t0000, t0001); block 1: B then A.
  static std::vector<Trial> trials(int blocks) {
    std::vector<Trial> out;
    for (int b = 0; b < blocks; ++b) {
      for (int k = 0; k < 2; ++k) {
        const int pos = 2 * b + k;
        out.push_back({.id = fmt::format("t{:04d}", pos), .side = (b + k) % 2 ? Side::b : Side::a, .block = b,
                       .position = pos});
      }
    }
    return out;
  }
  static Side side_of(const std::string& trial) {
    const int pos = std::stoi(trial.substr(1));
    return (pos / 2 + pos % 2) % 2 ? Side::b : Side::a;
  }
  // Side B's runs take `slower` times as long as A's.
  void b_slower(int slower) {
    driver.run_time_of = [slower, this](const std::string& trial) {
      return side_of(trial) == Side::b ? driver.run_time * slower : driver.run_time;
    };
  }
  // The fake runs of one trial, in order.
  std::vector<test::FakeRun> runs_of(const std::string& trial) const {
    std::vector<test::FakeRun> out;
    for (const auto& r : driver.runs) {
      if (r.trial == trial) out.push_back(r);
    }
    return out;
  }
  const TrialResult& result(const std::string& trial) const {
    for (const auto& r : sink.results) {
      if (r.trial.id == trial) return r;
    }
    throw std::runtime_error("no result for " + trial);
  }
};

// One side 4x slower: every step's go releases both guests at once (within a few ms), the faster
// guest's load lasts until the slower one's run has ended, the pairs overlap fully on the host's
// clock, and neither guest reports its end before its partner's last run is over.
TEST_F(PacedTest, BothGuestsGoOnOneGoAndTheFasterKeepsItsLoadUntilTheSlowerEnds) {
  // Long enough that the fake's 1 ms polling, which delays a go by up to a millisecond or two (tens
  // on a loaded machine), stays well inside the 5 % an overlap may miss.
  driver.run_time = 200ms;
  b_slower(4);
  Orchestrator o(driver, spec, sink);
  o.run(trials(2), {}, {});
  ASSERT_EQ(sink.results.size(), 4u);
  for (const auto& r : sink.results) ASSERT_EQ(r.outcome, Outcome::ok) << r.trial.id << ": " << r.detail;
  EXPECT_EQ(driver.max_running, 2);
  for (const auto& [fast_id, slow_id] : {std::pair{"t0000", "t0001"}, std::pair{"t0003", "t0002"}}) {
    const auto fast = runs_of(fast_id), slow = runs_of(slow_id);
    ASSERT_EQ(fast.size(), 4u);  // 1 warm-up + 3
    ASSERT_EQ(slow.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_LT(std::abs(seconds(fast[k].go - slow[k].go)), 0.025) << fast_id << " step " << k;
      EXPECT_GE(fast[k].load_end, slow[k].end) << fast_id << " step " << k << ": the fast guest stopped its load early";
      EXPECT_GT(seconds(slow[k].end - slow[k].start), 2.5 * seconds(fast[k].end - fast[k].start));
    }
    // Both boots lasted until the last window closed.
    EXPECT_GE(driver.boot_end(fast_id), slow.back().end);
    EXPECT_GE(driver.boot_end(slow_id), fast.back().end);
    for (const auto& run : result(slow_id).runs) {
      ASSERT_TRUE(run.overlap) << slow_id;
      EXPECT_EQ(run.overlap->partner, fast_id);
      EXPECT_GE(run.overlap->pair, 0.95) << slow_id << " run " << run.index;
      ASSERT_TRUE(run.timing && run.timing->go);
      EXPECT_LT(run.timing->clock_error, 0.025);
    }
    for (const auto& run : result(fast_id).runs) {
      ASSERT_TRUE(run.timing);
      // The filler ran from the fast run's end to about the slow run's end: about three run times.
      EXPECT_GT(run.timing->load_end - run.timing->end, 2.0 * seconds(driver.run_time)) << fast_id;
    }
  }
  // result.json keeps each run's timing and overlap.
  const std::string saved = read_file(ResultsDir(dir).trial("t0001").result());
  EXPECT_NE(saved.find("\"overlap\""), std::string::npos);
  EXPECT_NE(saved.find("\"load_end\""), std::string::npos);
  EXPECT_NE(saved.find("\"word\": \"go 0\""), std::string::npos);
  // ... and the guest's own clock, which the timings were mapped from.
  EXPECT_NE(saved.find("\"t_go\""), std::string::npos);
  EXPECT_NE(saved.find("\"t_load_end\""), std::string::npos);
}

// Issue 27: the host's view of each window is the difference of the guest's statistics read before its
// go and before its stop (the fake's counters grow by one step per read: 0.5 s of CPU, 1 GiB, 1000
// requests), and the journal's cost metric is made of it; a host whose statistics call fails loses
// the figure for its windows, with the reason, and the run goes on.
TEST_F(PacedTest, EachWindowCarriesTheHostsCostOrWhyItHasNone) {
  driver.stats_error = [](const std::string& trial) {
    return trial == "t0001" ? std::string("virDomainListGetStats: fake failure") : std::string();
  };
  Orchestrator o(driver, spec, sink);
  o.run(trials(1), {}, {});
  ASSERT_EQ(sink.results.size(), 2u);
  for (const auto& r : sink.results) ASSERT_EQ(r.outcome, Outcome::ok) << r.trial.id << ": " << r.detail;
  for (const auto& run : result("t0000").runs) {
    ASSERT_TRUE(run.host_cost) << run.host_cost_missing;
    EXPECT_DOUBLE_EQ(run.host_cost->cpu_seconds, 0.5);
    EXPECT_DOUBLE_EQ(run.host_cost->user_seconds, 0.375);
    EXPECT_DOUBLE_EQ(run.host_cost->vcpu_seconds, 0.25);
    EXPECT_EQ(run.host_cost->disk_bytes, std::uint64_t{1} << 30);
    EXPECT_EQ(run.host_cost->disk_requests, 1000u);
    EXPECT_EQ(run.guest_cpu, (GuestCpuTicks{.busy = 50, .all = 200}));
  }
  for (const auto& run : result("t0001").runs) {
    EXPECT_FALSE(run.host_cost);
    EXPECT_EQ(run.host_cost_missing, "at the go: virDomainListGetStats: fake failure");
  }
  // The journal: a cost per run, its metrics where its figures are.
  JournalSink journal(dir / "journal.jsonl", spec.workloads, "fake", 1);
  for (const auto& r : sink.results) journal.on_trial_finished(r);
  for (const auto& e : read_journal(dir / "journal.jsonl")) {
    ASSERT_TRUE(e.cost) << e.trial;
    const auto has = [&](const std::string& name) {
      return std::any_of(e.metrics.begin(), e.metrics.end(), [&](const JournalMetric& m) { return m.name == name; });
    };
    EXPECT_TRUE(has("dd-write.guest_cpu_per_gib")) << e.trial;
    EXPECT_EQ(has("dd-write.host_cpu_per_gib"), e.trial == "t0000") << e.trial;
    if (e.trial == "t0001") {
      EXPECT_EQ(e.cost->host_missing, "at the go: virDomainListGetStats: fake failure");
    }
  }
}

// Without the barrier's pairing the fast side would finish its boot long before the slow one: a
// check that the test above can fail. A free-paced (sequential) block's runs do not overlap.
TEST_F(PacedTest, SequentialBlocksRecordTimingsButNoOverlap) {
  spec.design = Design::sequential_blocks;
  Orchestrator o(driver, spec, sink);
  o.run(trials(1), {}, {});
  ASSERT_EQ(sink.results.size(), 2u);
  for (const auto& r : sink.results) {
    ASSERT_EQ(r.outcome, Outcome::ok) << r.detail;
    for (const auto& run : r.runs) {
      ASSERT_TRUE(run.timing);
      EXPECT_FALSE(run.timing->go);
      ASSERT_TRUE(run.overlap);
      EXPECT_EQ(run.overlap->pair, 0.0);
      // Issue 27: the host's view of an unpaced run, read as its RUN and RUNEND arrived: one step of
      // the fake's counters.
      ASSERT_TRUE(run.host_cost) << run.host_cost_missing;
      EXPECT_DOUBLE_EQ(run.host_cost->cpu_seconds, 0.5);
      EXPECT_EQ(run.host_cost->disk_bytes, std::uint64_t{1} << 30);
    }
  }
}

// The faults of the window. Each: the faulty guest's outcome says what happened, its partner is
// partner-failed, the block is void and runs again whole, and nothing hangs.
struct Fault {
  test::FakeFault fault;
  Outcome outcome;      // the faulty guest's
  std::string says;     // in its detail
};

// Named, so that ctest's test names do not carry the parameter's bytes.
void PrintTo(const Fault& f, std::ostream* os) { *os << f.says; }

class PacedFaultTest : public PacedTest, public ::testing::WithParamInterface<Fault> {};

TEST_P(PacedFaultTest, TheFaultyGuestFailsItsPartnerIsPartnerFailedAndTheBlockRunsAgain) {
  const Fault f = GetParam();
  driver.run_time = 20ms;
  int boots_of_b = 0;
  // B misbehaves at its first boot only: the block's second attempt is clean.
  driver.fault = [&](const std::string& trial) {
    return side_of(trial) == Side::b && boots_of_b++ == 0 ? f.fault : test::FakeFault::none;
  };
  Orchestrator o(driver, spec, sink);
  const auto start = Clock::now();
  o.run(trials(1), {}, {});
  EXPECT_LT(seconds(Clock::now() - start), 6.0) << "a fault of the window must not hang the block";
  ASSERT_EQ(sink.results.size(), 2u);
  for (const auto& r : sink.results) {
    EXPECT_EQ(r.outcome, Outcome::ok) << r.trial.id << ": " << r.detail;
    EXPECT_EQ(r.attempts, 2) << r.trial.id;
    ASSERT_EQ(r.retried.size(), 1u) << r.trial.id;
    EXPECT_NE(r.retried[0].find("block 0 attempt 1 void"), std::string::npos) << r.retried[0];
    EXPECT_TRUE(fs::exists(ResultsDir(dir).trial(r.trial.id).attempt_console_log(1))) << r.trial.id;
  }
  EXPECT_NE(result("t0000").retried[0].find("t0000 was stopped: its partner t0001 ended"), std::string::npos)
      << result("t0000").retried[0];
  EXPECT_EQ(driver.boots.size(), 4u);
}

TEST_P(PacedFaultTest, AFaultInEveryAttemptLeavesTheFaultyOutcomeAndAPartnerFailedPartner) {
  const Fault f = GetParam();
  spec.infra_retries = 0;
  driver.fault = [&](const std::string& trial) { return side_of(trial) == Side::b ? f.fault : test::FakeFault::none; };
  Orchestrator o(driver, spec, sink);
  const auto start = Clock::now();
  o.run(trials(1), {}, {});
  EXPECT_LT(seconds(Clock::now() - start), 4.0);
  ASSERT_EQ(sink.results.size(), 2u);
  const TrialResult& a = result("t0000");
  const TrialResult& b = result("t0001");
  EXPECT_EQ(b.outcome, f.outcome) << b.detail;
  EXPECT_NE(b.detail.find(f.says), std::string::npos) << b.detail;
  EXPECT_EQ(a.outcome, Outcome::partner_failed) << a.detail;
  EXPECT_NE(a.detail.find("its partner t0001 ended " + std::string(to_string(f.outcome))), std::string::npos) << a.detail;
  for (const auto& run : a.runs) EXPECT_EQ(run.outcome, Outcome::partner_failed);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, PacedFaultTest,
    ::testing::Values(Fault{test::FakeFault::never_ready, Outcome::timeout, "did not say READY for step 0 within 2 s"},
                      Fault{test::FakeFault::hang_window, Outcome::timeout,
                            "did not end step 0 within 1 s of the go (it hung, or the go was lost)"},
                      Fault{test::FakeFault::deaf, Outcome::timeout,
                            "did not end step 0 within 1 s of the go (it hung, or the go was lost)"},
                      Fault{test::FakeFault::die_window, Outcome::infra_error, "QEMU killed mid-window"},
                      // The driver's part (the stop event of a guest beside another) is
                      // GuestLibvirtDriver.EachOfTwoGuestsRunningAtOnceWhoseQemuIsKilledIsAnInfraError.
                      Fault{test::FakeFault::die_after_done, Outcome::infra_error, "QEMU killed after DONE"}),
    [](const ::testing::TestParamInfo<Fault>& info) {
      switch (info.param.fault) {
        case test::FakeFault::never_ready: return std::string("NeverReady");
        case test::FakeFault::hang_window: return std::string("HangsInTheWindow");
        case test::FakeFault::deaf: return std::string("GoLost");
        case test::FakeFault::die_window: return std::string("DiesInTheWindow");
        case test::FakeFault::die_after_done: return std::string("DiesAfterDone");
        case test::FakeFault::none: break;
      }
      return std::string("None");
    });

// A block of which one trial is already done (a resume after a crash between the two ledger
// lines) runs its other trial paced alone: it gets its go and its stop, and ends.
TEST_F(PacedTest, ALoneTrialOfAPacedBlockRunsAlone) {
  Orchestrator o(driver, spec, sink);
  o.run(trials(1), {"t0000"}, {});
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome, Outcome::ok) << sink.results[0].detail;
}

// What each guest is told: its pace from the design's facts, the filler in co-scheduled only, a
// deadline of its own, and the block's drawn workload order.
TEST_F(PacedTest, EachGuestIsToldItsPaceAndItsBlocksWorkloadOrder) {
  spec.workloads.push_back(Workload{.name = "fio-rand", .spec = FioWorkload{}, .repetitions = 2});
  Trial t{.id = "t0000", .side = Side::a, .workload_order = {1, 0}};
  GuestJob job = trial_job(spec, t, "0123456789abcdef");
  EXPECT_EQ(job.pace, Pacing::together);
  EXPECT_TRUE(job.fill);
  EXPECT_EQ(job.wait_seconds, 4);  // boot timeout 2 s + 2 x run timeout 1 s
  ASSERT_EQ(job.steps.size(), 6u);
  EXPECT_EQ(job.steps[0], (JobStep{.workload = 1, .index = 0}));
  EXPECT_EQ(job.steps[1], (JobStep{.workload = 1, .index = 1}));
  EXPECT_EQ(job.steps[2], (JobStep{.workload = 0, .warmup = true, .index = 0}));
  t.workload_order.clear();
  EXPECT_TRUE(trial_job(spec, t, "0123456789abcdef").steps.empty()) << "as listed: the agent's default order";
  spec.design = Design::lockstep;
  job = trial_job(spec, t, "0123456789abcdef");
  EXPECT_EQ(job.pace, Pacing::turns);
  EXPECT_FALSE(job.fill);
  spec.design = Design::sequential_blocks;
  EXPECT_EQ(trial_job(spec, t, "0123456789abcdef").pace, Pacing::free);
}

}  // namespace
}  // namespace abvm
