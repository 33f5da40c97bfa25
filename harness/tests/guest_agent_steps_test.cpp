// The agent's steps on the host (guests/agent/init.sh, ABVM_AGENT_MODE=steps), run by busybox sh as
// in the guest, with a FIFO for the console the host types into: a paced window (READY, the go, the
// run, the filler that repeats it until the stop, the records only afterwards), an abort, the agent's
// own deadline, and an unpaced job. A small driver script plays the host; the records it collects
// are read with the real parser.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/job.hpp"
#include "environment_skip.hpp"
#include "guest/records.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const fs::path kAgent = fs::path(ABVM_SOURCE_DIR) / "guests/agent/init.sh";
constexpr const char* kNonce = "0123456789abcdef0123456789abcdef";

// A job of `steps` runs of one workload whose command is `argv` (the scratch disk is a file, unused).
std::string command_job(Pacing pace, int steps, const std::vector<std::string>& argv, int wait = 30) {
  Workload w{.name = "nap", .spec = DdWorkload{}, .repetitions = steps};
  w.pre_run = {.sync = false, .drop_caches = false, .scheduler_none = false};  // not on the host
  GuestJob job{.trial_id = "t0000", .nonce = kNonce, .pace = pace, .fill = pace == Pacing::together,
               .wait_seconds = wait, .hold_seconds = 1};
  job.workloads.push_back({.workload = w});
  std::string text = serialise_job(job);
  // The job format carries argv lines: put sleep's in place of dd's.
  std::string out;
  std::size_t at = 0;
  bool replaced = false;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl - at);
    at = nl + 1;
    if (line.starts_with("arg ")) {
      if (!replaced) {
        for (const std::string& a : argv) out += "arg " + a + "\n";
      }
      replaced = true;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

std::string sleep_job(Pacing pace, int steps, const std::string& seconds, int wait = 30) {
  return command_job(pace, steps, {"sleep", seconds}, wait);
}

struct Steps {
  ProcessResult driver;
  GuestReport report;
  std::string records;
  fs::path work;
};

// Runs the agent on `job` while `host` (shell lines, with wait_for PATTERN and say WORD) plays the
// host; returns what came out.
// `launcher` goes before the agent's command (e.g. a tracer).
Steps run_steps(const std::string& name, const std::string& job, const std::string& host,
                const std::string& launcher = "") {
  const fs::path dir = fs::temp_directory_path() / ("abvm-agent-steps-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / "job", job);
  write_file_atomic(dir / "disk", "");
  const std::string script = R"(set -u
cd "$1"
mkfifo console
exec 3<>console
ABVM_AGENT_MODE=steps ABVM_JOB="$1/job" ABVM_WORK="$1/work" ABVM_CONSOLE="$1/console" ABVM_DISK="..$1/disk" \
  )" + launcher + R"( busybox sh "$2" > out 2> err &
agent=$!
wait_for() {
  i=0
  while ! grep -q "$1" out; do
    i=$((i + 1))
    if [ $i -gt 1000 ]; then echo "no $1 in 10 s" >&2; kill $agent; exit 1; fi
    sleep 0.01
  done
}
say() { echo "$1" >&3; }
)" + host + R"(
wait $agent
)";
  Steps s{.work = dir / "work"};
  s.driver = run_process({"busybox", "sh", "-c", script, "driver", dir.string(), kAgent.string()},
                         {.timeout = std::chrono::seconds(60)});
  s.records = fs::exists(dir / "out") ? read_file(dir / "out") : "";
  s.report = parse_guest_console(s.records, kNonce);
  return s;
}

// Two paced steps of a 0.2 s run: nothing is printed between the go and DONE, the filler repeats the
// run until the stop (0.6 s later), is stopped at once, and the records follow the stop.
TEST(GuestAgentSteps, APacedWindowHoldsItsLoadUntilTheStopAndPrintsAfterIt) {
  const Steps s = run_steps("paced", sleep_job(Pacing::together, 2, "0.2"), R"(
wait_for ':READY:0,'
say "go 0"
wait_for ':DONE:0:'
sleep 0.6
grep -c ':RUN:' out > runs-before-stop
say "stop 0"
wait_for ':READY:1,'
say "go 1"
wait_for ':DONE:1:'
say "stop 1"
)");
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  EXPECT_EQ(read_file(s.work.parent_path() / "runs-before-stop"), "0\n") << "a run's records came before its stop";
  EXPECT_TRUE(s.report.problems.empty()) << ::testing::PrintToString(s.report.problems);
  EXPECT_TRUE(s.report.ended);
  ASSERT_EQ(s.report.runs.size(), 2u);
  const GuestRun& first = s.report.runs[0];
  ASSERT_TRUE(first.window);
  EXPECT_EQ(first.exit_status, 0);
  EXPECT_GE(first.t_end - first.t_start, 0.19);
  EXPECT_LE(first.window->t_go, first.t_start);
  // The filler: from just after the run to the stop heard 0.6 s after DONE, then ended promptly.
  EXPECT_GE(first.window->fills, 2) << "the filler did not repeat the run";
  // The guest's CPU over the measured run alone: 0.2 s of every CPU's ticks, the filler's not in it.
  ASSERT_TRUE(first.cpu) << s.records;
  EXPECT_GE(first.cpu->all, 10u);
  EXPECT_LE(first.cpu->busy, first.cpu->all);
  // ... the run itself, 0.2 s each time, not a command that fails at once.
  EXPECT_LE(first.window->fills, 6) << "the filler's runs did not run";
  EXPECT_LT(first.window->t_fill - first.t_end, 0.2);
  EXPECT_GE(first.window->t_stop - first.t_end, 0.55);
  EXPECT_GE(first.window->t_load_end, first.window->t_stop);
  EXPECT_LT(first.window->t_load_end - first.window->t_stop, 0.4) << "stopping the filler took too long";
  EXPECT_EQ(s.report.steps_done, (std::vector<long>{0, 1}));
  // The next step is READY no sooner than SETTLE (0.3 s) after this one's stop, which both guests
  // of a window hear at once (its load ended within 0.1 s of it): on a throttled disk the filler's last
  // requests leave the bucket full, and a run that began sooner began behind them.
  ASSERT_TRUE(s.report.runs[1].window);
  EXPECT_GE(s.report.runs[1].window->t_ready - first.window->t_stop, 0.3) << s.records;
  EXPECT_GE(s.report.runs[1].window->t_ready - first.window->t_load_end, 0.2) << s.records;
  // No run of the filler is left behind.
  const std::string pid = read_file(s.work / "fill.pid");
  EXPECT_FALSE(fs::exists("/proc/" + pid.substr(0, pid.find('\n')))) << "the filler's last run still runs";
}

// Issue 26: between the end of the measured run and its filler's first run, nothing but the filler may
// take the CPU that the partner may still measure on (a fork costs tens of ms under TCG): no
// checksum, no record, no fork of the agent's. Traced with strace: from the measured tool's exit
// until both DONE is printed and the filler's tool is executed, one process is created (the
// filler's run, by the filler parked before READY) and no other program runs.
// The host's side of one window: go, and the stop half a second after the guest's DONE (its filler runs
// meanwhile).
constexpr const char* kOneWindowHeldHalfASecond = R"(
wait_for ':READY:0,'
say "go 0"
wait_for ':DONE:0:'
sleep 0.5
say "stop 0"
wait_for ':END:'
)";

TEST(GuestAgentSteps, NothingButTheFillerRunsBetweenTheRunsEndAndItsFiller) {
  if (run_process({"sh", "-c", "command -v strace"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("strace is not installed (harness/setup.sh --tests installs it)");
  }
  const fs::path trace = fs::temp_directory_path() / "abvm-agent-steps-trace.txt";
  const Steps s = run_steps("traced", sleep_job(Pacing::together, 1, "0.3"), kOneWindowHeldHalfASecond, "strace -f -qq -s 256 -e trace=process,write -o " + trace.string());
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  ASSERT_EQ(s.report.runs.size(), 1u) << s.records;
  ASSERT_GE(s.report.runs[0].window->fills, 1) << s.records;
  const std::string text = read_file(trace);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  const auto pid_of = [](const std::string& l) { return l.substr(0, l.find(' ')); };
  const auto is_exec = [](const std::string& l) { return l.find(" execve(\"") != std::string::npos; };
  const auto is_sleep = [](const std::string& l) { return l.find(" execve(\"/usr/bin/sleep\"") != std::string::npos; };
  // The measured run: the first sleep executed; its end: that process's exit_group (-qq: no exit lines).
  std::size_t i = 0;
  while (i < lines.size() && !is_sleep(lines[i])) ++i;
  ASSERT_LT(i, lines.size()) << text;
  const std::string measured = pid_of(lines[i]);
  while (i < lines.size() && !(pid_of(lines[i]) == measured && lines[i].find(" exit_group(") != std::string::npos)) ++i;
  ASSERT_LT(i, lines.size()) << text;
  bool done_printed = false, filler_ran = false;
  int forks = 0;
  std::vector<std::string> programs;
  for (++i; i < lines.size() && !(done_printed && filler_ran); ++i) {
    const std::string& l = lines[i];
    if (l.find(" write(") != std::string::npos && l.find(":DONE:0:") != std::string::npos) done_printed = true;
    if (l.find(" clone(") != std::string::npos || l.find(" clone3(") != std::string::npos ||
        l.find(" fork(") != std::string::npos || l.find(" vfork(") != std::string::npos) {
      ++forks;
    }
    if (is_exec(l)) {
      if (is_sleep(l)) filler_ran = true;
      else programs.push_back(l);
    }
  }
  EXPECT_TRUE(done_printed && filler_ran) << text;
  EXPECT_EQ(forks, 0) << "processes created between the run's end and its filler's start (its first run is\n"
                          "forked before READY and only execs):\n" << text;
  EXPECT_TRUE(programs.empty()) << ::testing::PrintToString(programs);
}

// Two windows of the tool `script`, the first stopped 0.3 s after its DONE (its filler running then):
// the two windows, after the run's checks.
struct TwoWindows {
  Steps steps;
  GuestWindow first, second;
};
TwoWindows two_windows_stopped_while_filling(const std::string& name, const std::string& script) {
  TwoWindows w{.steps = run_steps(name, command_job(Pacing::together, 2, {"sh", "-c", script}), R"(
wait_for ':READY:0,'
say "go 0"
wait_for ':DONE:0:'
sleep 0.3
say "stop 0"
wait_for ':READY:1,'
say "go 1"
wait_for ':DONE:1:'
say "stop 1"
)")};
  const Steps& s = w.steps;
  EXPECT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  if (s.report.runs.size() != 2 || !s.report.runs[0].window || !s.report.runs[1].window) {
    ADD_FAILURE() << "two windows expected: " << s.records;
    return w;
  }
  w.first = *s.report.runs[0].window;
  w.second = *s.report.runs[1].window;
  return w;
}

// Two windows whose filler takes 40 ms to end after the stop (as a faster side's does, stopped
// mid-request on a throttled disk): the next step's pause counts from the stop, not from that end.
// Counted from its own load's end, the side whose filler ended sooner was READY sooner, idled longer
// before the go and started later (guests/agent/init.sh, SETTLE_FROM).
TEST(GuestAgentSteps, TheNextStepSettlesFromTheStopNotFromTheFillersEnd) {
  const TwoWindows w = two_windows_stopped_while_filling("settle-from-stop", "trap 'sleep 0.04; exit 0' TERM; sleep 0.2 & wait");
  ASSERT_FALSE(::testing::Test::HasFailure());
  const double filler_end = w.first.t_load_end - w.first.t_stop;
  ASSERT_GE(filler_end, 0.03) << "the filler's TERM trap did not hold it: " << w.steps.records;
  ASSERT_LE(filler_end, 0.1) << "the filler ended too late for this test (the pause then counts from its end)";
  EXPECT_GE(w.second.t_ready - w.first.t_stop, 0.3) << w.steps.records;
  EXPECT_LT(w.second.t_ready - w.first.t_load_end, 0.3) << "the pause counted from the filler's end: " << w.steps.records;
}

// A filler that ended more than 0.1 s after the stop (here one that ignores SIGTERM and runs 1.5 s)
// is waited for: the next step's pause then counts from its end, so that a throttled disk's bucket
// refills.
TEST(GuestAgentSteps, AFillerThatEndsLateIsWaitedForBeforeTheNextStep) {
  // The measured runs take 0.2 s and leave a mark; a filler's run (one after a mark) takes 1.5 s, so
  // the stop 0.3 s after DONE always falls inside one that ignores it.
  const fs::path mark = fs::temp_directory_path() / "abvm-agent-steps-settle-after-kill.mark";
  fs::remove(mark);
  const std::string script = "trap '' TERM; if [ -e " + mark.string() + " ]; then rm -f " + mark.string() +
                             "; sleep 1.5; else sleep 0.2; : > " + mark.string() + "; fi";
  const TwoWindows w = two_windows_stopped_while_filling("settle-after-kill", script);
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_GT(w.first.t_load_end - w.first.t_stop, 0.1) << "the filler ignored SIGTERM: " << w.steps.records;
  EXPECT_GE(w.second.t_ready - w.first.t_load_end, 0.3) << w.steps.records;
}

// A filler run that ignores SIGTERM and waits for a child (as a fio can while it starts its job):
// the agent kills it and its child within a few seconds of the stop instead of waiting forever.
TEST(GuestAgentSteps, AFillerThatIgnoresTheStopIsKilledWithItsChildren) {
  const fs::path dir = fs::temp_directory_path() / "abvm-agent-steps-stubborn";
  // The measured run leaves a mark; every later run (the filler's) starts a long child and waits.
  const std::string script = "trap '' TERM; sleep 0.2; if [ -e " + (dir / "mark").string() + " ]; then sleep 60 & echo $! > " +
                             (dir / "child").string() + "; wait; fi; : > " + (dir / "mark").string();
  const Steps s = run_steps("stubborn", command_job(Pacing::together, 1, {"sh", "-c", script}), kOneWindowHeldHalfASecond);
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  ASSERT_EQ(s.report.runs.size(), 1u) << s.records;
  const GuestRun& run = s.report.runs[0];
  ASSERT_TRUE(run.window);
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_GE(run.window->t_load_end - run.window->t_stop, 0.9) << "the filler ignored SIGTERM: it cannot have ended sooner";
  EXPECT_LE(run.window->t_load_end - run.window->t_stop, 3.0) << "the stubborn filler was not killed";
  const std::string child = read_file(dir / "child");
  const fs::path stat = "/proc/" + child.substr(0, child.find('\n')) + "/stat";
  if (fs::exists(stat)) {
    const std::string st = read_file(stat);
    EXPECT_EQ(st[st.find(") ") + 2], 'Z') << "the filler's child still runs: " << st;
  }
}

// The filler's runs begun, the one the stop cut short included, and no more (the host takes the
// window's disk bytes as the measured run's and the filler's finished runs': issue 27's
// SwiotlbForceIsARegression found one run too many): the measured run leaves a mark, the filler's
// first run finds it and lasts until the stop, so exactly one filler run began.
TEST(GuestAgentSteps, FillsCountTheFillersRunsBegun) {
  const fs::path dir = fs::temp_directory_path() / "abvm-agent-steps-fills";
  const std::string mark = (dir / "mark").string();
  const std::string script = "if [ -e " + mark + " ]; then exec sleep 30; fi; : > " + mark + "; sleep 0.1";
  const Steps s = run_steps("fills", command_job(Pacing::together, 1, {"sh", "-c", script}), kOneWindowHeldHalfASecond);
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  ASSERT_EQ(s.report.runs.size(), 1u) << s.records;
  ASSERT_TRUE(s.report.runs[0].window);
  EXPECT_EQ(s.report.runs[0].window->fills, 1) << s.records;
}

// "abort" at the stop: the agent stops its filler, prints the run it has, runs no further step and
// reports its end.
TEST(GuestAgentSteps, AnAbortEndsTheStepsAfterTheRunAtHand) {
  const Steps s = run_steps("abort", sleep_job(Pacing::together, 3, "0.1"), R"(
wait_for ':READY:0,'
say "go 0"
wait_for ':DONE:0:'
say "abort"
wait_for ':END:'
)");
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  EXPECT_TRUE(s.report.ended);
  ASSERT_EQ(s.report.runs.size(), 1u);
  EXPECT_EQ(s.records.find(":READY:1,"), std::string::npos);
}

// A host that says nothing: the agent waits no longer than the job's `wait`, says so, and ends.
TEST(GuestAgentSteps, NoWordFromTheHostEndsTheWaitAtTheAgentsDeadline) {
  const Steps s = run_steps("deadline", sleep_job(Pacing::together, 1, "0.1", 1), R"(
wait_for ':END:'
)");
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  ASSERT_EQ(s.report.agent_errors.size(), 1u) << s.records;
  EXPECT_EQ(s.report.agent_errors[0], "no 'go 0' from the host within 1 s: the host is gone or lost track of this guest");
  EXPECT_TRUE(s.report.runs.empty());
}

// An unpaced job needs no word: each run's records as it goes, the command really run.
TEST(GuestAgentSteps, AnUnpacedJobRunsItsStepsAlone) {
  const Steps s = run_steps("free", sleep_job(Pacing::free, 2, "0.1"), "wait_for ':END:'\n");
  ASSERT_EQ(s.driver.exit_code, 0) << s.driver.err << s.records;
  ASSERT_EQ(s.report.runs.size(), 2u) << s.records;
  for (const GuestRun& r : s.report.runs) {
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_GE(r.t_end - r.t_start, 0.09);
    EXPECT_FALSE(r.window);
    ASSERT_TRUE(r.cpu) << s.records;  // 0.1 s: at least 10 ticks of every CPU
    EXPECT_GE(r.cpu->all, 10u);
    // NEXT announced it before its preparation: the host's cost edge, out of the tool's time.
    EXPECT_TRUE(r.next_seq) << s.records;
  }
  // The settling pause between a run's preparation and its tool (SETTLE, 0.3 s): the second run
  // starts at least that long after the first ended (the guest's kernel work after sync and
  // drop_caches ran into dd's time without it).
  EXPECT_GE(s.report.runs[1].t_start - s.report.runs[0].t_end, 0.3) << s.records;
}

}  // namespace
}  // namespace abvm
