// Faults in the guest, provoked for real (issue 6): the real `abvm run` binary boots real guests
// (Debian cloud kernel, the real guest image, TCG here) whose job or kernel command line makes
// them panic mid-workload, hang, fail a tool, print garbage or forged records, stop in the
// middle of a record, or never power off. Each fault must become a recorded trial outcome with
// its console log kept in trials/<id>/console.log, the experiment must go on to its end, and the
// analysis must use only valid runs and count the failed ones per side.
//
// How the faults are injected:
//  - panic, hang, non-zero exit: what a user can hit with an ordinary experiment file (a fio
//    exec_prerun command that crashes the kernel through /proc/sysrq-trigger, selected on side B
//    by a word in sides.B.cmdline_append; a time-based fio run far longer than run_timeout; dd
//    with a flag it does not know; fio with an option it does not know);
//  - garbage, forged and truncated records, no power-off: the agent's test-only switch
//    `abvm.test_fault=<fault>` on the kernel command line (guests/agent/init.sh, header).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// The parts every experiment here shares: the real kernel and image, a small scratch disk.
std::string experiment(const std::string& name, const std::string& sides, const std::string& workloads,
                       const std::string& schedule) {
  return "name = \"" + name + "\"\n" +
         "description = \"guest fault end-to-end test\"\n\n"
         "[guest]\nkernel = \"debian-cloud\"\naccelerator = \"tcg\"\n\n"
         "[disk]\nsize = \"64M\"\n\n" +
         sides + "\n" + workloads + "\n[schedule]\nmin_run_time = \"0s\"\nseed = 11\n" + schedule;
}

const char* kDdWrite = R"([[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 4
oflag = ["direct"]
repetitions = 1
)";

// One line of journal.jsonl, read here as plain JSON: this binary links the run stage, which comes
// before samples/ (whose strict reader the other tests cover).
struct JournalLine {
  std::string trial, side, workload, outcome, detail;
  std::size_t metrics = 0;
};

std::vector<JournalLine> read_journal_lines(const fs::path& file) {
  std::vector<JournalLine> out;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) {
    const auto j = json::parse(line);
    out.push_back({.trial = j.at("trial"), .side = j.at("side"), .workload = j.at("workload"),
                   .outcome = j.at("outcome"), .detail = j.value("detail", ""), .metrics = j.at("metrics").size()});
  }
  return out;
}

struct TrialFiles {
  std::string id;
  std::string side;
  json result;
  std::string console;
};

class GuestFaultsE2ETest : public ::testing::Test {
 protected:
  fs::path dir;
  fs::path results;

  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
    dir = fs::temp_directory_path() /
          ("abvm-guest-faults-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    results = dir / "results";
  }
  void TearDown() override {
    if (!dir.empty() && !HasFailure()) fs::remove_all(dir);
  }

  // Runs the experiment to its end; returns the process result and sets `d` to its results dir.
  ProcessResult run(const std::string& config_text, fs::path& d, double& wall_seconds) {
    const fs::path config = dir / "experiment.toml";
    write_file_atomic(config, config_text);
    const auto t0 = std::chrono::steady_clock::now();
    ProcessResult r = run_process({ABVM_BINARY, "run", "--results-dir", results.string(), config.string()},
                                  {.timeout = std::chrono::minutes(9)});
    wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<fs::path> found;
    if (fs::exists(results)) {
      for (const auto& e : fs::directory_iterator(results)) found.push_back(e.path());
    }
    EXPECT_EQ(found.size(), 1u) << r.err;
    d = found.empty() ? fs::path() : found[0];
    return r;
  }

  // The experiment finished: an analysis, one ledger line per planned trial, no guest left.
  static void expect_finished(const ProcessResult& r, const fs::path& d, std::size_t trials) {
    // A verdict's exit code (0, 1 or 4), never a user (2) or infrastructure (3) error.
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
    EXPECT_TRUE(fs::exists(d / "analysis.json"));
    EXPECT_TRUE(fs::exists(d / "summary.txt"));
    const std::string ledger = fs::exists(d / "trials.jsonl") ? read_file(d / "trials.jsonl") : "";
    EXPECT_EQ(static_cast<std::size_t>(std::count(ledger.begin(), ledger.end(), '\n')), trials) << ledger;
    EXPECT_EQ(json::parse(read_file(d / "run.json")).at("status"), "complete");
    EXPECT_EQ(qemu_processes_using(d), 0) << "a guest of this run is still running";
  }

  // QEMU processes whose command line names a path under `d` (each trial's console log is there).
  static int qemu_processes_using(const fs::path& d) {
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string pid = e.path().filename().string();
      if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
      std::string cmdline;
      try {
        cmdline = read_file(e.path() / "cmdline");
      } catch (const std::exception&) {
        continue;  // ended meanwhile
      }
      if (cmdline.find("qemu-system") != std::string::npos && cmdline.find(d.string()) != std::string::npos) ++n;
    }
    return n;
  }

  // Every trial's result.json and console.log, in plan order.
  static std::vector<TrialFiles> trial_files(const fs::path& d) {
    std::vector<TrialFiles> out;
    const auto plan = json::parse(read_file(d / "plan.json"));
    for (const auto& t : plan.at("trials")) {
      const std::string id = t.at("id");
      const fs::path td = d / "trials" / id;
      TrialFiles f{.id = id, .side = t.at("side")};
      EXPECT_TRUE(fs::exists(td / "result.json")) << td;
      EXPECT_TRUE(fs::exists(td / "console.log")) << "the console is kept for every trial, failed or not: " << td;
      if (fs::exists(td / "result.json")) f.result = json::parse(read_file(td / "result.json"));
      if (fs::exists(td / "console.log")) f.console = read_file(td / "console.log");
      out.push_back(std::move(f));
    }
    return out;
  }

  static std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  }
};

bool has_warning(const json& analysis, const std::string& text) {
  for (const auto& w : analysis.at("warnings")) {
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

// 1. A kernel panic in the middle of a workload, on side B only: fio's exec_prerun crashes the
// kernel through sysrq when the command line carries B's marker word. B's trials are "panic"
// with the console kept, A's trials still measure, and a side that fails this much more often
// is reported as a finding by the run's analysis and by `abvm analyze`.
TEST_F(GuestFaultsE2ETest, PanicMidWorkloadOnSideBIsRecordedAndReportedAsAFinding) {
  const std::string config = experiment(
      "panic",
      "[sides.A]\nlabel = \"clean\"\n\n[sides.B]\nlabel = \"panics\"\ncmdline_append = \"abvm_fault_panic\"\n",
      std::string(kDdWrite) + R"(
[[workload]]
name = "fio-panic"
type = "fio"
rw = "write"
bs = "1M"
size = "4M"
ioengine = "psync"
repetitions = 1
options = { exec_prerun = "sh -c 'if grep -q abvm_fault_panic /proc/cmdline; then echo c > /proc/sysrq-trigger; fi'" }
)",
      "boots_per_side = 2\nboot_timeout = \"60s\"\nrun_timeout = \"60s\"\n");
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);

  for (const auto& t : trial_files(d)) {
    if (t.side == "A") {
      EXPECT_EQ(t.result.at("outcome"), "ok") << t.id << ": " << t.result.dump();
      continue;
    }
    EXPECT_EQ(t.result.at("outcome"), "panic") << t.id << ": " << t.result.dump();
    EXPECT_NE(t.result.at("detail").get<std::string>().find("Kernel panic"), std::string::npos) << t.result.dump();
    // panic=-1 reboots at once and the reboot ends the domain: no waiting for the 3 min timeout.
    EXPECT_LT(t.result.at("seconds").get<double>(), 90.0) << t.id;
    EXPECT_NE(t.console.find("Kernel panic - not syncing"), std::string::npos) << t.console;
    EXPECT_NE(t.console.find("sysrq"), std::string::npos) << t.console;
    // In the middle of the workloads: dd-write ran and ended, fio started, nothing ended after.
    EXPECT_EQ(count(t.console, ":RUN:dd-write,"), 1u) << t.console;
    EXPECT_EQ(count(t.console, ":RUNEND:dd-write,0,0,"), 1u) << t.console;
    EXPECT_EQ(count(t.console, ":RUN:fio-panic,"), 1u) << t.console;
    EXPECT_EQ(count(t.console, ":RUNEND:fio-panic,"), 0u) << t.console;
    EXPECT_EQ(count(t.console, ":END:"), 0u) << t.console;
    for (const auto& run : t.result.at("runs")) EXPECT_EQ(run.at("outcome"), "panic") << run.dump();
  }

  // Only A's runs are samples; B's are failures without metrics.
  std::map<std::string, int> ok, failed;
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    const std::string side = e.side;
    if (e.outcome == "ok") {
      ++ok[side];
      EXPECT_FALSE((e.metrics == 0));
    } else {
      ++failed[side];
      EXPECT_EQ(e.outcome, "panic") << e.detail;
      EXPECT_TRUE((e.metrics == 0));
    }
  }
  EXPECT_EQ(ok["A"], 4);
  EXPECT_EQ(ok["B"], 0);
  EXPECT_EQ(failed["A"], 0);
  EXPECT_EQ(failed["B"], 4);

  const auto analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis.at("failed_runs").at("a"), 0);
  EXPECT_EQ(analysis.at("failed_runs").at("b"), 4);
  ASSERT_EQ(analysis.at("failures").size(), 4u);
  for (const auto& f : analysis.at("failures")) {
    EXPECT_EQ(f.at("side"), "B");
    EXPECT_EQ(f.at("outcome"), "panic");
  }
  EXPECT_TRUE(has_warning(analysis, "Side B fails much more often than side A")) << analysis.at("warnings").dump();

  const auto analyze = run_process({ABVM_BINARY, "analyze", d.string()}, {.timeout = std::chrono::minutes(2)});
  EXPECT_NE(analyze.exit_code, 2) << analyze.err;
  EXPECT_NE(analyze.exit_code, 3) << analyze.err;
  EXPECT_NE((analyze.out + analyze.err).find("Side B fails much more often than side A"), std::string::npos)
      << analyze.out << analyze.err;
  EXPECT_NE((analyze.out + analyze.err).find("0 run(s) failed on side A and 4 on side B"), std::string::npos)
      << analyze.out << analyze.err;
}

// 2. A workload that never ends, on side B only (fio's exec_prerun sleeps for a day when B's marker
// word is on the command line): each B trial ends at the trial timeout (boot_timeout + run_timeout
// per run) with the guest destroyed, and the next trial runs and measures as usual.
TEST_F(GuestFaultsE2ETest, HangingWorkloadTimesOutAndTheNextTrialRuns) {
  const std::string config = experiment(
      "hang",
      "[sides.A]\nlabel = \"a\"\n\n[sides.B]\nlabel = \"hangs\"\ncmdline_append = \"abvm_fault_hang\"\n",
      R"([[workload]]
name = "fio-write"
type = "fio"
rw = "write"
bs = "1M"
size = "4M"
ioengine = "psync"
repetitions = 1
options = { exec_prerun = "sh -c 'if grep -q abvm_fault_hang /proc/cmdline; then sleep 100000; fi'" }
)",
      "boots_per_side = 2\nboot_timeout = \"40s\"\nrun_timeout = \"10s\"\n");
  constexpr double kTrialTimeout = 40 + 10;
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  const auto trials = trial_files(d);
  ASSERT_EQ(trials.size(), 4u);
  for (const auto& t : trials) {
    if (t.side == "A") {
      // Every A trial follows a B trial that hung (interleaved order): the run went on.
      EXPECT_EQ(t.result.at("outcome"), "ok") << t.id << ": " << t.result.dump();
      continue;
    }
    EXPECT_EQ(t.result.at("outcome"), "timeout") << t.id << ": " << t.result.dump();
    const double s = t.result.at("seconds").get<double>();
    EXPECT_GE(s, kTrialTimeout) << t.id;
    EXPECT_LT(s, kTrialTimeout + 10) << t.id << ": the guest must be destroyed at the timeout";
    const std::string detail = t.result.at("detail");
    EXPECT_NE(detail.find("no end record after"), std::string::npos) << detail;
    EXPECT_NE(detail.find("the guest was destroyed"), std::string::npos) << detail;
    // The console shows where it hung: fio started and never ended.
    EXPECT_EQ(count(t.console, ":RUN:fio-write,"), 1u) << t.console;
    EXPECT_EQ(count(t.console, ":RUNEND:"), 0u) << t.console;
  }
  EXPECT_GE(wall, 2 * kTrialTimeout);
  std::map<std::string, int> ok, timed_out;
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    if (e.outcome == "ok") ++ok[e.side];
    if (e.outcome == "timeout") {
      ++timed_out[e.side];
      EXPECT_TRUE((e.metrics == 0));
    }
  }
  EXPECT_EQ(ok["A"], 2);
  EXPECT_EQ(timed_out["B"], 2);
  EXPECT_EQ(timed_out["A"], 0);
  const auto analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis.at("failed_runs").at("a"), 0);
  EXPECT_EQ(analysis.at("failed_runs").at("b"), 2);
}

// 3. Tools that exit non-zero (dd with an unknown flag, fio with an unknown option) in every run of
// the first block on both sides (issue 20): those runs are workload-failed, the other workloads of
// the same boots still run and are measured (a read of the scratch disk into /dev/null among them,
// written the natural way: if = "@scratch", of = "/dev/null", iflag = ["direct"]), the agent reaches
// its end record at once (no timeout), and the run stops after the first block instead of spending
// its budget: exit 3, with dd's own message, the analysis inconclusive naming the two workloads that
// have no data, run.json "failed"; a resume says the same again and boots nothing.
TEST_F(GuestFaultsE2ETest, AWorkloadFailingInEveryRunOfTheFirstBlockStopsTheRunWithExit3AndTheToolsMessage) {
  const std::string config = experiment("nonzero",
                                        "[sides.A]\nlabel = \"a\"\n\n[sides.B]\nlabel = \"b\"\n"
                                        "cmdline_append = \"abvm_side_b\"\n",
                                        R"([[workload]]
name = "dd-badflag"
type = "dd"
bs = "1M"
count = 4
iflag = ["no-such-flag"]
repetitions = 1

[[workload]]
name = "dd-read"
type = "dd"
if = "@scratch"
of = "/dev/null"
iflag = ["direct"]
bs = "1M"
count = 4
repetitions = 1
)" + std::string("\n") + kDdWrite + R"(
[[workload]]
name = "fio-badoption"
type = "fio"
rw = "write"
bs = "1M"
size = "4M"
ioengine = "psync"
repetitions = 1
options = { no_such_fio_option = "1" }
)",
                                        // Off host CPU 0, where this machine's other guests run.
                                        "boots_per_side = 3\nboot_timeout = \"60s\"\nrun_timeout = \"60s\"\n"
                                        "cpu_sets = [\"1\"]\n");
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The error names the workload, quotes dd and says what to do; it is the last thing said.
  // dd names itself by the path the agent ran it by (/usr/bin/dd in this image).
  const std::string error = "abvm: error: workload \"dd-badflag\" failed in every run of the first block on both sides "
                            "(1 run on A, 1 on B), so no block can measure it: dd-badflag run 0 exited with status 1: ";
  const std::string dd_said = "dd: invalid input flag: 'no-such-flag' (trials/";
  ASSERT_NE(r.err.find(error), std::string::npos) << r.err;
  const std::size_t said = r.err.find(dd_said, r.err.find(error));
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_LT(said - r.err.find(error) - error.size(), 20u) << "dd's words follow the status: " << r.err;
  EXPECT_NE(r.err.find("start a new run; the first block is kept in " + d.string() + "\n"), std::string::npos) << r.err;
  EXPECT_TRUE(r.err.ends_with("\n")) << r.err;
  EXPECT_EQ(r.err.find("abvm: error:"), r.err.rfind("abvm: error:")) << r.err;
  const std::string ledger = read_file(d / "trials.jsonl");
  EXPECT_EQ(std::count(ledger.begin(), ledger.end(), '\n'), 2) << "the first block only, of 3: " << ledger;
  const auto manifest = json::parse(read_file(d / "run.json"));
  EXPECT_EQ(manifest.at("status"), "failed");
  EXPECT_NE(manifest.at("failure").get<std::string>().find("workload \"dd-badflag\""), std::string::npos);
  EXPECT_EQ(qemu_processes_using(d), 0) << "a guest of this run is still running";

  // The trials that ran (the ledger's): the blocks after the first never did.
  std::vector<TrialFiles> trials;
  std::istringstream lines(ledger);
  for (std::string line; std::getline(lines, line);) {
    const std::string id = json::parse(line).at("trial");
    trials.push_back({.id = id, .result = json::parse(read_file(d / "trials" / id / "result.json")),
                      .console = read_file(d / "trials" / id / "console.log")});
  }
  std::size_t ran = 0;
  for (const auto& t : trials) {
    ++ran;
    EXPECT_EQ(t.result.at("outcome"), "workload-failed") << t.id << ": " << t.result.dump();
    const std::string detail = t.result.at("detail");
    EXPECT_TRUE(detail.starts_with("dd-badflag run 0 exited with status 1: ")) << detail;
    EXPECT_TRUE(detail.ends_with("dd: invalid input flag: 'no-such-flag'")) << detail;
    // Far below the trial timeout of 60 + 4 x 60 s: the end record ended the trial.
    EXPECT_LT(t.result.at("seconds").get<double>(), 120.0) << t.id;
    EXPECT_EQ(count(t.console, ":END:"), 1u) << t.console;
    std::map<std::string, json> runs;
    for (const auto& run : t.result.at("runs")) runs[run.at("workload")] = run;
    ASSERT_EQ(runs.size(), 4u) << t.result.dump();
    EXPECT_EQ(runs["dd-badflag"].at("outcome"), "workload-failed");
    EXPECT_NE(runs["dd-badflag"].at("exit_status"), 0);
    EXPECT_EQ(runs["dd-read"].at("outcome"), "ok") << runs["dd-read"].dump();
    EXPECT_EQ(runs["dd-write"].at("outcome"), "ok");
    EXPECT_EQ(runs["fio-badoption"].at("outcome"), "workload-failed");
    EXPECT_NE(runs["fio-badoption"].at("exit_status"), 0);
    // The tools' own complaints are kept next to the console.
    const fs::path td = d / "trials" / t.id;
    EXPECT_NE(read_file(td / "dd-badflag-run0.out").find("no-such-flag"), std::string::npos);
    EXPECT_NE(read_file(td / "fio-badoption-run0.out").find("no_such_fio_option"), std::string::npos);
    // The read ran (O_DIRECT on the disk, nothing on /dev/null) and dd reported its 4 MiB.
    EXPECT_NE(read_file(td / "dd-read-run0.out").find("4194304 bytes"), std::string::npos)
        << read_file(td / "dd-read-run0.out");
  }
  EXPECT_EQ(ran, 2u);
  std::map<std::string, std::string> outcome_of;
  std::map<std::string, std::size_t> metrics_of;
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    outcome_of[e.side + "/" + e.workload] = e.outcome;
    metrics_of[e.side + "/" + e.workload] = e.metrics;
    EXPECT_EQ((e.metrics == 0), e.outcome != "ok") << e.workload;
  }
  EXPECT_EQ(outcome_of["A/dd-write"], "ok");
  EXPECT_EQ(outcome_of["B/dd-read"], "ok");
  EXPECT_EQ(outcome_of["A/dd-read"], "ok");
  EXPECT_GT(metrics_of["A/dd-read"], 0u) << "the read gives samples";
  EXPECT_EQ(outcome_of["A/dd-badflag"], "workload-failed");
  EXPECT_EQ(outcome_of["B/fio-badoption"], "workload-failed");
  // The analysis of what the first block measured: inconclusive, naming the workloads without data.
  const auto analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis.at("verdict"), "inconclusive");
  EXPECT_EQ(analysis.at("failed_runs").at("a"), 2);
  EXPECT_EQ(analysis.at("failed_runs").at("b"), 2);
  std::vector<std::string> missing;
  for (const auto& m : analysis.at("missing")) missing.push_back(m.at("workload"));
  EXPECT_EQ(missing, (std::vector<std::string>{"dd-badflag", "fio-badoption"}));
  EXPECT_TRUE(has_warning(analysis, "Workload dd-badflag has no valid run on either side"));
  std::vector<std::string> metrics;
  for (const auto& m : analysis.at("metrics")) metrics.push_back(m.at("name"));
  // Each working dd's bandwidth, and its cost per GiB as the guest and the host saw it (issue 27).
  EXPECT_EQ(metrics, (std::vector<std::string>{"dd-read.bandwidth", "dd-read.guest_cpu_per_gib",
                                               "dd-read.host_cpu_per_gib", "dd-write.bandwidth",
                                               "dd-write.guest_cpu_per_gib", "dd-write.host_cpu_per_gib"}));

  // A resume says the same again, boots nothing, and a CI job's JUnit fails the broken workloads.
  const fs::path junit = dir / "junit.xml";
  const auto again = run_process({ABVM_BINARY, "run", "--resume", d.string(), "--junit", junit.string()},
                                 {.timeout = std::chrono::minutes(2)});
  EXPECT_EQ(again.exit_code, 3) << again.err;
  EXPECT_NE(again.err.find(error), std::string::npos) << again.err;
  EXPECT_EQ(read_file(d / "trials.jsonl"), ledger);
  const std::string x = read_file(junit);
  EXPECT_NE(x.find("name=\"dd-badflag\" time=\"0\">\n      <failure type=\"no-data\""), std::string::npos) << x;
  EXPECT_NE(x.find("name=\"fio-badoption\" time=\"0\">\n      <failure type=\"no-data\""), std::string::npos) << x;
}

// 4. A guest that prints garbage and a record with a wrong checksum (A), or forged records of
// another trial with a fake run (B): the records cannot be trusted, the trial is invalid-output,
// and no sample comes from it (least of all the forged run's 84 GB/s).
TEST_F(GuestFaultsE2ETest, GarbageAndForgedRecordsAreInvalidOutputAndNeverSamples) {
  const std::string config = experiment("forged",
                                        "[sides.A]\nlabel = \"garbage\"\ncmdline_append = \"abvm.test_fault=garbage\"\n\n"
                                        "[sides.B]\nlabel = \"forge\"\ncmdline_append = \"abvm.test_fault=forge\"\n",
                                        kDdWrite, "boots_per_side = 2\nboot_timeout = \"60s\"\nrun_timeout = \"60s\"\n");
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  for (const auto& t : trial_files(d)) {
    EXPECT_EQ(t.result.at("outcome"), "invalid-output") << t.id << ": " << t.result.dump();
    const std::string detail = t.result.at("detail");
    const std::string problems = t.result.at("guest").at("problems").dump();
    if (t.side == "A") {
      EXPECT_NE(detail.find("bad checksum"), std::string::npos) << detail;
      // The noise itself (no record marker in it) is skipped, not reported.
      EXPECT_EQ(problems.find("malformed"), std::string::npos) << problems;
      EXPECT_EQ(t.result.at("guest").at("problems").size(), 1u) << problems;
    } else {
      EXPECT_NE(detail.find("foreign nonce"), std::string::npos) << detail;
      // Five forged records (BEGIN, RUN, OUT, RUNEND, END), each refused.
      EXPECT_EQ(count(problems, "foreign nonce"), 5u) << problems;
      EXPECT_NE(t.console.find("ABVM2:forged"), std::string::npos) << "the forged records are in the kept console";
    }
    // The real run happened and is kept as raw output, but it is not a sample.
    EXPECT_TRUE(fs::exists(d / "trials" / t.id / "dd-write-run0.out"));
    EXPECT_LT(t.result.at("seconds").get<double>(), 90.0) << t.id;
  }
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    EXPECT_EQ(e.outcome, "invalid-output") << e.detail;
    EXPECT_TRUE((e.metrics == 0));
  }
  const auto analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis.at("failed_runs").at("a"), 2);
  EXPECT_EQ(analysis.at("failed_runs").at("b"), 2);
}

// 5. A guest that stops in the middle of a record and powers off (B): invalid-output at once. A
// guest that never powers off after its end record (A): abvm ends the trial when the end record
// arrives and destroys the guest, long before the 3 min trial timeout, and its runs are samples.
TEST_F(GuestFaultsE2ETest, TruncatedRecordsAreInvalidAndNoPowerOffEndsAtTheEndRecord) {
  const std::string config = experiment(
      "nopoweroff",
      "[sides.A]\nlabel = \"nopoweroff\"\ncmdline_append = \"abvm.test_fault=nopoweroff\"\n\n"
      "[sides.B]\nlabel = \"truncate\"\ncmdline_append = \"abvm.test_fault=truncate\"\n",
      kDdWrite, "boots_per_side = 2\nboot_timeout = \"60s\"\nrun_timeout = \"120s\"\n");
  constexpr double kTrialTimeout = 60 + 120;
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  for (const auto& t : trial_files(d)) {
    const double s = t.result.at("seconds").get<double>();
    if (t.side == "A") {
      EXPECT_EQ(t.result.at("outcome"), "ok") << t.result.dump();
      EXPECT_EQ(count(t.console, ":END:"), 1u) << t.console;
      EXPECT_LT(s, kTrialTimeout / 3) << "abvm waited for a power-off that never comes";
    } else {
      EXPECT_EQ(t.result.at("outcome"), "invalid-output") << t.result.dump();
      const std::string detail = t.result.at("detail");
      EXPECT_NE(detail.find("truncated or malformed record"), std::string::npos) << detail;
      EXPECT_NE(detail.find("no end record"), std::string::npos) << detail;
      EXPECT_LT(s, kTrialTimeout / 3) << "the guest powered off: no reason to wait for the timeout";
    }
  }
  // Had abvm waited for the power-off, the two A trials alone would take two trial timeouts.
  EXPECT_LT(wall, 2 * kTrialTimeout);
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    EXPECT_EQ(e.outcome, e.side == "A" ? std::string("ok") : std::string("invalid-output")) << e.trial << ": " << e.detail;
    EXPECT_EQ((e.metrics == 0), e.side == "B") << e.trial;
  }
  const auto analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis.at("failed_runs").at("a"), 0);
  EXPECT_EQ(analysis.at("failed_runs").at("b"), 2);
}

// 6. A guest that floods its console with one endless line of nested record markers (B, issue
// 11): abvm stops it as soon as the console passes schedule.console_limit, well before the
// trial timeout; the trial is invalid-output, console.log keeps the head (its records) and the
// tail (the flood) with a line between them, and the next trial runs as usual.
TEST_F(GuestFaultsE2ETest, ConsoleFloodIsStoppedAtTheLimitAndTheNextTrialRuns) {
  const std::string config = experiment(
      "flood", "[sides.A]\nlabel = \"quiet\"\n\n[sides.B]\nlabel = \"flood\"\ncmdline_append = \"abvm.test_fault=flood\"\n",
      kDdWrite, "boots_per_side = 2\nboot_timeout = \"120s\"\nrun_timeout = \"120s\"\nconsole_limit = \"1M\"\n");
  constexpr double kTrialTimeout = 120 + 120;
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  for (const auto& t : trial_files(d)) {
    if (t.side == "A") {
      EXPECT_EQ(t.result.at("outcome"), "ok") << t.result.dump();
      continue;
    }
    EXPECT_EQ(t.result.at("outcome"), "invalid-output") << t.result.dump();
    const std::string detail = t.result.at("detail");
    EXPECT_TRUE(detail.starts_with("the console exceeded its limit: the guest printed ")) << detail;
    EXPECT_NE(detail.find("more than schedule.console_limit = 1048576"), std::string::npos) << detail;
    EXPECT_LT(t.result.at("seconds").get<double>(), kTrialTimeout / 2) << "the flood was not stopped at the limit";
    EXPECT_LE(t.console.size(), (1u << 20) + 300);
    EXPECT_NE(t.console.find(":0:BEGIN:"), std::string::npos) << "the head (the agent's first records) is kept";
    EXPECT_NE(t.console.find(" console bytes left out here: the guest printed "), std::string::npos);
    EXPECT_TRUE(t.console.ends_with(":ABVM2:") || t.console.find("ABVM2:", t.console.size() - 100) != std::string::npos)
        << "the tail (the flood) is kept";
  }
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// 7. A side that is not what the experiment asks (issue 11 item 2): side B's guest reports another
// kernel build than the one its side boots (the agent's foreign-build fault). Every B trial is a
// mismatch, never a sample; A's trials are checked too and pass; the facts of both sides reach the
// journal, analysis.json and the report; and the verdict says loudly that the sides are wrong.
TEST_F(GuestFaultsE2ETest, AGuestThatIsNotItsSideIsAMismatchAndTheVerdictSaysSo) {
  const std::string config = experiment("mismatch",
                                        "[sides.A]\nlabel = \"plain\"\n\n"
                                        "[sides.B]\nlabel = \"alien\"\ncmdline_append = \"abvm.test_fault=foreign-build\"\n",
                                        kDdWrite, "boots_per_side = 2\nboot_timeout = \"60s\"\nrun_timeout = \"60s\"\n");
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  const json kernels = json::parse(read_file(d / "kernels.json"));
  const std::string version = kernels.at("A").at("identity").at("version");
  for (const auto& t : trial_files(d)) {
    if (t.side == "A") {
      EXPECT_EQ(t.result.at("outcome"), "ok") << t.result.dump();
      EXPECT_TRUE(version.ends_with(" " + t.result.at("guest").at("kernel_version").get<std::string>()));
    } else {
      EXPECT_EQ(t.result.at("outcome"), "mismatch") << t.result.dump();
      EXPECT_EQ(t.result.at("detail"), "side B booted something else: kernel build is '#1 SMP foreign-build', not "
                                       "the side's '" + version + "'");
    }
  }
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    EXPECT_EQ(e.outcome, e.side == "A" ? "ok" : "mismatch") << e.detail;
    if (e.side == "B") {
      EXPECT_EQ(e.metrics, 0u);
    }
  }
  const auto analysis = json::parse(read_file(d / "analysis.json"));
  ASSERT_FALSE(analysis.at("warnings").empty());
  EXPECT_TRUE(analysis.at("warnings")[0].get<std::string>().starts_with("THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS"));
  const json& facts_a = analysis.at("context").at("a").at("facts");
  const json& facts_b = analysis.at("context").at("b").at("facts");
  EXPECT_EQ(facts_b.at("kernel_version").at("#1 SMP foreign-build"), 2);
  EXPECT_EQ(facts_a.at("virtio_f_access_platform").at("not negotiated"), 2);
  EXPECT_EQ(facts_a.at("dma_api_in_use").at("not reported"), 2);
  const std::string summary = read_file(d / "summary.txt");
  EXPECT_NE(summary.find("(BUT THE SIDES ARE NOT WHAT THE EXPERIMENT ASKS"), std::string::npos) << summary;
  const std::string html = read_file(d / "report.html");
  EXPECT_NE(html.find("side A negotiated it in 0/2 boots; side B in 0/2 boots"), std::string::npos);
  EXPECT_NE(html.find("#1 SMP foreign-build (2 boots)"), std::string::npos);
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// 8. A paced block (co-scheduled) whose guest hangs in the middle of its window (B, the agent's
// test switch hang-window: it hears the go and never measures): the block gives B up at the run
// timeout after the go, as a timeout saying why, tells A to abort, and A ends partner-failed (its
// run has no partner measured with it). The block is void and runs again whole (infra_retries 1),
// the void attempt's consoles kept; nothing hangs and no guest is left running.
TEST_F(GuestFaultsE2ETest, APacedGuestThatHangsInItsWindowFailsItsBlockAndItsPartnerIsNotKeptWaiting) {
  const std::string config = experiment(
      "hang-window",
      "[sides.A]\nlabel = \"healthy\"\n\n[sides.B]\nlabel = \"hangs\"\ncmdline_append = \"abvm.test_fault=hang-window\"\n",
      kDdWrite, "boots_per_side = 2\ndesign = \"co-scheduled\"\nboot_timeout = \"60s\"\nrun_timeout = \"10s\"\n");
  fs::path d;
  double wall = 0;
  const auto r = run(config, d, wall);
  ASSERT_FALSE(d.empty());
  expect_finished(r, d, 4);
  // 2 blocks x 2 attempts, each about a boot and the 10 s deadline.
  EXPECT_LT(wall, 180) << "a hung guest kept its block waiting";
  for (const auto& t : trial_files(d)) {
    const std::string detail = t.result.at("detail");
    const std::string outcome = t.result.at("outcome");
    if (t.side == "B") {
      EXPECT_EQ(outcome, "timeout") << t.result.dump();
      EXPECT_NE(detail.find("did not end step 0 within 10 s of the go (it hung, or the go was lost)"), std::string::npos)
          << detail;
    } else {
      EXPECT_EQ(outcome, "partner-failed") << t.result.dump();
      EXPECT_NE(detail.find("ended timeout: did not end step 0"), std::string::npos) << detail;
      EXPECT_NE(t.console.find(":END:"), std::string::npos) << "the survivor reports its end after the abort";
    }
    EXPECT_EQ(t.result.at("attempts"), 2) << t.id;
    ASSERT_EQ(t.result.at("retried").size(), 1u) << t.id;
    EXPECT_NE(t.result.at("retried")[0].get<std::string>().find("attempt 1 void"), std::string::npos) << t.id;
    EXPECT_TRUE(fs::exists(d / "trials" / t.id / "console.attempt1.log")) << t.id;
  }
  for (const auto& e : read_journal_lines(d / "journal.jsonl")) {
    EXPECT_EQ(e.metrics, 0u) << e.trial << ": no run of a broken window is a sample";
  }
}

}  // namespace
}  // namespace abvm
