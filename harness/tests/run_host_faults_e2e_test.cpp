// Faults on the host, provoked for real against the real `abvm run` (embedded libvirt driver,
// Debian cloud kernel, real guest image, TCG here): QEMU killed with SIGKILL mid-trial, a libvirt
// URI with no daemon behind it, one that accepts and never answers, a libvirt daemon (the test's
// own libvirtd) killed mid-trial and restarted or not, or stopped (SIGSTOP) mid-trial
// (libvirt_daemons.hpp: its own mount namespace, reached on its UNIX socket, so it gets the
// files as volumes as any non-embedded host does), a full filesystem under the
// scratch disk (before booting and while the guest writes), a results filesystem that the kernel
// turns read-only mid-run, and the abvm process itself killed at seeded random moments and
// resumed, many times. After each: what was gathered is kept, no guest, image or temporary file
// of ours is left behind.
//
// Not here, and why:
// - Two `abvm run` on one results directory: cli_run_e2e_test.cpp
//   (RunE2ETest.CtrlCStopsSaysHowToResumeAndExits130) holds the lock and checks the refusal.
// - Removing the embedded driver's state directory mid-run: the embedded driver keeps its state
//   in abvm's own process, so nothing is "lost" until the next start, where
//   LibvirtDriver::remove_stale_embedded_state applies (guest_embedded_state_test.cpp).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/volume_staging.hpp"
#include "libvirt_daemons.hpp"

extern char** environ;

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

struct Tiny {
  int boots_per_side = 2;  // the least abvm accepts
  int dd_count = 4;
  int repetitions = 1;
  int infra_retries = 1;
  std::string disk_size = "64M";
  bool preallocate = false;
  std::string disk_path;  // empty: scratch.raw in the results directory
  std::string boot_timeout = "60s";
  std::string run_timeout = "60s";
};

std::string config_text(const Tiny& t) {
  std::string disk = fmt::format("size = \"{}\"\npreallocate = {}\n", t.disk_size, t.preallocate ? "true" : "false");
  if (!t.disk_path.empty()) disk += fmt::format("path = \"{}\"\noverwrite = true\n", t.disk_path);
  return fmt::format(R"(name = "hostfault"
description = "host faults end-to-end test"

[guest]
kernel = "debian-cloud"
accelerator = "tcg"

[disk]
{}
[sides.A]
label = "direct"

[sides.B]
label = "dma-api"
device.iommu_platform = true

[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = {}
oflag = ["direct"]
repetitions = {}

[schedule]
min_run_time = "0s"
boots_per_side = {}
seed = 11
infra_retries = {}
boot_timeout = "{}"
run_timeout = "{}"
)",
                     disk, t.dd_count, t.repetitions, t.boots_per_side, t.infra_retries, t.boot_timeout,
                     t.run_timeout);
}

// One journal line as this test needs it. The run stage's tests cannot link samples/ (a later
// stage), so the journal is read here with its documented keys; a line that is not JSON throws.
struct JournalRun {
  std::string trial, workload, outcome, detail;
  int run = 0;
};

std::vector<JournalRun> read_runs(const std::filesystem::path& p) {
  std::vector<JournalRun> out;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return out;
  const std::string text = read_file(p);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) throw std::runtime_error(p.string() + ": unfinished last line");
    const auto j = nlohmann::json::parse(text.substr(pos, eol - pos));
    out.push_back({.trial = j.at("trial"), .workload = j.at("workload"), .outcome = j.at("outcome"),
                   .detail = j.at("detail"), .run = j.at("run")});
    pos = eol + 1;
  }
  return out;
}

std::size_t count_lines(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return 0;
  const std::string t = read_file(p);
  return static_cast<std::size_t>(std::count(t.begin(), t.end(), '\n'));
}

std::string slurp(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) ? read_file(p) : std::string();
}

// The command line of every process whose command line contains `needle`, by pid.
std::map<pid_t, std::string> processes_with(const std::string& needle) {
  std::map<pid_t, std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string args;
    try {
      args = read_file(e.path() / "cmdline");
    } catch (const std::exception&) {
      continue;  // ended meanwhile
    }
    std::replace(args.begin(), args.end(), '\0', ' ');
    if (args.find(needle) != std::string::npos) found[static_cast<pid_t>(std::stoi(name))] = args;
  }
  return found;
}

// QEMU processes that run a guest of the abvm process `abvm` (domains are "abvm-<pid>.<boot>-...").
std::map<pid_t, std::string> qemus_of(pid_t abvm) {
  std::map<pid_t, std::string> out;
  for (auto& [pid, args] : processes_with(fmt::format("guest=abvm-{}.", abvm))) {
    if (args.find("qemu-system") != std::string::npos) out[pid] = args;
  }
  return out;
}

class HostFaultsE2ETest : public ::testing::Test {
 protected:
  fs::path dir;
  fs::path config;
  fs::path results;
  fs::path tmp;  // abvm's TMPDIR: must be empty after every run
  std::vector<fs::path> mounts;
  std::vector<pid_t> abvm_pids;

  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
    dir = fs::temp_directory_path() /
          ("abvm-hostfaults-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    // An earlier failed run of this test may have left its mounts.
    for (const char* m : {"mnt", "results"}) ::umount2((dir / m).c_str(), MNT_DETACH);
    fs::remove_all(dir);
    fs::create_directories(dir / "tmp");
    tmp = dir / "tmp";
    config = dir / "hostfault.toml";
    results = dir / "results";
  }
  void TearDown() override {
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
    for (pid_t p : abvm_pids) {
      for (const auto& [q, args] : qemus_of(p)) {
      ::kill(q, SIGKILL);
    }
    }
    if (!dir.empty() && !HasFailure()) fs::remove_all(dir);
  }

  void write_config(const Tiny& t) { write_file_atomic(config, config_text(t)); }

  std::vector<std::string> env() const {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with("TMPDIR=")) out.emplace_back(*e);
    }
    out.push_back("TMPDIR=" + tmp.string());
    return out;
  }

  // Starts abvm with stdout and stderr to `log`; remembers its pid for the leftover checks.
  pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<std::string> full{ABVM_BINARY};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envs = env();
    std::vector<char*> envp;
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    abvm_pids.push_back(pid);
    return pid;
  }

  // Waits for `pid` to exit within `limit`; its exit code, or -1 (killed by a signal / still running).
  static int wait_exit(pid_t pid, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        ADD_FAILURE() << "abvm pid " << pid << " was killed by signal " << WTERMSIG(status);
        return -1;
      }
      std::this_thread::sleep_for(100ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "abvm pid " << pid << " did not end within " << limit.count() << " s";
    return -1;
  }

  struct Finished {
    int exit_code;
    std::string output;
  };
  Finished run_abvm(const std::vector<std::string>& args, std::chrono::seconds limit = 540s) {
    const fs::path log = dir / fmt::format("abvm-{}.log", abvm_pids.size());
    const pid_t pid = spawn(args, log);
    EXPECT_GT(pid, 0);
    if (pid <= 0) return {-1, ""};
    const int code = wait_exit(pid, limit);
    return {code, slurp(log)};
  }

  // Waits until a guest of abvm process `abvm` runs `trial` and its kernel has printed a few
  // console lines; false if that is not seen within 300 s or abvm ends first.
  bool wait_for_guest(pid_t abvm, const std::string& trial) {
    const auto end = std::chrono::steady_clock::now() + 300s;
    while (std::chrono::steady_clock::now() < end && ::waitpid(abvm, nullptr, WNOHANG) == 0) {
      const auto d = find_results_dir();
      if (!qemus_of(abvm).empty() && d && count_lines(*d / "trials" / trial / "console.log") >= 5) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  // SIGKILLs the QEMU of abvm process `abvm` that runs trial t0000 once its kernel has printed a
  // few console lines; the QEMU's pid, or 0 when none was seen.
  pid_t kill_first_qemu(pid_t abvm) {
    if (!wait_for_guest(abvm, "t0000")) return 0;
    const auto q = qemus_of(abvm);
    if (q.empty()) return 0;  // it ended meanwhile
    EXPECT_EQ(::kill(q.begin()->first, SIGKILL), 0);
    std::cout << "killed QEMU pid " << q.begin()->first << ": " << q.begin()->second.substr(0, 80) << "\n";
    return q.begin()->first;
  }

  std::optional<fs::path> find_results_dir() const {
    std::error_code ec;
    if (!fs::is_directory(results, ec)) return std::nullopt;
    for (const auto& e : fs::directory_iterator(results, ec)) {
      if (e.is_directory() && fs::exists(e.path() / "run.json")) return e.path();
    }
    return std::nullopt;
  }

  // Waits until the results directory's ledger has `n` trials; the directory, or nothing.
  std::optional<fs::path> wait_for_trials(std::size_t n, std::chrono::seconds limit, pid_t alive) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (const auto d = find_results_dir(); d && count_lines(*d / "trials.jsonl") >= n) return d;
      if (::kill(alive, 0) != 0 || ::waitpid(alive, nullptr, WNOHANG) == alive) return std::nullopt;
      std::this_thread::sleep_for(100ms);
    }
    return std::nullopt;
  }

  // Nothing of ours is left: no QEMU of any abvm process this test started, no initrd, no
  // half-written temporary file, no scratch image unless asked to keep it, an empty TMPDIR.
  void expect_no_leftovers(const fs::path& d, bool scratch_may_remain = false) {
    for (pid_t p : abvm_pids) {
      for (const auto& [q, args] : qemus_of(p)) ADD_FAILURE() << "leftover QEMU " << q << ": " << args;
    }
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(d, ec); it != fs::recursive_directory_iterator(); ++it) {
      const std::string name = it->path().filename().string();
      EXPECT_NE(name, "initrd.img") << it->path();
      EXPECT_EQ(name.find(".tmp."), std::string::npos) << "half-written file left: " << it->path();
    }
    if (!scratch_may_remain) {
      EXPECT_FALSE(fs::exists(d / "scratch.raw")) << "abvm's scratch image is left";
    }
    EXPECT_TRUE(fs::is_empty(tmp, ec)) << "abvm left files in TMPDIR " << tmp;
  }

  // Every planned run is in the journal exactly once; returns the journal.
  std::vector<JournalRun> expect_each_run_once(const fs::path& d, const Tiny& t) {
    const auto plan = json::parse(read_file(d / "plan.json"));
    const auto journal = read_runs(d / "journal.jsonl");
    std::map<std::string, int> seen;
    for (const auto& e : journal) ++seen[fmt::format("{}/{}/{}", e.trial, e.workload, e.run)];
    std::size_t planned = 0;
    for (const auto& trial : plan.at("trials")) {
      for (int r = 0; r < t.repetitions; ++r) {
        ++planned;
        const std::string key = fmt::format("{}/dd-write/{}", trial.at("id").get<std::string>(), r);
        EXPECT_EQ(seen[key], 1) << "run " << key << " is in the journal " << seen[key] << " times";
      }
    }
    EXPECT_EQ(journal.size(), planned);
    // The ledger has each trial once too.
    std::map<std::string, int> trials;
    for (const auto& line : split_lines(slurp(d / "trials.jsonl"))) ++trials[json::parse(line).at("trial")];
    EXPECT_EQ(trials.size(), plan.at("trials").size());
    for (const auto& [id, n] : trials) EXPECT_EQ(n, 1) << id;
    return journal;
  }

  static std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t eol = text.find('\n', pos);
      if (eol == std::string::npos) eol = text.size();
      if (eol > pos) out.push_back(text.substr(pos, eol - pos));
      pos = eol + 1;
    }
    return out;
  }

  static json trial_result(const fs::path& d, const std::string& id) {
    return json::parse(read_file(d / "trials" / id / "result.json"));
  }

  // Mounts a tmpfs of `size` at `where` (root only); false when this host cannot.
  bool mount_tmpfs(const fs::path& where, const std::string& size) {
    fs::create_directories(where);
    if (::mount("tmpfs", where.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) return false;
    mounts.push_back(where);
    return true;
  }
};

constexpr std::array<int, 3> kVerdictExits = {0, 1, 4};
bool is_verdict_exit(int code) { return std::find(kVerdictExits.begin(), kVerdictExits.end(), code) != kVerdictExits.end(); }

// ---- 1. QEMU killed with SIGKILL during a trial ------------------------------------------------

TEST_F(HostFaultsE2ETest, QemuKilledDuringATrialIsAnInfraErrorRetriedAndTheExperimentGoesOn) {
  Tiny t;
  t.infra_retries = 1;
  write_config(t);
  const fs::path log = dir / "run.log";
  const pid_t abvm = spawn({"run", "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(abvm, 0);
  // Kill the first guest's QEMU once its kernel is talking on the console: a trial under way.
  const pid_t killed = kill_first_qemu(abvm);
  ASSERT_NE(killed, 0) << "no QEMU of abvm " << abvm << " was seen\n" << slurp(log);
  const int code = wait_exit(abvm, 540s);
  const std::string out = slurp(log);
  EXPECT_TRUE(is_verdict_exit(code)) << code << "\n" << out;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());

  // The killed boot is recorded as an infra error and replaced by a second boot of the same trial.
  const json r = trial_result(*d, "t0000");
  ASSERT_EQ(r.at("retried").size(), 1u) << r.dump(2);
  const std::string why = r.at("retried")[0];
  EXPECT_TRUE(why.starts_with("attempt 1: ")) << why;
  EXPECT_NE(why.find("QEMU"), std::string::npos) << why;
  EXPECT_EQ(r.at("attempts"), 2);
  EXPECT_EQ(r.at("outcome"), "ok") << r.dump(2);
  EXPECT_TRUE(fs::exists(*d / "trials" / "t0000" / "console.attempt1.log"));
  EXPECT_NE(out.find("(after 2 boots)"), std::string::npos) << out;
  // The experiment went on: every trial is there, every run once, and the analysis was made.
  const auto journal = expect_each_run_once(*d, t);
  for (const auto& e : journal) EXPECT_EQ(e.outcome, "ok") << e.trial << ": " << e.detail;
  EXPECT_TRUE(fs::exists(*d / "analysis.json"));
  expect_no_leftovers(*d);
}

TEST_F(HostFaultsE2ETest, QemuKilledOnEveryAttemptIsRecordedAsInfraErrorAndTheExperimentGoesOn) {
  Tiny t;
  t.infra_retries = 0;
  write_config(t);
  const fs::path log = dir / "run.log";
  const pid_t abvm = spawn({"run", "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(abvm, 0);
  const pid_t killed = kill_first_qemu(abvm);
  ASSERT_NE(killed, 0) << slurp(log);
  const int code = wait_exit(abvm, 540s);
  const std::string out = slurp(log);
  // One side has no valid run: the analysis cannot conclude, but abvm ends normally.
  EXPECT_NE(code, 3) << out;
  EXPECT_NE(code, -1) << out;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  const json r = trial_result(*d, "t0000");
  EXPECT_EQ(r.at("outcome"), "infra-error") << r.dump(2);
  EXPECT_TRUE(r.at("retried").empty());
  EXPECT_NE(r.at("detail").get<std::string>().find("QEMU"), std::string::npos) << r.dump(2);
  const auto journal = expect_each_run_once(*d, t);
  for (const auto& e : journal) {
    EXPECT_EQ(e.outcome, e.trial == "t0000" ? "infra-error" : "ok") << e.trial << ": " << e.detail;
  }
  expect_no_leftovers(*d);
}

// ---- 2. libvirt connection ---------------------------------------------------------------------

TEST_F(HostFaultsE2ETest, UnreachableLibvirtDaemonIsAnInfraErrorBeforeAnyTrial) {
  // This machine's daemon (qemu:///system) at a socket where none listens: a libvirtd that runs
  // here at its usual socket is not reached, so the test never has a reason to skip.
  const std::string uri = "qemu:///system?socket=" + (dir / "no-daemon.sock").string();
  write_config(Tiny{});
  const auto r = run_abvm({"run", "--connect", uri, "--results-dir", results.string(), config.string()});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("libvirt: cannot connect to '" + uri + "'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libvirtd is running"), std::string::npos) << r.output;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(count_lines(*d / "trials.jsonl"), 0u);
  EXPECT_FALSE(fs::exists(*d / "trials"));
  expect_no_leftovers(*d);
}

// A daemon that accepts the connection and never answers (stopped, or deadlocked inside; here a
// socket of the test's own that accepts and stays silent): exit 3 naming the URI at the end of
// the reconnect window, 30 s (abvm has no option to shorten it), not a hang in virConnectOpen.
TEST_F(HostFaultsE2ETest, ADaemonThatAcceptsButNeverAnswersIsExit3AtTheEndOfTheWindow) {
  test::SilentSocket silent(fs::temp_directory_path() / fmt::format("abvm-silent-{}.sock", ::getpid()));
  const std::string uri = "qemu+unix:///system?socket=" + silent.path().string();
  write_config(Tiny{});
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_abvm({"run", "--connect", uri, "--results-dir", results.string(), config.string()}, 120s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "abvm ended " << seconds << " s after it started, facing a daemon that never answers\n";
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("libvirt: cannot connect to '" + uri + "'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did not answer within 30 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libvirtd is running and answers"), std::string::npos) << r.output;
  EXPECT_GE(seconds, 30.0);
  EXPECT_LT(seconds, 45.0);  // the window, and abvm's start and end
  EXPECT_GE(silent.accepted(), 1u);
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(fs::exists(*d / "trials"));
  expect_no_leftovers(*d);
}

// The daemon stops answering while a guest runs (SIGSTOP: it keeps its socket, as a libvirtd
// deadlocked inside does). Keepalive ends the connection within about 20 s, the trial is an infra
// error, and connecting again is given up at the end of the window: exit 3 naming the URI, the
// guest killed. Without keepalive on a daemon of this machine, abvm waited for it forever.
TEST_F(HostFaultsE2ETest, LibvirtDaemonStoppedMidTrialEndsWithExit3NotAHang) {
  if (const auto why = test::missing_for_test_daemons(false)) ABVM_SKIP_WITHOUT(*why);
  test::TestLibvirtd daemon({.dir = dir / "libvirtd", .tcp = false});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  write_config(Tiny{});
  const fs::path log = dir / "run.log";
  const pid_t abvm =
      spawn({"run", "--connect", daemon.unix_uri(), "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(abvm, 0);
  ASSERT_TRUE(wait_for_guest(abvm, "t0000")) << slurp(log);
  ASSERT_EQ(::kill(daemon.pid(), SIGSTOP), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const int code = wait_exit(abvm, 150s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "abvm ended " << seconds << " s after its daemon stopped answering\n";
  const std::string out = slurp(log);
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find(fmt::format("the connection to '{}' was lost and could not be made again within 30 s",
                                 daemon.unix_uri())),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("did not answer within"), std::string::npos) << out;
  EXPECT_NE(out.find("continue with: abvm run --resume"), std::string::npos) << out;
  EXPECT_LT(seconds, 80.0);  // keepalive's ~20 s, the 30 s window, the retry's start
  EXPECT_TRUE(qemus_of(abvm).empty()) << "the stopped daemon's guest still runs";
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(count_lines(*d / "trials.jsonl"), 0u);
}

// The daemon dies while a guest runs and comes back (an admin restarts it, a package upgrade
// does): the trial that lost its connection is booted again once the connection is made again,
// the guest the old daemon ran is destroyed, and nothing is lost or counted twice.
TEST_F(HostFaultsE2ETest, LibvirtDaemonKilledMidTrialAndRestartedLosesNothing) {
  if (const auto why = test::missing_for_test_daemons(false)) ABVM_SKIP_WITHOUT(*why);
  test::TestLibvirtd daemon({.dir = dir / "libvirtd", .tcp = false});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  Tiny t;
  write_config(t);
  const fs::path log = dir / "run.log";
  const pid_t abvm =
      spawn({"run", "--connect", daemon.unix_uri(), "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(abvm, 0);
  ASSERT_TRUE(wait_for_guest(abvm, "t0000")) << slurp(log);
  daemon.kill();
  std::this_thread::sleep_for(2s);
  ASSERT_TRUE(daemon.start()) << daemon.log();
  const int code = wait_exit(abvm, 540s);
  const std::string out = slurp(log);
  // 2 runs per side can never reach 95 %: a finished run is inconclusive (4), nothing else.
  EXPECT_EQ(code, 4) << out;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  const json r = trial_result(*d, "t0000");
  EXPECT_EQ(r.at("outcome"), "ok") << r.dump(2);
  EXPECT_EQ(r.at("attempts"), 2) << r.dump(2);
  ASSERT_EQ(r.at("retried").size(), 1u) << r.dump(2);
  EXPECT_NE(r.at("retried")[0].get<std::string>().find("the connection to libvirt"), std::string::npos) << r.dump(2);
  for (const auto& e : expect_each_run_once(*d, t)) EXPECT_EQ(e.outcome, "ok") << e.trial << ": " << e.detail;
  expect_no_leftovers(*d);
  // The daemon's host keeps only the kernel: the volumes of the trial that lost its connection
  // went once the connection was back, the scratch volume at the run's end.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(daemon.pool_dir(), ec)) {
    const auto v = parse_volume_name(e.path().filename().string());
    EXPECT_TRUE(v && v->kind == "content") << "left on the host: " << e.path();
  }
}

// The daemon dies for good: abvm tries to connect again for 30 s, then stops with an infra error
// (exit 3) that says what to do, kills the guest the dead daemon left running on this machine,
// and keeps what it gathered; once the daemon is back, --resume completes the run.
TEST_F(HostFaultsE2ETest, LibvirtDaemonKilledForGoodStopsWithExit3AndResumeCompletes) {
  if (const auto why = test::missing_for_test_daemons(false)) ABVM_SKIP_WITHOUT(*why);
  test::TestLibvirtd daemon({.dir = dir / "libvirtd", .tcp = false});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  Tiny t;
  write_config(t);
  const pid_t abvm = spawn({"run", "--connect", daemon.unix_uri(), "--results-dir", results.string(), config.string()},
                           dir / "run.log");
  ASSERT_GT(abvm, 0);
  ASSERT_TRUE(wait_for_guest(abvm, "t0001")) << slurp(dir / "run.log");
  daemon.kill();
  const int code = wait_exit(abvm, 120s);
  const std::string out = slurp(dir / "run.log");
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find("was lost and could not be made again within 30 s"), std::string::npos) << out;
  EXPECT_NE(out.find("continue with: abvm run --resume"), std::string::npos) << out;
  EXPECT_TRUE(qemus_of(abvm).empty()) << "the dead daemon's guest still runs";
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(count_lines(*d / "trials.jsonl"), 1u);  // t0000 finished before the daemon died

  ASSERT_TRUE(daemon.start()) << daemon.log();
  const auto resumed = run_abvm({"run", "--resume", d->string()});
  EXPECT_EQ(resumed.exit_code, 4) << resumed.output;  // finished, and inconclusive with 2 runs per side
  for (const auto& e : expect_each_run_once(*d, t)) EXPECT_EQ(e.outcome, "ok") << e.trial << ": " << e.detail;
  expect_no_leftovers(*d);
}

// ---- 3. the scratch disk's filesystem full -----------------------------------------------------

TEST_F(HostFaultsE2ETest, PreallocatedScratchLargerThanTheFilesystemIsRefusedBeforeBooting) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("mounting a tmpfs needs root");
  ASSERT_TRUE(mount_tmpfs(results, "40m")) << "mount tmpfs: " << std::strerror(errno);
  Tiny t;
  t.preallocate = true;
  write_config(t);
  const auto r = run_abvm({"run", "--results-dir", results.string(), config.string()});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(r.output.find(fmt::format("cannot size scratch disk {} to 64M", (*d / "scratch.raw").string())),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("No space left on device; free some space or lower disk.size"), std::string::npos)
      << r.output;
  // Nothing booted; the run's own files are intact, and the half-made image does not fill the disk.
  EXPECT_FALSE(fs::exists(*d / "trials"));
  EXPECT_EQ(read_file(*d / "config.toml"), config_text(t));
  EXPECT_NO_THROW(json::parse(read_file(*d / "plan.json")));
  expect_no_leftovers(*d);
}

// The guest sees its writes fail (error_policy=report), not a paused VM; and since that happens in the first
// block on both sides, the run stops there (issue 20) naming the full host filesystem, not the workload.
TEST_F(HostFaultsE2ETest, SparseScratchFillingUpMidRunIsAWorkloadFailureNotAHang) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("mounting a tmpfs needs root");
  ASSERT_TRUE(mount_tmpfs(dir / "mnt", "40m")) << "mount tmpfs: " << std::strerror(errno);
  Tiny t;
  t.disk_path = (dir / "mnt" / "scratch.img").string();
  t.dd_count = 48;  // past the 40 MiB the filesystem holds
  t.run_timeout = "120s";
  write_config(t);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_abvm({"run", "--results-dir", results.string(), config.string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "the first block writing past a full filesystem took " << seconds << " s\n";
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("the filesystem holding the scratch disk " + t.disk_path + " has "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("may be this host's disk filling up, not the workload"), std::string::npos) << r.output;
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  for (const char* id : {"t0000", "t0001"}) {
    const json res = trial_result(*d, id);
    EXPECT_EQ(res.at("outcome"), "workload-failed") << res.dump(2);
    EXPECT_NE(res.at("detail").get<std::string>().find("dd-write run 0 exited with status"), std::string::npos)
        << res.dump(2);
    // Well before the 120 s run timeout: the guest saw the error, it was not paused.
    EXPECT_LT(res.at("seconds").get<double>(), 60.0) << res.dump(2);
  }
  // dd's own words, kept as the run's raw output; the first block's two runs journaled once each.
  const std::string dd_out = slurp(*d / "trials" / "t0000" / "dd-write-run0.out");
  EXPECT_NE(dd_out.find("error"), std::string::npos) << dd_out;
  EXPECT_EQ(count_lines(*d / "trials.jsonl"), 2u);
  expect_no_leftovers(*d);
}

// ---- 4. the results directory becomes unwritable mid-run -----------------------------------------

// A read-only remount is refused (EBUSY) while abvm holds files open for writing, as it always does
// (its lock, the journal): what really turns a results filesystem read-only under a running job is
// the kernel after a filesystem error (errors=remount-ro). That is provoked here on an ext4 image.
TEST_F(HostFaultsE2ETest, ResultsFilesystemTurningReadOnlyStopsWithInfraErrorAndResumeCompletes) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("mounting a loop device needs root");
  if (!find_program("mkfs.ext4") || !find_program("e2fsck")) ABVM_SKIP_WITHOUT("e2fsprogs is not installed");
  const fs::path image = dir / "results.ext4";
  run_checked({"truncate", "-s", "160M", image.string()});
  run_checked({"mkfs.ext4", "-q", image.string()});
  fs::create_directories(results);
  const auto mount_results = [&] {
    return run_process({"mount", "-o", "loop,errors=remount-ro", image.string(), results.string()});
  };
  const auto m = mount_results();
  if (m.exit_code != 0) ABVM_SKIP_WITHOUT("no loop device here: " << m.err);
  mounts.push_back(results);
  const std::string device = fs::path(run_checked({"findmnt", "-n", "-o", "SOURCE", results.string()})).filename();
  const fs::path trigger = fs::path("/sys/fs/ext4") / device.substr(0, device.find('\n')) / "trigger_fs_error";
  ASSERT_TRUE(fs::exists(trigger)) << trigger;

  Tiny t;
  t.boots_per_side = 2;
  t.disk_path = (dir / "scratch.img").string();
  write_config(t);
  const fs::path log = dir / "run.log";
  const pid_t abvm = spawn({"run", "--results-dir", results.string(), config.string()}, log);
  ASSERT_GT(abvm, 0);
  const auto d = wait_for_trials(1, 300s, abvm);
  ASSERT_TRUE(d.has_value()) << slurp(log);
  {
    // sysfs takes a plain write (no temporary file and rename).
    std::ofstream(trigger) << "abvm host-fault test";
  }
  const int code = wait_exit(abvm, 400s);
  const std::string out = slurp(log);
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find("Read-only file system"), std::string::npos) << out;
  EXPECT_NE(out.find("continue with: abvm run --resume " + d->string()), std::string::npos) << out;
  for (const auto& [q, args] : qemus_of(abvm)) ADD_FAILURE() << "guest left running: " << args;
  // What was written before the fault is there, consistent, after the filesystem is repaired.
  ASSERT_EQ(::umount(results.c_str()), 0) << std::strerror(errno);
  mounts.pop_back();
  const auto fsck = run_process({"e2fsck", "-fy", image.string()});
  EXPECT_LE(fsck.exit_code, 1) << fsck.out << fsck.err;
  ASSERT_EQ(mount_results().exit_code, 0);
  mounts.push_back(results);
  const std::size_t kept = count_lines(*d / "trials.jsonl");
  EXPECT_GE(kept, 1u);
  EXPECT_EQ(count_lines(*d / "journal.jsonl"), kept * static_cast<std::size_t>(t.repetitions));
  EXPECT_NO_THROW(read_runs(*d / "journal.jsonl"));

  const auto again = run_abvm({"run", "--resume", d->string()});
  EXPECT_TRUE(is_verdict_exit(again.exit_code)) << again.exit_code << "\n" << again.output;
  EXPECT_NE(again.output.find(fmt::format("{} of 4 trials done", kept)), std::string::npos) << again.output;
  const auto journal = expect_each_run_once(*d, t);
  for (const auto& e : journal) EXPECT_EQ(e.outcome, "ok") << e.trial << ": " << e.detail;
  EXPECT_TRUE(fs::exists(*d / "analysis.json"));
  expect_no_leftovers(*d);
}

// ---- 5 and 7. abvm killed at random moments, resumed each time -----------------------------------

TEST_F(HostFaultsE2ETest, AbvmKilledAtRandomMomentsAndResumedKeepsEveryRunExactlyOnce) {
  Tiny t;
  t.boots_per_side = 3;
  t.repetitions = 2;
  write_config(t);
  // Seeded: the same kill moments every time; printed so a failure can be replayed.
  const std::uint32_t seed = 20240606;
  std::mt19937 rng(seed);
  // From abvm's start-up to well past one trial (about 2 s to start, 4-8 s a trial here).
  std::uniform_int_distribution<int> delay_ms(500, 12000);
  constexpr int kKills = 9;
  std::cout << "kill schedule (seed " << seed << "):";
  std::vector<pid_t> killed;
  for (int k = 0; k < kKills; ++k) {
    const auto d = find_results_dir();
    std::vector<std::string> args = d ? std::vector<std::string>{"run", "--resume", d->string()}
                                      : std::vector<std::string>{"run", "--results-dir", results.string(), config.string()};
    const fs::path log = dir / fmt::format("kill{}.log", k);
    const pid_t pid = spawn(args, log);
    ASSERT_GT(pid, 0);
    const int ms = delay_ms(rng);
    std::cout << " " << ms << "ms" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      // It finished (or failed) before the kill: only a finished run may do that.
      ASSERT_TRUE(WIFEXITED(status) && is_verdict_exit(WEXITSTATUS(status))) << slurp(log);
      break;
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    killed.push_back(pid);
    const auto now = find_results_dir();
    if (now) {
      EXPECT_NO_THROW(read_runs(*now / "journal.jsonl")) << "journal unreadable after kill " << k;
      std::cout << "(" << count_lines(*now / "trials.jsonl") << " trials)";
    }
  }
  std::cout << "\n";
  const auto d = find_results_dir();
  ASSERT_TRUE(d.has_value());
  const auto r = run_abvm({"run", "--resume", d->string()});
  EXPECT_TRUE(is_verdict_exit(r.exit_code)) << r.exit_code << "\n" << r.output;
  const auto journal = expect_each_run_once(*d, t);
  for (const auto& e : journal) EXPECT_EQ(e.outcome, "ok") << e.trial << ": " << e.detail;
  EXPECT_TRUE(fs::exists(*d / "analysis.json"));
  EXPECT_TRUE(fs::exists(*d / "summary.txt"));
  // Each killed run's guests were removed by a later start-up (killed runs leave QEMU running).
  expect_no_leftovers(*d);
  const fs::path state = LibvirtDriver::embedded_root() / "run" / "qemu";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state, ec)) {
    for (pid_t p : killed) {
      EXPECT_FALSE(e.path().filename().string().starts_with(fmt::format("abvm-{}.", p)))
          << "state of killed run left: " << e.path();
    }
  }
}

}  // namespace
}  // namespace abvm
