// Results directory naming, the runner lock, the trial ledger, the scratch disk rules, the host
// environment record and progress lines.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "run/environment.hpp"
#include "run/progress.hpp"
#include "run/results_dir.hpp"
#include "run/scratch.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

class ResultsDirTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("abvm-rd-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

std::chrono::system_clock::time_point at(std::int64_t unix_seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(unix_seconds));
}

TEST_F(ResultsDirTest, NamedAfterExperimentAndUtcTimeNeverReused) {
  // 2026-11-29T20:01:02Z
  const auto t = at(1795982462);
  EXPECT_EQ(utc_iso8601(t), "2026-11-29T20:01:02Z");
  EXPECT_EQ(create_results_dir(dir, "demo", t), dir / "demo-20261129T200102Z");
  EXPECT_EQ(create_results_dir(dir, "demo", t), dir / "demo-20261129T200102Z-2");
  EXPECT_TRUE(fs::is_directory(dir / "demo-20261129T200102Z-2"));
}

TEST_F(ResultsDirTest, LockRefusesASecondRunner) {
  std::optional<ResultsLock> first(std::in_place, dir);
  try {
    ResultsLock second(dir);
    FAIL() << "a second lock on the same directory must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.string() + ": another abvm run is using this results directory (pid " + std::to_string(::getpid()) +
                  "); wait for it to end, or stop it (Ctrl-C) and continue with 'abvm run --resume " + dir.string() +
                  "'");
  }
  first.reset();
  EXPECT_NO_THROW(ResultsLock again(dir));
}

TrialResult finished(const std::string& id, TrialOutcome outcome) {
  TrialResult r;
  r.trial = {.id = id, .side = SideId::b, .block = 0, .position = 1};
  r.outcome = outcome;
  r.attempts = 2;
  r.seconds = 3.25;
  r.time = "2026-11-29T20:01:02Z";
  r.detail = outcome == TrialOutcome::ok ? "" : "Kernel panic - not syncing";
  return r;
}

TEST_F(ResultsDirTest, LedgerRoundTripsAndToleratesOnlyAnUnfinishedLastLine) {
  const fs::path ledger = dir / "trials.jsonl";
  append_line_durable(ledger, to_ledger_line(finished("t0000", TrialOutcome::ok)));
  append_line_durable(ledger, to_ledger_line(finished("t0001", TrialOutcome::panic)));
  const auto entries = read_ledger(ledger);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].trial, "t0001");
  EXPECT_EQ(entries[1].side, "B");
  EXPECT_EQ(entries[1].outcome, TrialOutcome::panic);
  EXPECT_EQ(entries[1].attempts, 2);
  EXPECT_DOUBLE_EQ(entries[1].seconds, 3.25);
  EXPECT_EQ(entries[1].detail, "Kernel panic - not syncing");
  EXPECT_EQ(done_trials(entries), (std::set<std::string>{"t0000", "t0001"}));

  // A writer killed mid-line.
  write_file_atomic(ledger, read_file(ledger) + "{\"trial\":\"t0002\",\"si");
  std::string warning;
  EXPECT_EQ(read_ledger(ledger, [&](const std::string& w) { warning = w; }).size(), 2u);
  EXPECT_EQ(warning, ledger.string() + ":3: unfinished last line ignored (the writer was stopped)");

  // The same damage in the middle is not a crash artefact.
  write_file_atomic(ledger, "{\"trial\":\"t0002\",\"si\n" + to_ledger_line(finished("t0000", TrialOutcome::ok)) + "\n");
  EXPECT_THROW(read_ledger(ledger), Error);
  EXPECT_TRUE(read_ledger(dir / "absent.jsonl").empty());
}

TEST_F(ResultsDirTest, OwnScratchDiskIsCreatedSparseAtTheConfiguredSize) {
  DiskSettings disk;
  disk.size_bytes = 64ULL << 20;
  const fs::path p = prepare_scratch_disk(disk, dir, true);
  EXPECT_EQ(p, dir / "scratch.raw");
  EXPECT_EQ(fs::file_size(p), 64ULL << 20);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_LT(st.st_blocks * 512, 1 << 20) << "not sparse";
  disk.preallocate = true;
  disk.size_bytes = 8ULL << 20;
  prepare_scratch_disk(disk, dir, true);
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_GE(st.st_blocks * 512, 8 << 20) << "not preallocated";
}

TEST_F(ResultsDirTest, NamedScratchDiskIsRecheckedBeforeUse) {
  DiskSettings disk;
  disk.size_bytes = 1 << 20;
  disk.path = dir / "user.img";
  write_file_atomic(disk.path, "precious data");
  try {
    prepare_scratch_disk(disk, dir, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "disk.path " + disk.path.string() +
                                         " is an existing non-empty file (13 bytes): the experiment would destroy its "
                                         "contents; set disk.overwrite = true if that is intended, or name a new file");
  }
  EXPECT_EQ(read_file(disk.path), "precious data");
  // On --resume the content is the experiment's own.
  EXPECT_EQ(prepare_scratch_disk(disk, dir, false), disk.path);
  disk.overwrite = true;
  EXPECT_EQ(prepare_scratch_disk(disk, dir, true), disk.path);
  EXPECT_EQ(fs::file_size(disk.path), 1u << 20);

  disk.path = dir;
  EXPECT_THROW(prepare_scratch_disk(disk, dir, true), Error);
}

TEST_F(ResultsDirTest, BlockDeviceIsRefusedAlsoThroughASymlink) {
  fs::path dev;
  for (const char* c : {"/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1"}) {
    if (fs::is_block_file(c)) dev = c;
  }
  if (dev.empty()) GTEST_SKIP() << "no block device on this host to test against";
  DiskSettings disk;
  disk.overwrite = true;  // even then
  disk.path = dir / "disk.img";
  fs::create_symlink(dev, disk.path);
  try {
    prepare_scratch_disk(disk, dir, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "disk.path " + disk.path.string() + " is a block device (through a symlink to " + dev.string() +
                  "): abvm writes only to image files; name a file, or leave disk.path empty for a scratch image in "
                  "the results directory");
  }
}

TEST(RunEnvironment, RecordsHostAndHypervisor) {
  const auto env = run_environment({"qemu:///embed?root=/x", "9.0.0", "7.2.0"}, "tcg", "kvm probe failed");
  EXPECT_FALSE(env.at("hostname").get<std::string>().empty());
  EXPECT_FALSE(env.at("host_kernel").at("release").get<std::string>().empty());
  EXPECT_EQ(env.at("load_average").size(), 3u);
  EXPECT_TRUE(env.contains("cpufreq_governor"));
  EXPECT_EQ(env.at("qemu_version"), "7.2.0");
  EXPECT_EQ(env.at("accelerator"), "tcg");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n"), "AMD EPYC 7B13");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor : 0\n"), "");
}

TEST(Progress, LineShowsCountsSideTimesAndEffect) {
  EXPECT_EQ(format_clock(59.6), "1:00");
  EXPECT_EQ(format_clock(3725), "1:02:05");
  ProgressState st{.done = 7, .total = 20, .current = "t0007 B (dma-api)", .elapsed_seconds = 52,
                   .remaining_seconds = 96, .effect = "dd-write.bandwidth B/A 0.953"};
  EXPECT_EQ(format_progress(st),
            "[7/20] running t0007 B (dma-api) | 0:52 elapsed, ~1:36 left | dd-write.bandwidth B/A 0.953");
  st.remaining_seconds.reset();
  st.effect.clear();
  st.current.clear();
  st.last = "t0006 A panic";
  EXPECT_EQ(format_progress(st), "[7/20] | last t0006 A panic | 0:52 elapsed");
}

TEST(Progress, PlainLinesWhenNotATerminalAndInPlaceOnOne) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    ProgressPrinter plain(f, false);
    plain.update({.done = 1, .total = 2});
    plain.message("t0001 B panic");
  }
  std::fflush(f);
  EXPECT_EQ(std::string(buf, len), "abvm: [1/2] | 0:00 elapsed\nabvm: t0001 B panic\n");
  std::fclose(f);
  std::free(buf);
  buf = nullptr;
  f = open_memstream(&buf, &len);
  {
    ProgressPrinter tty(f, true);
    tty.update({.done = 10, .total = 20});
    tty.update({.done = 2, .total = 2});
    tty.finish();
  }
  std::fflush(f);
  EXPECT_EQ(std::string(buf, len), "\r[10/20] | 0:00 elapsed\r[2/2] | 0:00 elapsed  \n");
  std::fclose(f);
  std::free(buf);
}

}  // namespace
}  // namespace abvm

TEST(RunResultsDir, StaleTemporariesOfDeadProcessesAreRemovedOthersKept) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("abvm-stale-tmp-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "trials" / "t0001");
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const fs::path stale = dir / "trials" / "t0001" / ("initrd.img.tmp." + std::to_string(dead));
  const fs::path live = dir / ("analysis.json.tmp." + std::to_string(::getpid()));
  const fs::path other = dir / "notes.tmp.txt";
  for (const auto& p : {stale, live, other}) std::ofstream(p) << "x";
  auto removed = abvm::remove_stale_temporaries(dir);
  EXPECT_EQ(removed, std::vector<fs::path>{stale});
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  fs::remove_all(dir);
}
