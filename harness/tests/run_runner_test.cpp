// The run stage end to end without libvirt: a whole run of a loaded experiment through the
// runner, with the shared fake driver (tests/fake_driver.hpp) answering in the real record
// format with real GNU dd output, and a preparer that hands over prepared files instead of
// building kernels. Covers the results directory it leaves, resume after an interruption,
// sequential looks and plan extension, the lock, and a finished run.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "fake_driver.hpp"
#include "guest/accel.hpp"
#include "plan/plan.hpp"
#include "results/directory.hpp"
#include "run/runner.hpp"
#include "samples/journal.hpp"
#include "samples/load.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const std::string kDdOutput = read_file(fs::path(ABVM_TEST_DATA) / "dd" / "gnu-8M-16-direct.txt");

std::string config(int boots, const std::string& extra = "", const std::string& accelerator = "tcg") {
  return "name = \"runner\"\n[guest]\nkernel = \"k\"\naccelerator = \"" + accelerator +
         "\"\n[disk]\nsize = \"16M\"\n[sides.A]\nlabel = \"base\"\n[sides.B]\nlabel = \"patched\"\n"
         "cmdline_append = \"b=1\"\n[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nbs = \"8M\"\ncount = 16\n"
         "repetitions = 2\nwarmup = 1\n[schedule]\nboots_per_side = " +
         std::to_string(boots) + "\nseed = 7\n" + extra;
}

// Hands over prepared files: what a real preparer returns after building kernels.
struct PreparedFiles : GuestPreparer {
  fs::path dir;
  int calls = 0;
  PreparedGuests prepare(const Experiment& e) override {
    ++calls;
    PreparedGuests g;
    g.base_image = dir / "base.cpio.gz";
    write_file_atomic(g.base_image, std::string(100, 'x'));
    g.a = side_boot(e.a, "/k/vmlinuz-a", "");
    g.b = side_boot(e.b, "/k/vmlinuz-b", "");
    g.kernels = {{"A", {{"release", "6.1-a"}}}, {"B", {{"release", "6.1-b"}}}};
    g.image = {{"sha256", "00"}};
    return g;
  }
};

struct Notes : RunObserver {
  std::vector<std::string> lines;
  int progress_lines = 0;
  void note(const std::string& text) override { lines.push_back(text); }
  void progress(const ProgressState&) override { ++progress_lines; }
  void finish() override {}
  bool has(const std::string& part) const {
    for (const auto& l : lines)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

class RunnerTest : public ::testing::Test {
 protected:
  fs::path root;
  test::FakeDriver driver{"runner-host"};
  PreparedFiles preparer;
  Notes notes;
  int connects = 0;
  std::vector<double> looks;                  // the confidence of every look made
  std::optional<std::string> look_verdict;    // what every look decides
  std::function<bool()> stop = [] { return false; };
  std::vector<HostDriver> pool;  // non-empty: the hosts connect() gives instead of `driver`

  void SetUp() override {
    root = fs::temp_directory_path() /
           ("abvm-runner-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root);
    fs::create_directories(root);
    preparer.dir = root;
    driver.answer = [this](const test::FakeBoot& b) {
      return test::FakeAnswer{.console = test::fake_guest_console(b.trial, b.nonce, experiment.workloads, kDdOutput)};
    };
  }
  void TearDown() override { fs::remove_all(root); }

  Experiment experiment;
  ResultsDir start(const std::string& text) {
    experiment = load_experiment_text(text, "runner.toml", root);
    return start_run(experiment, make_plan(experiment, 7), root / "results", root / "runner.toml", "fake:///");
  }
  RunEnd run(const ResultsDir& dir, bool resuming = false) {
    Runner runner(experiment, dir,
                  {.connect = [this] {
                     ++connects;
                     return pool.empty() ? std::vector<HostDriver>{{.name = "", .driver = &driver}} : pool;
                   },
                   .preparer = preparer,
                   .observer = notes,
                   .decide = [this](const ResultsDir&, double c) {
                     looks.push_back(c);
                     return look_verdict;
                   },
                   .stop_requested = [this] { return stop(); }});
    return runner.run({.resuming = resuming, .uri = "fake:///runner"});
  }
  static std::vector<std::string> ledger_trials(const ResultsDir& dir) {
    std::vector<std::string> out;
    for (const auto& e : read_ledger(dir.ledger())) out.push_back(e.trial);
    return out;
  }
  static std::multiset<std::string> journal_trials(const ResultsDir& dir) {
    std::multiset<std::string> out;
    for (const auto& e : read_journal(dir.journal())) out.insert(e.trial);
    return out;
  }
};

TEST_F(RunnerTest, AWholeRunLeavesACompleteResultsDirectory) {
  const ResultsDir dir = start(config(3));
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::complete);
  EXPECT_EQ(end.trials_done, 6u);
  EXPECT_DOUBLE_EQ(end.final_confidence, 0.95);
  EXPECT_EQ(connects, 1);
  ASSERT_EQ(driver.boots.size(), 6u);
  const Plan plan = read_plan(dir);
  std::vector<std::string> planned;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    planned.push_back(plan.trials[i].id);
    EXPECT_EQ(driver.boots[i].trial, plan.trials[i].id) << "trials boot in plan order";
    EXPECT_EQ(driver.boots[i].spec.kernel, plan.trials[i].side == Side::a ? "/k/vmlinuz-a" : "/k/vmlinuz-b");
    EXPECT_EQ(driver.boots[i].spec.cmdline.ends_with(" b=1"), plan.trials[i].side == Side::b);
  }
  EXPECT_EQ(ledger_trials(dir), planned);
  const auto journal = read_journal(dir.journal());
  ASSERT_EQ(journal.size(), 12u) << "2 measured runs per boot";
  for (const auto& e : journal) {
    EXPECT_EQ(e.outcome, Outcome::ok) << e.detail;
    EXPECT_EQ(e.metrics.at(0).name, "dd-write.bandwidth");
  }
  const RunManifest m = read_manifest(dir);
  EXPECT_EQ(m.status, RunStatus::complete);
  EXPECT_EQ(m.uri, "fake:///runner");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir.environment())).at("accelerator"), "tcg");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir.kernels())).at("B").at("release"), "6.1-b");
  EXPECT_TRUE(fs::exists(dir.trial("t0000").console_log()));
  EXPECT_TRUE(fs::exists(dir.trial("t0000").domain_xml()));
  EXPECT_FALSE(fs::exists(dir.scratch_disk())) << "abvm's own scratch image goes when the session ends";
  EXPECT_GT(notes.progress_lines, 0);
}

TEST_F(RunnerTest, InterruptedRunResumesWithEveryTrialExactlyOnce) {
  const ResultsDir dir = start(config(3));
  int boots = 0;
  driver.during_boot = [&] { ++boots; };
  stop = [&] { return boots == 3; };  // Ctrl-C while the third guest runs
  RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::running);
  EXPECT_EQ(end.trials_done, 2u);
  EXPECT_EQ(read_manifest(dir).status, RunStatus::running);
  EXPECT_EQ(ledger_trials(dir).size(), 2u);

  stop = [] { return false; };
  driver.boots.clear();
  end = run(dir, true);
  EXPECT_EQ(end.status, RunStatus::complete);
  EXPECT_EQ(end.trials_done, 6u);
  ASSERT_EQ(driver.boots.size(), 4u) << "the interrupted trial runs again, the two done ones do not";
  EXPECT_EQ(driver.boots[0].trial, "t0002");
  EXPECT_TRUE(notes.has("resuming " + dir.root().string() + ": 2 of 6 trials done"));
  const auto ledger = ledger_trials(dir);
  EXPECT_EQ(std::set<std::string>(ledger.begin(), ledger.end()).size(), 6u);
  EXPECT_EQ(ledger.size(), 6u);
  const auto journal = journal_trials(dir);
  for (const auto& t : ledger) EXPECT_EQ(journal.count(t), 2u) << t;
}

// A pool's run resumed on other hosts: the blocks done stay where they ran, the rest run on the
// new hosts, every trial once, both sides of each block on one host.
TEST_F(RunnerTest, APoolRunInterruptedResumesOnOtherHostsWithEveryTrialOnce) {
  // Unsized: a sizing run's first block runs alone, which moves where the fifth boot falls.
  const ResultsDir dir = start(config(6, "min_run_time = \"0s\"\n"));
  std::array<test::FakeDriver, 3> hosts{test::FakeDriver("one"), test::FakeDriver("two"), test::FakeDriver("three")};
  std::atomic<int> boots = 0;
  for (auto& h : hosts) {
    h.answer = driver.answer;
    h.during_boot = [&] { ++boots; };
  }
  pool = {{.name = "fake://one", .driver = &hosts[0]}, {.name = "fake://two", .driver = &hosts[1]}};
  stop = [&] { return boots >= 5; };
  EXPECT_EQ(run(dir).status, RunStatus::running);
  const std::size_t first = ledger_trials(dir).size();
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, 12u);

  stop = [] { return false; };
  pool = {{.name = "fake://three", .driver = &hosts[2]}};
  EXPECT_EQ(run(dir, true).status, RunStatus::complete);
  const auto ledger = ledger_trials(dir);
  EXPECT_EQ(ledger.size(), 12u);
  EXPECT_EQ(std::set<std::string>(ledger.begin(), ledger.end()).size(), 12u);
  const auto journal = journal_trials(dir);
  std::map<long, std::set<std::string>> block_hosts;
  std::map<std::string, std::size_t> trials_per_host;
  for (const Trial& t : read_plan(dir).trials) {
    EXPECT_EQ(journal.count(t.id), 2u) << t.id;
    const auto result = nlohmann::json::parse(read_file(dir.trial(t.id).result()));
    block_hosts[t.block].insert(result.at("host").get<std::string>());
    ++trials_per_host[result.at("host").get<std::string>()];
  }
  for (const auto& [block, where] : block_hosts) EXPECT_EQ(where.size(), 1u) << "block " << block;
  EXPECT_EQ(trials_per_host["fake://one"] + trials_per_host["fake://two"], first);
  EXPECT_EQ(trials_per_host["fake://three"], 12u - first);
}

TEST_F(RunnerTest, JournalLinesOfATrialWithoutItsLedgerLineAreDroppedOnResume) {
  const ResultsDir dir = start(config(2));
  // A runner killed between a trial's journal lines and its ledger line.
  append_line_durable(dir.journal(),
                      R"({"journal_version":1,"trial":"t0000","side":"A","boot":"t0000","run":0,"order":0,"block":0,)"
                      R"("workload":"dd-write","outcome":"ok","host":"h","accelerator":"tcg","time":"t",)"
                      R"("metrics":[{"name":"dd-write.bandwidth","unit":"B/s","better":"higher","value":1}],"detail":""})");
  run(dir, true);
  const auto journal = journal_trials(dir);
  EXPECT_EQ(journal.count("t0000"), 2u);
  EXPECT_TRUE(notes.has("lines of unfinished trial t0000 removed"));
}

TEST_F(RunnerTest, SequentialLooksStopWhenTheyDecide) {
  const ResultsDir dir = start(config(4, "[schedule.sequential]\nenabled = true\nmax_boots_per_side = 12\nlook_every = 4\n"));
  look_verdict = "regression";
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::stopped);
  // 4 of 12 boots: O'Brien-Fleming-type spends 2 x 2(1 - Phi(z_0.9875 sqrt(3))) = 0.00020 first.
  EXPECT_EQ(end.stop_reason,
            "verdict regression at look 1 of 3 at nominal level 99.98 % (boundary 3.710), overall error rate 5 %");
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_GT(looks[0], 0.999) << "the first look spends only a sliver of the error rate";
  EXPECT_LT(looks[0], 1);
  EXPECT_DOUBLE_EQ(end.final_confidence, looks[0]);
  const RunManifest m = read_manifest(dir);
  EXPECT_EQ(m.status, RunStatus::stopped);
  EXPECT_EQ(m.stop_reason, end.stop_reason);
  EXPECT_DOUBLE_EQ(m.final_confidence.value(), looks[0]);
  EXPECT_EQ(driver.boots.size(), 8u);
}

TEST_F(RunnerTest, InconclusiveLooksExtendThePlanUpToTheBudget) {
  const ResultsDir dir = start(config(4, "[schedule.sequential]\nenabled = true\nmax_boots_per_side = 10\nlook_every = 4\n"));
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::complete);
  EXPECT_EQ(end.stop_reason, "budget of 10 boots per side spent");
  EXPECT_EQ(looks.size(), 3u) << "looks after 4, 8 and 10 boots per side";
  const Plan plan = read_plan(dir);
  EXPECT_EQ(plan.blocks, 10);
  EXPECT_EQ(plan.trials.size(), 20u);
  EXPECT_EQ(plan, extend_plan(make_plan(experiment, 7), 6)) << "the extended plan is the seed's plan";
  EXPECT_EQ(ledger_trials(dir).size(), 20u);
  EXPECT_TRUE(notes.has("inconclusive: 4 more blocks (8 boots per side)"));
}

// ---- Runs long enough to measure (issue 26, run/sizing.hpp) ----

// config()'s experiment on a scratch disk with room to grow: 128 MiB per dd run on 2 GiB.
std::string sized_config(int boots, const std::string& extra = "") {
  std::string text = config(boots, extra);
  const std::string disk = "size = \"16M\"";
  text.replace(text.find(disk), disk.size(), "size = \"2G\"");
  return text;
}

class SizingTest : public RunnerTest {
 protected:
  std::map<std::string, std::string> counts;  // trial -> the dd count= its guest job ran
  void SetUp() override {
    RunnerTest::SetUp();
    driver.answer = [this](const test::FakeBoot& b) {
      const std::string initrd = read_file(b.spec.initrd);
      const std::size_t at = initrd.rfind("arg count=");
      counts[b.trial] = at == std::string::npos ? "" : initrd.substr(at + 4, initrd.find('\n', at) - at - 4);
      // Each fake run takes 0.1 s on the guest's clock: a tenth of the default minimum, so x10.
      return test::FakeAnswer{.console = test::fake_guest_console(b.trial, b.nonce, experiment.workloads, kDdOutput)};
    };
  }
  // Every trial's count, by block and side.
  void expect_counts(const Plan& plan, const std::string& first, const std::string& later) {
    for (const Trial& t : plan.trials) {
      ASSERT_TRUE(counts.contains(t.id)) << t.id;
      EXPECT_EQ(counts[t.id], t.block == 0 ? first : later) << t.id << " (block " << t.block << ", side "
                                                             << to_string(t.side) << ")";
    }
  }
};

TEST_F(SizingTest, ARunTooShortIsSizedAfterTheFirstBlockOnBothSides) {
  const ResultsDir dir = start(sized_config(3));
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::complete);
  const Plan plan = read_plan(dir);
  EXPECT_EQ(plan.blocks, 4) << "one block more for the one set aside";
  EXPECT_EQ(plan.set_aside_blocks, 1);
  EXPECT_EQ(plan, [&] {
    Plan p = extend_plan(make_plan(experiment, 7), 1);
    p.set_aside_blocks = 1;
    return p;
  }());
  expect_counts(plan, "count=16", "count=160");
  EXPECT_TRUE(notes.has("sizing: dd-write: 0.100 s per run (median of 4 in the first block) < 1s: bs=8M count=16 -> "
                        "bs=8M count=160 (x10)"));
  for (const JournalEntry& e : read_journal(dir.journal())) {
    EXPECT_EQ(e.sizing_block, e.block == 0) << e.trial;
    EXPECT_EQ(e.size, e.block == 0 ? "bs=8M count=16" : "bs=8M count=160") << e.trial;
    EXPECT_EQ(e.scale, e.block == 0 ? 1u : 10u) << e.trial;
  }
  const SampleSet samples = load_results_dir(dir.root());
  ASSERT_EQ(samples.metrics.size(), 1u);
  EXPECT_EQ(samples.metrics[0].a.size(), 6u) << "3 blocks of 2 runs: the sizing block is set aside";
  EXPECT_EQ(samples.metrics[0].b.size(), 6u);
  for (const Sample& x : samples.metrics[0].a) EXPECT_NE(x.run().block, 0);
  ASSERT_EQ(samples.context_a.run_lengths.size(), 1u);
  EXPECT_EQ(samples.context_a.run_lengths[0].size, "bs=8M count=160");
  EXPECT_EQ(samples.context_b.run_lengths[0].size, "bs=8M count=160");
  ASSERT_FALSE(samples.notes.empty());
  EXPECT_EQ(samples.notes[0], "block 0 sized the runs and is set aside (dd-write ran bs=8M count=16 there, bs=8M "
                              "count=160 after): its runs are not analysed");
}

TEST_F(SizingTest, RunsLongEnoughKeepTheFirstBlock) {
  const ResultsDir dir = start(sized_config(3, "min_run_time = \"90ms\"\n"));
  EXPECT_EQ(run(dir).status, RunStatus::complete);
  const Plan plan = read_plan(dir);
  EXPECT_EQ(plan.blocks, 3);
  EXPECT_EQ(plan.set_aside_blocks, 0);
  expect_counts(plan, "count=16", "count=16");
  EXPECT_EQ(load_results_dir(dir.root()).metrics[0].a.size(), 6u) << "all 3 blocks analysed";
}

TEST_F(SizingTest, AResumedRunReusesTheSizesItRecorded) {
  const ResultsDir dir = start(sized_config(3));
  int boots = 0;
  driver.during_boot = [&] { ++boots; };
  stop = [&] { return boots == 5; };  // Ctrl-C in the third block, after the sized second one
  EXPECT_EQ(run(dir).status, RunStatus::running);
  stop = [] { return false; };
  // Sized again from the first block, this minimum would give x7 (1.4 x 0.5 / 0.1): the journal's x10 holds.
  experiment.schedule.min_run_time = std::chrono::milliseconds(500);
  EXPECT_EQ(run(dir, true).status, RunStatus::complete);
  const Plan plan = read_plan(dir);
  EXPECT_EQ(plan.blocks, 4) << "not extended twice";
  expect_counts(plan, "count=16", "count=160");
  EXPECT_TRUE(notes.has("sizing: dd-write: bs=8M count=160 (x10), as recorded in the journal"));
}

TEST_F(SizingTest, AZeroMinimumRunsAsWritten) {
  const ResultsDir dir = start(sized_config(2, "min_run_time = \"0s\"\n"));
  EXPECT_EQ(run(dir).status, RunStatus::complete);
  expect_counts(read_plan(dir), "count=16", "count=16");
  EXPECT_FALSE(notes.has("sizing:"));
  for (const JournalEntry& e : read_journal(dir.journal())) EXPECT_FALSE(e.sizing_block);
}

// ---- A workload that cannot work (issue 20) ----

// Two workloads: the write of config(), and a read of the scratch disk into /dev/null.
std::string config_with_read(int boots, const std::string& sides, const std::string& schedule = "") {
  return "name = \"runner\"\n[guest]\nkernel = \"k\"\naccelerator = \"tcg\"\n[disk]\nsize = \"16M\"\n" + sides +
         "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nbs = \"8M\"\ncount = 16\nrepetitions = 2\n"
         "[[workload]]\nname = \"dd-read\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/dev/null\"\nrepetitions = 2\n"
         "[schedule]\nboots_per_side = " +
         std::to_string(boots) + "\nseed = 7\n" + schedule;
}
const std::string kKernelSides = "[sides.A]\nlabel = \"base\"\n[sides.B]\nlabel = \"patched\"\ncmdline_append = \"b=1\"\n";
const std::string kDeviceSides =
    "[sides.A]\nlabel = \"base\"\n[sides.B]\nlabel = \"patched\"\ndevice.iommu_platform = true\n";
// What GNU dd says when it is asked for O_DIRECT on /dev/null (the read written the natural way
// before issue 20 got oflag=direct by default).
const std::string kOpenFailed = "dd: failed to open '/dev/null': Invalid argument\n";

class FirstBlockTest : public RunnerTest {
 protected:
  // dd-read exits 1 with dd's message in every run of the sides in `failing`; everything else is ok.
  void fail_reads(std::set<Side> failing) {
    driver.answer = [this, failing](const test::FakeBoot& b) {
      const Side side = b.spec.kernel == "/k/vmlinuz-b" ? Side::b : Side::a;
      return test::FakeAnswer{.console = test::fake_guest_console(
                                  b.trial, b.nonce, experiment.workloads, [&](const std::string& name, int, bool) {
                                    if (name == "dd-read" && failing.contains(side)) return std::pair(1, kOpenFailed);
                                    return std::pair(0, kDdOutput);
                                  })};
    };
  }
  // The same for the emulated agent of designs that pace their runs or measure both sides in one
  // guest (its runs are named "dd-read.A", "dd-read.B"): every read fails.
  void fail_reads_in_the_agent() {
    driver.emulate_agent = true;
    driver.agent_output = kDdOutput;
    driver.run_time = std::chrono::milliseconds(20);
    driver.run_result = [](const std::string&, const std::string& name, int, bool) {
      return name.starts_with("dd-read") ? std::pair(1, kOpenFailed) : std::pair(0, kDdOutput);
    };
  }
  std::string expected_failure(const ResultsDir& dir, const std::string& first_trial, const std::string& output) const {
    return "workload \"dd-read\" failed in every run of the first block on both sides (2 runs on A, 2 on B), so no "
           "block can measure it: " + output + " run 0 exited with status 1: dd: failed to open '/dev/null': Invalid "
           "argument (trials/" + first_trial + "/" + output + "-run0.out). The run stopped after the first block "
           "instead of spending its budget: fix the workload in runner.toml (abvm config show runner.toml prints what "
           "it runs) and start a new run; the first block is kept in " + dir.root().string();
  }
};

// The first block shows it: the run stops there (status failed, the tool's message), keeps that
// block, and a resume says the same again without connecting or booting.
TEST_F(FirstBlockTest, AWorkloadFailingInEveryRunOfTheFirstBlockOnBothSidesEndsTheRunThere) {
  const ResultsDir dir = start(config_with_read(3, kKernelSides));
  fail_reads({Side::a, Side::b});
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::failed);
  const std::string first = read_plan(dir).trials.at(0).id;
  EXPECT_EQ(end.failure, expected_failure(dir, first, "dd-read"));
  EXPECT_EQ(end.trials_done, 2u);
  ASSERT_EQ(driver.boots.size(), 2u) << "the first block only, not the budget of 6 boots";
  EXPECT_EQ(ledger_trials(dir).size(), 2u);
  const auto journal = read_journal(dir.journal());
  ASSERT_EQ(journal.size(), 8u) << "both workloads' runs of the first block, each with its outcome";
  for (const auto& e : journal) {
    EXPECT_EQ(e.block, 0);
    EXPECT_EQ(e.outcome, e.workload == "dd-read" ? Outcome::workload_failed : Outcome::ok) << e.workload;
  }
  EXPECT_EQ(read_file(dir.trial(first).run_output("dd-read", false, 0)), kOpenFailed) << "the tool's output is kept";
  const RunManifest m = read_manifest(dir);
  EXPECT_EQ(m.status, RunStatus::failed);
  EXPECT_EQ(m.failure, end.failure);
  EXPECT_TRUE(m.stop_reason.empty());

  connects = 0;
  driver.boots.clear();
  const RunEnd again = run(dir, true);
  EXPECT_EQ(again.status, RunStatus::failed);
  EXPECT_EQ(again.failure, end.failure);
  EXPECT_EQ(connects, 0);
  EXPECT_TRUE(driver.boots.empty());
}

// A run killed after its first block's ledger lines, before it recorded the failure: its resume finds
// it in the journal before anything boots.
TEST_F(FirstBlockTest, AResumeAfterTheFirstBlockChecksItBeforeAnyBoot) {
  const ResultsDir dir = start(config_with_read(3, kKernelSides));
  fail_reads({Side::a, Side::b});
  const std::string failure = run(dir).failure;
  RunManifest m = read_manifest(dir);
  m.status = RunStatus::running;
  m.failure.clear();
  write_manifest(dir, m);
  driver.boots.clear();
  const RunEnd end = run(dir, true);
  EXPECT_EQ(end.status, RunStatus::failed);
  EXPECT_EQ(end.failure, failure);
  EXPECT_TRUE(driver.boots.empty());
  EXPECT_EQ(read_manifest(dir).status, RunStatus::failed);
}

// A workload failing on one side only is a finding: the whole plan runs.
TEST_F(FirstBlockTest, AWorkloadFailingOnOneSideOnlyRunsTheWholePlan) {
  const ResultsDir dir = start(config_with_read(3, kKernelSides));
  fail_reads({Side::b});
  const RunEnd end = run(dir);
  EXPECT_EQ(end.status, RunStatus::complete);
  EXPECT_TRUE(end.failure.empty());
  EXPECT_EQ(driver.boots.size(), 6u);
}

// The rule reads the journal, whatever design ran the block: two guests at once, paced, and one guest
// measuring both sides (one trial per block).
TEST_F(FirstBlockTest, TheFirstBlockStopsTheRunInEveryDesign) {
  for (const std::string design : {"co-scheduled", "same-guest"}) {
    SCOPED_TRACE(design);
    driver.boots.clear();
    const ResultsDir dir = start(config_with_read(3, kDeviceSides, "design = \"" + design + "\"\n"));
    fail_reads_in_the_agent();
    const RunEnd end = run(dir);
    EXPECT_EQ(end.status, RunStatus::failed);
    const bool one_guest = design == "same-guest";
    EXPECT_EQ(driver.boots.size(), one_guest ? 1u : 2u);
    const auto journal = read_journal(dir.journal());
    const JournalEntry* first = nullptr;
    for (const auto& e : journal) {
      if (e.workload == "dd-read" && (first == nullptr || e.order < first->order)) first = &e;
    }
    ASSERT_NE(first, nullptr);
    const std::string name = one_guest ? "dd-read." + std::string(to_string(first->side)) : "dd-read";
    EXPECT_EQ(end.failure, expected_failure(dir, first->trial, name));
    fs::remove_all(dir.root());
  }
}

TEST_F(RunnerTest, ASecondRunnerOnTheSameDirectoryIsRefusedBeforeItConnects) {
  const ResultsDir dir = start(config(2));
  std::string refused;
  driver.during_boot = [&] {
    if (!refused.empty()) return;
    test::FakeDriver other("other");
    PreparedFiles other_preparer;
    other_preparer.dir = root;
    Notes other_notes;
    bool connected = false;
    Runner second(experiment, dir,
                  {.connect = [&] {
                     connected = true;
                     return std::vector<HostDriver>{{.name = "", .driver = &other}};
                   },
                   .preparer = other_preparer,
                   .observer = other_notes,
                   .decide = {},
                   .stop_requested = [] { return false; }});
    try {
      second.run({.resuming = true});
      refused = "not refused";
    } catch (const Error& ex) {
      refused = ex.what();
    }
    EXPECT_FALSE(connected);
    EXPECT_EQ(other_preparer.calls, 0);
  };
  run(dir);
  EXPECT_NE(refused.find("another abvm run is using this results directory"), std::string::npos) << refused;
}

TEST_F(RunnerTest, AFinishedRunReturnsAtOnceWithoutConnecting) {
  const ResultsDir dir = start(config(2));
  run(dir);
  connects = 0;
  driver.boots.clear();
  const RunEnd end = run(dir, true);
  EXPECT_EQ(end.status, RunStatus::complete);
  EXPECT_EQ(connects, 0);
  EXPECT_EQ(preparer.calls, 1);
  EXPECT_TRUE(driver.boots.empty());
}

TEST_F(RunnerTest, AutoAcceleratorIsProbedThroughTheDriverWithSideAsKernel) {
  forget_accelerator_probes();
  const ResultsDir dir = start(config(2, "", "auto"));
  run(dir);
  ASSERT_EQ(driver.boots.size(), 5u) << "the probe, then two boots per side";
  EXPECT_EQ(driver.boots[0].trial, "probe");
  EXPECT_EQ(driver.boots[0].spec.accelerator, Accelerator::kvm);
  EXPECT_EQ(driver.boots[0].spec.kernel, "/k/vmlinuz-a");
  EXPECT_EQ(driver.boots[1].spec.accelerator, Accelerator::kvm) << "the probe printed its marker: KVM works";
  const auto env = nlohmann::json::parse(read_file(dir.environment()));
  EXPECT_EQ(env.at("accelerator"), "kvm");
  forget_accelerator_probes();
}

// A CPU set the host does not have is refused before any guest boots, naming the set and the host.
TEST_F(RunnerTest, ACpuSetTheHostLacksIsAnErrorBeforeAnyBoot) {
  driver.cpus = 2;
  const ResultsDir dir = start(config(2, "cpu_sets = [\"0\", \"1-2\"]\n"));
  try {
    run(dir);
    ADD_FAILURE() << "a run on CPU 2 of a 2-CPU host started";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "schedule.cpu_sets: \"1-2\" names CPU 2, but host fake:///runner-host has 2 CPUs (0-1): "
                           "give CPU sets within 0-1 on every host, or leave cpu_sets out");
  }
  EXPECT_TRUE(driver.boots.empty());
  driver.cpus = 3;
  EXPECT_EQ(run(dir).status, RunStatus::complete);
}

TEST_F(RunnerTest, AnInfraErrorMidRunSaysWhatIsKeptAndHowToResume) {
  const ResultsDir dir = start(config(2));
  int boots = 0;
  driver.during_boot = [&] {
    if (++boots == 2) throw InfraError("the connection to libvirt was lost");
  };
  try {
    run(dir);
    FAIL() << "no InfraError";
  } catch (const InfraError& ex) {
    const std::string m = ex.what();
    EXPECT_NE(m.find("the connection to libvirt was lost; the running guest was destroyed and the finished trials "
                     "are kept in " + dir.root().string()), std::string::npos) << m;
    EXPECT_NE(m.find("continue with: abvm run --resume " + dir.root().string()), std::string::npos) << m;
  }
  EXPECT_EQ(ledger_trials(dir).size(), 1u);
  EXPECT_EQ(read_manifest(dir).status, RunStatus::running);
}

}  // namespace
}  // namespace abvm
