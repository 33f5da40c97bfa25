// `abvm run` end to end with real guests: the real binary, the embedded libvirt driver, the
// Debian cloud kernel and the real guest image, under TCG here. A small interleaved experiment
// (2 boots per side, a tiny dd and a tiny fio) must reach a verdict and leave a complete results
// directory; --dry-run must boot nothing; a run whose abvm process is killed mid-run must resume
// to completion with its journal intact and no trial twice.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "samples/journal.hpp"

extern char** environ;

namespace abvm {
namespace {
namespace fs = std::filesystem;

const char* kConfig = R"(name = "tiny"
description = "end-to-end test: 2 boots per side"

[guest]
kernel = "debian-cloud"
accelerator = "tcg"

[disk]
size = "64M"

[sides.A]
label = "direct"

[sides.B]
label = "dma-api"
device.iommu_platform = true

[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 8
oflag = ["direct"]
repetitions = 2

[[workload]]
name = "fio-seqwrite"
type = "fio"
rw = "write"
bs = "1M"
size = "8M"
ioengine = "psync"
repetitions = 1

[schedule]
min_run_time = "0s"
boots_per_side = 2
seed = 7
boot_timeout = "60s"
run_timeout = "60s"
)";

constexpr int kTrials = 4;
constexpr int kRunsPerTrial = 3;

class RunE2ETest : public ::testing::Test {
 protected:
  fs::path dir;
  fs::path config;
  fs::path results;
  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
    dir = fs::temp_directory_path() /
          ("abvm-run-e2e-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    config = dir / "tiny.toml";
    write_file_atomic(config, kConfig);
    results = dir / "results";
  }
  void TearDown() override {
    if (!dir.empty() && !HasFailure()) fs::remove_all(dir);
  }

  // The one results directory under `results`.
  fs::path results_dir() const {
    std::vector<fs::path> found;
    if (fs::exists(results)) {
      for (const auto& e : fs::directory_iterator(results)) found.push_back(e.path());
    }
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? fs::path() : found[0];
  }

  static std::size_t lines(const fs::path& p) {
    if (!fs::exists(p)) return 0;
    const std::string t = read_file(p);
    return static_cast<std::size_t>(std::count(t.begin(), t.end(), '\n'));
  }

  void expect_dry_run_shows_what_booted(const fs::path& d);

  // A complete results directory of the tiny experiment, with every trial exactly once.
  void expect_complete(const fs::path& d) {
    for (const char* f : {"config.toml", "plan.json", "run.json", "environment.json", "kernels.json", "image.json",
                          "journal.jsonl", "trials.jsonl", "analysis.json", "summary.txt"}) {
      EXPECT_TRUE(fs::exists(d / f)) << f;
    }
    EXPECT_EQ(read_file(d / "config.toml"), kConfig);
    const auto env = nlohmann::json::parse(read_file(d / "environment.json"));
    EXPECT_EQ(env.at("accelerator"), "tcg");
    EXPECT_FALSE(env.at("qemu_version").get<std::string>().empty());
    EXPECT_EQ(nlohmann::json::parse(read_file(d / "plan.json")).at("seed"), 7);

    const auto journal = read_journal(d / "journal.jsonl");
    EXPECT_EQ(journal.size(), static_cast<std::size_t>(kTrials * kRunsPerTrial));
    std::set<std::string> keys;
    std::map<std::string, int> per_side;
    for (const auto& e : journal) {
      EXPECT_TRUE(keys.insert(e.trial + "/" + e.workload + "/" + std::to_string(e.run)).second)
          << "duplicate run " << e.trial << " " << e.workload << " " << e.run;
      EXPECT_EQ(e.outcome, Outcome::ok) << e.trial << ": " << e.detail;
      EXPECT_EQ(e.accelerator, Accelerator::tcg);
      // Each run carries the size it ran with (min_run_time = "0s": as written, no sizing block).
      EXPECT_EQ(e.size, e.workload == "dd-write" ? "bs=1M count=8" : "bs=1M size=8M") << e.trial;
      EXPECT_EQ(e.scale, 1u);
      EXPECT_FALSE(e.sizing_block);
      ++per_side[to_string(e.side)];
    }
    EXPECT_EQ(per_side["A"], 2 * kRunsPerTrial);
    EXPECT_EQ(per_side["B"], 2 * kRunsPerTrial);
    EXPECT_EQ(lines(d / "trials.jsonl"), static_cast<std::size_t>(kTrials));
    for (int i = 0; i < kTrials; ++i) {
      const fs::path t = d / "trials" / ("t000" + std::to_string(i));
      EXPECT_TRUE(fs::exists(t / "console.log")) << t;
      EXPECT_TRUE(fs::exists(t / "domain.xml")) << t;
      EXPECT_TRUE(fs::exists(t / "dd-write-run1.out")) << t;
      EXPECT_FALSE(fs::exists(t / "initrd.img")) << "initrds are not kept";
    }
    // Side B really ran with VIRTIO_F_ACCESS_PLATFORM negotiated, side A without.
    const auto plan = nlohmann::json::parse(read_file(d / "plan.json"));
    for (const auto& trial : plan.at("trials")) {
      const auto r = nlohmann::json::parse(read_file(d / "trials" / trial.at("id").get<std::string>() / "result.json"));
      EXPECT_EQ(r.at("guest").at("access_platform").get<bool>(), trial.at("side") == "B") << trial.dump();
    }
    const auto analysis = nlohmann::json::parse(read_file(d / "analysis.json"));
    EXPECT_TRUE(analysis.contains("verdict")) << analysis.dump().substr(0, 400);
    EXPECT_FALSE(fs::exists(d / "scratch.raw")) << "abvm's own scratch disk is removed at the end";
  }
};

// The domain XML of one side in `abvm run --dry-run` output (up to the next "== " header), and
// the trial its header names ("== side A (direct): kernel recipe 'debian-cloud', trial t0001 ==").
std::pair<std::string, std::string> dry_run_domain(const std::string& out, const std::string& header) {
  const std::size_t at = out.find(header);
  if (at == std::string::npos) return {};
  const std::size_t eol = out.find('\n', at);
  const std::size_t trial = out.rfind(", trial ", eol);
  const std::string id = out.substr(trial + 8, out.find(' ', trial + 8) - trial - 8);
  return {id, out.substr(eol + 1, out.find("\n== ", eol + 1) - eol)};
}

// What only the real run knows: the process id in the domain's name, the kernel's cache path,
// the results directory's time stamp (the dry run's "<timestamp>", escaped in text as "&lt;...&gt;"
// and in attributes as "&lt;...>").
std::string without_generated_parts(std::string xml) {
  xml = std::regex_replace(xml, std::regex("<name>[^<]*</name>"), "<name>NAME</name>");
  xml = std::regex_replace(xml, std::regex("<kernel>[^<]*</kernel>"), "<kernel>KERNEL</kernel>");
  xml = std::regex_replace(xml, std::regex("/tiny-(&lt;timestamp(&gt;|>)|[0-9]{8}T[0-9]{6}Z)/"), "/tiny-TIME/");
  while (!xml.empty() && xml.back() == '\n') xml.pop_back();
  return xml;
}

// --dry-run prints the domain XML from the code that boots a trial: for the same experiment it
// equals each side's first trial's saved domain.xml, generated names and paths aside.
void RunE2ETest::expect_dry_run_shows_what_booted(const fs::path& d) {
  const auto r = run_process({ABVM_BINARY, "run", "--dry-run", "--results-dir", results.string(), config.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* header : {"== side A (direct)", "== side B (dma-api)"}) {
    const auto [trial, shown] = dry_run_domain(r.out, header);
    ASSERT_FALSE(shown.empty()) << header << "\n" << r.out;
    const fs::path booted = d / "trials" / trial / "domain.xml";
    EXPECT_EQ(without_generated_parts(shown), without_generated_parts(read_file(booted))) << booted;
  }
}

TEST_F(RunE2ETest, DryRunPrintsPlanDomainXmlAndJobWithoutBooting) {
  const auto r = run_process({ABVM_BINARY, "run", "--dry-run", "--results-dir", results.string(), config.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plan for tiny: 4 trials, 2 boots per side, order interleaved, design sequential-blocks, seed 7"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("== side A (direct): kernel recipe 'debian-cloud', trial t000"), std::string::npos);
  EXPECT_NE(r.out.find("iommu=\"off\""), std::string::npos);
  EXPECT_NE(r.out.find("iommu=\"on\""), std::string::npos);
  EXPECT_NE(r.out.find("<on_crash>destroy</on_crash>"), std::string::npos);
  EXPECT_NE(r.out.find("abvm-job 4\ntrial t0000\n"), std::string::npos);
  EXPECT_NE(r.out.find("arg --name=fio-seqwrite"), std::string::npos);
  EXPECT_FALSE(fs::exists(results)) << "a dry run creates no results directory";
}

TEST_F(RunE2ETest, SmallInterleavedExperimentReachesAVerdictWithCompleteResults) {
  // A relative --results-dir (from the test's directory): the guests still get absolute paths.
  const auto r = run_process({ABVM_BINARY, "run", "--results-dir", "results", config.string()},
                             {.cwd = dir, .timeout = std::chrono::minutes(9)});
  // 2 boots per side cannot settle much: any verdict is fine, an error is not.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  const fs::path d = results_dir();
  ASSERT_FALSE(d.empty());
  EXPECT_TRUE(fs::path(d).filename().string().starts_with("tiny-"));
  expect_complete(d);
  EXPECT_NE(r.out.find("dd-write.bandwidth"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(d / "summary.txt").empty(), false);
  // The report shows each workload's run length: its size and its median run time on the host's clock.
  EXPECT_NE(r.out.find("run lengths:\n  dd-write: bs=1M count=8, median run "), std::string::npos) << r.out;
  expect_dry_run_shows_what_booted(d);
}

pid_t spawn_abvm(const std::vector<std::string>& args, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// Waits until `path` has at least `n` lines or `limit` passes.
bool wait_for_lines(const fs::path& dir_root, const std::string& name, std::size_t n, std::chrono::seconds limit,
                    fs::path& found) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(dir_root)) {
      for (const auto& e : fs::directory_iterator(dir_root)) {
        const fs::path p = e.path() / name;
        if (fs::exists(p)) {
          const std::string t = read_file(p);
          if (static_cast<std::size_t>(std::count(t.begin(), t.end(), '\n')) >= n) {
            found = e.path();
            return true;
          }
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(RunE2ETest, ResumeAfterKillCompletesWithoutDuplicates) {
  const fs::path log = dir / "first.log";
  const pid_t pid = spawn_abvm({ABVM_BINARY, "run", "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(pid, 0);
  fs::path d;
  const bool progressed = wait_for_lines(results, "trials.jsonl", 1, std::chrono::seconds(480), d);
  // Kill hard in the middle of the experiment: no handler runs, the guest is left behind.
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(progressed) << read_file(log);
  const std::size_t journal_before = lines(d / "journal.jsonl");
  EXPECT_GE(journal_before, static_cast<std::size_t>(kRunsPerTrial));
  EXPECT_NO_THROW(read_journal(d / "journal.jsonl"));
  EXPECT_FALSE(fs::exists(d / "analysis.json"));

  // A second runner on the same directory while none holds the lock is fine: the kill freed it.
  // Resumed by a relative path, as a user in the results root would type it.
  const auto r = run_process({ABVM_BINARY, "run", "--resume", d.filename().string()},
                             {.cwd = d.parent_path(), .timeout = std::chrono::minutes(9)});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  EXPECT_NE(r.err.find("resuming " + d.string()), std::string::npos) << r.err;
  expect_complete(d);

  // Resuming a finished run re-analyses and boots nothing.
  const auto again = run_process({ABVM_BINARY, "run", "--resume", d.string()}, {.timeout = std::chrono::minutes(2)});
  EXPECT_NE(again.err.find("every trial is done"), std::string::npos) << again.err;
  EXPECT_EQ(lines(d / "trials.jsonl"), static_cast<std::size_t>(kTrials));
}

TEST_F(RunE2ETest, CtrlCStopsSaysHowToResumeAndExits130) {
  const fs::path log = dir / "first.log";
  const pid_t pid = spawn_abvm({ABVM_BINARY, "run", "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(pid, 0);
  fs::path d;
  // Interrupt while the second trial's guest runs.
  const bool progressed = wait_for_lines(results, "trials.jsonl", 1, std::chrono::seconds(480), d);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(progressed) << read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << read_file(log);
  EXPECT_EQ(WEXITSTATUS(status), 130) << read_file(log);
  const std::string out = read_file(log);
  EXPECT_NE(out.find("continue with: abvm run --resume " + d.string()), std::string::npos) << out;
  // Everything gathered is kept and the journal is whole.
  EXPECT_EQ(lines(d / "journal.jsonl"), lines(d / "trials.jsonl") * kRunsPerTrial);
  // A second runner cannot take a directory that is in use.
  {
    const int fd = ::open((d / ".lock").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    const auto r = run_process({ABVM_BINARY, "run", "--resume", d.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("another abvm run is using this results directory"), std::string::npos) << r.err;
    ::close(fd);
  }
}

}  // namespace
}  // namespace abvm
