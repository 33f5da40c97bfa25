// Results directory naming, the runner lock, the trial ledger, the scratch disk rules, the host
// environment record and progress lines.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "results/directory.hpp"

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

LedgerEntry finished(const std::string& id, Outcome outcome) {
  LedgerEntry r;
  r.trial = id;
  r.side = Side::b;
  r.outcome = outcome;
  r.attempts = 2;
  r.seconds = 3.25;
  r.time = "2026-11-29T20:01:02Z";
  r.detail = outcome == Outcome::ok ? "" : "Kernel panic - not syncing";
  return r;
}

TEST_F(ResultsDirTest, LedgerRoundTripsAndToleratesOnlyAnUnfinishedLastLine) {
  const fs::path ledger = dir / "trials.jsonl";
  append_line_durable(ledger, to_ledger_line(finished("t0000", Outcome::ok)));
  append_line_durable(ledger, to_ledger_line(finished("t0001", Outcome::panic)));
  const auto entries = read_ledger(ledger);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].trial, "t0001");
  EXPECT_EQ(entries[1].side, Side::b);
  EXPECT_EQ(entries[1].outcome, Outcome::panic);
  EXPECT_EQ(entries[1].attempts, 2);
  EXPECT_DOUBLE_EQ(entries[1].seconds, 3.25);
  EXPECT_EQ(entries[1].detail, "Kernel panic - not syncing");
  EXPECT_EQ(done_trials(entries), (std::set<std::string>{"t0000", "t0001"}));

  // A writer killed mid-line.
  write_file_atomic(ledger, read_file(ledger) + "{\"trial\":\"t0002\",\"si");
  std::string warning;
  EXPECT_EQ(read_ledger(ledger, [&](const std::string& w) { warning = w; }).size(), 2u);
  EXPECT_EQ(warning, ledger.string() + ":3: unfinished last line ignored (its writer was stopped mid-line)");

  // The same damage in the middle is not a crash artefact.
  write_file_atomic(ledger, "{\"trial\":\"t0002\",\"si\n" + to_ledger_line(finished("t0000", Outcome::ok)) + "\n");
  EXPECT_THROW(read_ledger(ledger), Error);
  // A line of the wrong shape names its line and field.
  std::string line = to_ledger_line(finished("t0000", Outcome::ok));
  line.replace(line.find("\"attempts\":2"), 12, "\"attempts\":\"2\"");
  write_file_atomic(ledger, to_ledger_line(finished("t0001", Outcome::ok)) + "\n" + line + "\n");
  try {
    read_ledger(ledger);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), ledger.string() + ":2: field \"attempts\" must be an integer, not \"2\"; the results "
                                                       "directory is damaged; start a new run");
  }
  EXPECT_TRUE(read_ledger(dir / "absent.jsonl").empty());
}

// run.json exactly as abvm wrote it before the manifest was typed (cli/run.cpp, 2026-11-29: the
// keys of a new run, then status, stop_reason and final_confidence at the end): a results
// directory of that time still resumes and re-analyses.
TEST_F(ResultsDirTest, ManifestOfEarlierAbvmVersionsReadsAndRoundTrips) {
  const ResultsDir d(dir);
  write_file_atomic(d.manifest(), R"({
  "abvm_version": "0.1.0",
  "config": "/work/main/configs/demo.toml",
  "config_dir": "/work/main/configs",
  "final_confidence": 0.9959,
  "started": "2026-11-29T20:01:02Z",
  "status": "stopped",
  "stop_reason": "verdict regression at look 2",
  "uri": ""
}
)");
  const RunManifest m = read_manifest(d);
  EXPECT_EQ(m.config, "/work/main/configs/demo.toml");
  EXPECT_EQ(m.config_dir, "/work/main/configs");
  EXPECT_EQ(m.status, RunStatus::stopped);
  EXPECT_EQ(m.stop_reason, "verdict regression at look 2");
  EXPECT_DOUBLE_EQ(m.final_confidence.value(), 0.9959);
  EXPECT_EQ(m.uri, "");
  write_manifest(d, m);
  const RunManifest again = read_manifest(d);
  EXPECT_EQ(again.status, m.status);
  EXPECT_EQ(again.final_confidence, m.final_confidence);

  // A running run's manifest has no stop_reason or final_confidence yet.
  write_file_atomic(d.manifest(), R"({"abvm_version":"0.1.0","config":"/c.toml","config_dir":"/","uri":"",)"
                                  R"("started":"2026-11-29T20:01:02Z","status":"running"})");
  EXPECT_FALSE(read_manifest(d).final_confidence.has_value());
}

// A run that stopped without an answer (run/first_block.hpp) keeps why: its resume says it again.
TEST_F(ResultsDirTest, AFailedRunKeepsItsFailure) {
  const ResultsDir d(dir);
  write_manifest(d, {.abvm_version = "0.1.0", .config = "/c.toml", .config_dir = "/", .started = "x",
                     .status = RunStatus::failed, .failure = "workload \"dd-read\" failed in every run"});
  const auto j = nlohmann::json::parse(read_file(d.manifest()));
  EXPECT_EQ(j.at("status"), "failed");
  EXPECT_EQ(j.at("failure"), "workload \"dd-read\" failed in every run");
  EXPECT_FALSE(j.contains("stop_reason"));
  const RunManifest m = read_manifest(d);
  EXPECT_EQ(m.status, RunStatus::failed);
  EXPECT_EQ(m.failure, "workload \"dd-read\" failed in every run");
  EXPECT_STREQ(to_string(RunStatus::failed), "failed");
}

TEST_F(ResultsDirTest, DamagedManifestIsAnErrorNamingTheField) {
  const ResultsDir d(dir);
  write_file_atomic(d.manifest(), R"({"abvm_version":"0.1.0","config":"/c.toml","uri":"","started":"x","status":"running"})");
  try {
    read_manifest(d);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), d.manifest().string() +
                                         ": field \"config_dir\" is missing (a string); the results directory is "
                                         "damaged; start a new run");
  }
  const auto error_of = [&](const std::string& text) {
    write_file_atomic(d.manifest(), text);
    try {
      read_manifest(d);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string head = R"({"abvm_version":"0.1.0","config":"/c.toml","config_dir":"/","uri":"","started":"x",)";
  const std::string damaged = "; the results directory is damaged; start a new run";
  EXPECT_EQ(error_of(head + R"("status":"paused"})"),
            d.manifest().string() + ": field \"status\" must be \"running\", \"complete\", \"stopped\" or \"failed\", not "
                                    "\"paused\"" + damaged);
  EXPECT_EQ(error_of(head + R"("status":"running","uris":["a",7]})"),
            d.manifest().string() + ": field \"uris[1]\" must be a string, not 7" + damaged);
  EXPECT_EQ(error_of(head + R"("status":"stopped","final_confidence":"high"})"),
            d.manifest().string() + ": field \"final_confidence\" must be a number, not \"high\"" + damaged);
  EXPECT_THROW(ResultsDir::open_run(dir / "nowhere"), Error);
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
