// End-to-end tests of `abvm analyze`: the real binary, real files, exit codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/files.hpp"
#include "core/process.hpp"
#include "results/directory.hpp"

using namespace abvm;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

const std::string kSeed = std::string(ABVM_TEST_DATA) + "/seed/";

ProcessResult abvm_run(std::vector<std::string> args) {
  args.insert(args.begin(), ABVM_BINARY);
  return run_process(args);
}

class CliAnalyze : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("abvm-cli-analyze-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

std::string numbers(double base, double step, int n) {
  std::string s = "# plain numbers\n";
  for (int i = 0; i < n; ++i) s += std::to_string(base + step * ((i * 7) % n)) + "\n";
  return s;
}

std::string fmt_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g\n", v);
  return buf;
}

}  // namespace

TEST_F(CliAnalyze, SeedPrintsModesAndAnInconclusiveVerdictWithExitCode4) {
  auto json_path = (dir_ / "seed.json").string();
  auto r = abvm_run({"analyze", "--a", kSeed + "dd-without-patches.txt", "--b", kSeed + "dd-with-patches.txt",
                     "--json", json_path});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("dd.bandwidth"));
  EXPECT_THAT(r.out, HasSubstr("modes:"));
  EXPECT_THAT(r.out, HasSubstr("verdict: inconclusive"));
  EXPECT_THAT(r.out, HasSubstr("same positions on both sides"));
  auto j = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["verdict"], "inconclusive");
  const auto& m = j["metrics"][0];
  EXPECT_EQ(m["name"], "dd.bandwidth");
  EXPECT_EQ(m["unit"], "B/s");
  EXPECT_EQ(m["better"], "higher");
  EXPECT_EQ(m["a"]["n"], 10);
  // Bandwidth from bytes / seconds, not the rounded "4.4 GB/s": run 1 of A took 1.95557 s.
  EXPECT_DOUBLE_EQ(m["a"]["runs"][0]["value"].get<double>(), 8589934592.0 / 1.95557);
  EXPECT_DOUBLE_EQ(m["a"]["max"].get<double>(), 8589934592.0 / 1.74049);
  EXPECT_EQ(m["modes"].size(), 2u);
  EXPECT_DOUBLE_EQ(m["modes"][0]["a_fraction"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(m["mann_whitney"]["u"].get<double>(), 56);
  EXPECT_NEAR(m["effect"]["estimate"].get<double>(), 0.951388, 1e-6);
  EXPECT_LT(m["effect"]["ci_low"].get<double>(), m["effect"]["estimate"].get<double>());
  EXPECT_GT(m["runs_needed"].get<int>(), 10);
  for (const char* key : {"median", "mean", "mad", "min", "max", "outliers"}) EXPECT_TRUE(m["b"].contains(key)) << key;
  for (const char* key : {"estimate", "ci_low", "ci_high", "confidence", "method"}) {
    EXPECT_TRUE(m["effect"].contains(key)) << key;
  }
  EXPECT_FALSE(m["warnings"].empty());
}

TEST_F(CliAnalyze, PlainNumbersRegressionExitsWith1) {
  auto a = write("a.txt", numbers(100, 0.5, 20));
  auto b = write("b.txt", numbers(80, 0.5, 20));
  auto r = abvm_run({"analyze", "--a", a, "--b", b, "--format", "numbers", "--metric", "throughput", "--unit",
                     "MB/s", "--higher-is-better"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("throughput"));
  EXPECT_THAT(r.out, HasSubstr("verdict: regression"));
}

TEST_F(CliAnalyze, LowerIsBetterNumbersImprovementExitsWith0) {
  auto a = write("a.txt", numbers(100, 0.5, 20));
  auto b = write("b.txt", numbers(80, 0.5, 20));
  auto r = abvm_run({"analyze", "--a", a, "--b", b, "--metric", "latency", "--unit", "us", "--lower-is-better"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: improvement"));
}

// Issue 26: 20 plain numbers per side, B 1.0 % above A, the sides cleanly apart (two modes, one
// side each), the default 5 % margin. A latency was a "Regression by modes" (exit 1) and a
// bandwidth no_change: now both are no_change, a significant shift inside the margin.
TEST_F(CliAnalyze, SidesOnePercentApartAreNoChangeAsALatencyAndAsABandwidth) {
  auto a = write("a.txt", numbers(100, 0.025, 20));  // 100 .. 100.475
  auto b = write("b.txt", numbers(101, 0.025, 20));  // 101 .. 101.475: 1.0 % above, apart from A
  for (const char* direction : {"--lower-is-better", "--higher-is-better"}) {
    SCOPED_TRACE(direction);
    auto r = abvm_run({"analyze", "--a", a, "--b", b, "--format", "numbers", "--metric", "m", "--unit", "us", direction});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("  modes: [")) << "the sides are apart: the mode rule is asked";
    EXPECT_THAT(r.out, HasSubstr("a significant shift, inside the ±"));
    EXPECT_THAT(r.out, HasSubstr("verdict: no_change"));
    EXPECT_THAT(r.out, Not(HasSubstr("Regression by modes")));
  }
}

TEST_F(CliAnalyze, BadInputExitsWith2NamingFileAndLineAndPrintsNoVerdict) {
  auto a = write("a.txt", "1\n2\nnan\n");
  auto b = write("b.txt", numbers(80, 0.5, 5));
  auto r = abvm_run({"analyze", "--a", a, "--b", b, "--format", "numbers", "--unit", "s", "--lower-is-better"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("abvm: error: " + a + ":3:"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("verdict")));
}

TEST_F(CliAnalyze, EmptyFileAndMissingSideAreUsageErrors) {
  auto empty = write("empty.txt", "");
  auto r = abvm_run({"analyze", "--a", empty, "--b", kSeed + "dd-with-patches.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(empty));
  auto r2 = abvm_run({"analyze", "--a", kSeed + "dd-with-patches.txt"});
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_THAT(r2.err, HasSubstr("give files for both sides"));
}

TEST_F(CliAnalyze, UnknownOptionIsAUsageError) {
  auto r = abvm_run({"analyze", "--frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliAnalyze, HelpMentionsTheExitCodes) {
  auto r = abvm_run({"analyze", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("4 inconclusive"));
  EXPECT_THAT(r.out, HasSubstr("--higher-is-better"));
}

// Issue 11 item 5, through the binary. Before: exit 3 "internal error: quantile: non-finite
// value" for the first two, "is not a number" for the BOM and 1e400.
TEST_F(CliAnalyze, ExtremeValuesAreAnalysedOrRejectedNamingFileAndLine) {
  std::string huge_a, huge_b, tiny;
  for (int i = 0; i < 12; ++i) {
    huge_a += fmt_number(1.7e308 - 1e306 * i);
    huge_b += fmt_number(1.6e308 - 1e306 * ((i * 5) % 12));
    tiny += fmt_number(1e-300 * (1 + 0.01 * i));
  }
  auto r = abvm_run({"analyze", "--a", write("a.txt", huge_a), "--b", write("b.txt", huge_b), "--unit", "B/s",
                     "--higher-is-better"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // B is about 6 % lower
  EXPECT_THAT(r.out, HasSubstr("verdict: regression"));

  const std::string small = write("small.txt", tiny);
  auto apart = abvm_run({"analyze", "--a", small, "--b", write("big.txt", "1e300\n2e300\n3e300\n"), "--unit", "s",
                         "--lower-is-better"});
  EXPECT_EQ(apart.exit_code, 2) << apart.out << apart.err;
  EXPECT_THAT(apart.err, HasSubstr(":3: metric"));  // the largest value, 3e300, is on line 3
  EXPECT_THAT(apart.err, HasSubstr(small + ":1"));   // the smallest, on line 1
  EXPECT_THAT(apart.err, HasSubstr("orders of magnitude apart"));

  auto bom = abvm_run({"analyze", "--a", write("bom.txt", "\xEF\xBB\xBF" "1010\n1020\n1030\n1040\n"), "--b",
                       write("plain.txt", "1010\n1020\n1030\n1040\n"), "--unit", "s", "--lower-is-better"});
  EXPECT_NE(bom.exit_code, 2) << bom.err;
  EXPECT_NE(bom.exit_code, 3) << bom.err;

  const std::string range = write("range.txt", "1000\n1e400\n");
  auto out_of_range = abvm_run({"analyze", "--a", range, "--b", write("c.txt", "1000\n1001\n"), "--unit", "s",
                                "--lower-is-better"});
  EXPECT_EQ(out_of_range.exit_code, 2);
  EXPECT_THAT(out_of_range.err, HasSubstr(range + ":2: \"1e400\" is out of range"));
}

// Issue 11 item 6: `abvm analyze RESULTS_DIR` analyses as the run did (its [analysis] margin, seed
// and metrics, and run.json's final_confidence) and so writes the run's analysis.json again.
// Before: the defaults (margin 0.05, confidence 0.95, every metric), so the two disagreed.
TEST_F(CliAnalyze, ResultsDirectoryReproducesItsAnalysisAndSaysWhatTheCommandLineOverrides) {
  const fs::path dir = dir_ / "run";
  fs::copy(std::string(ABVM_TEST_DATA) + "/report/results-demo", dir, fs::copy_options::recursive);
  {
    std::ofstream config(dir / "config.toml", std::ios::app);
    config << "\n[analysis]\nmargin = 0.2\nseed = 7\nmetrics = [{ name = \"dd-write.bandwidth\" }]\n";
  }
  const ResultsDir results(dir);
  write_manifest(results, {.abvm_version = "test", .config = dir / "config.toml", .config_dir = dir,
                           .started = "2026-11-29T00:00:00Z", .status = RunStatus::complete,
                           .final_confidence = 0.99});
  write_file_atomic(results.plan(), "{}\n");  // a finished run reads no plan
  auto run = abvm_run({"run", "--resume", dir.string()});
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1 || run.exit_code == 4) << run.out << run.err;
  const auto saved = nlohmann::json::parse(read_file(results.analysis()));
  ASSERT_EQ(saved["options"]["margin"], 0.2);
  ASSERT_EQ(saved["options"]["confidence"], 0.99);

  const std::string again = (dir_ / "again.json").string();
  auto analyze = abvm_run({"analyze", dir.string(), "--json", again});
  EXPECT_EQ(analyze.exit_code, run.exit_code) << analyze.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(again)), saved);
  EXPECT_EQ(analyze.err, "");

  const std::string wider = (dir_ / "wider.json").string();
  auto overridden = abvm_run({"analyze", dir.string(), "--margin", "0.3", "--confidence", "0.9", "--json", wider});
  EXPECT_THAT(overridden.err, HasSubstr("--margin 0.3 overrides the experiment's margin 0.2"));
  EXPECT_THAT(overridden.err, HasSubstr("--confidence 0.9 overrides the experiment's confidence 0.99"));
  const auto w = nlohmann::json::parse(read_file(wider));
  EXPECT_EQ(w["options"]["margin"], 0.3);
  EXPECT_EQ(w["options"]["confidence"], 0.9);
  EXPECT_EQ(w["options"]["seed"], 7);
  EXPECT_EQ(w["metrics"].size(), 1u);
}

// `abvm analyze RESULTS_DIR` leaves out the pairs of runs that started further apart than the
// experiment's schedule.max_start_skew, in co-scheduled runs only: the results-co-scheduled fixture's
// dd pairs that started 371 and 100 ms apart (overlaps 0.62 and 0.9, data/report/README.md). An old
// experiment's schedule.min_overlap leaves nothing out any more. Lockstep alternates its runs by
// intent: the overlaps are shown, nothing is left out.
TEST_F(CliAnalyze, ResultsDirectoryLeavesOutPairsThatStartedTooFarApartWhenTheDesignOverlapsThem) {
  const auto analyze_with = [&](const std::string& name, const std::string& schedule_edit) {
    const fs::path dir = dir_ / name;
    fs::copy(std::string(ABVM_TEST_DATA) + "/report/results-co-scheduled", dir, fs::copy_options::recursive);
    std::string config = read_file(dir / "config.toml");
    config.replace(config.find("design = \"co-scheduled\""), std::string("design = \"co-scheduled\"").size(),
                   schedule_edit);
    write_file_atomic(dir / "config.toml", config);
    const ResultsDir results(dir);
    write_manifest(results, {.abvm_version = "test", .config = dir / "config.toml", .config_dir = dir,
                             .started = "2026-11-29T00:00:00Z", .status = RunStatus::complete});
    write_file_atomic(results.plan(), "{}\n");
    const std::string out = (dir_ / (name + ".json")).string();
    const auto r = abvm_run({"analyze", dir.string(), "--json", out});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.err;
    EXPECT_EQ(r.err, "");
    return nlohmann::json::parse(read_file(out))["metrics"][0]["overlap"];
  };
  const auto co = analyze_with("co", "design = \"co-scheduled\"");
  EXPECT_EQ(co["max_start_skew_ms"], 50.0);
  EXPECT_EQ(co["voided"], 2);
  EXPECT_EQ(co["pairs"], 24);
  const auto wider = analyze_with("wider", "design = \"co-scheduled\"\nmax_start_skew = \"200ms\"");
  EXPECT_EQ(wider["max_start_skew_ms"], 200.0);
  EXPECT_EQ(wider["voided"], 1) << "only the pair 371 ms apart";
  const auto old = analyze_with("old", "design = \"co-scheduled\"\nmin_overlap = 0.99");
  EXPECT_EQ(old["voided"], 2) << "the old key is read and not used: the skew decides";
  EXPECT_FALSE(old.contains("threshold"));
  const auto lockstep = analyze_with("lockstep", "design = \"lockstep\"");
  EXPECT_TRUE(lockstep["max_start_skew_ms"].is_null());
  EXPECT_EQ(lockstep["voided"], 0);
  EXPECT_EQ(lockstep["min"], 0.62);
}
