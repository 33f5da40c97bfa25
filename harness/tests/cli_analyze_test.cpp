// End-to-end tests of `abvm analyze`: the real binary, real files, exit codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/files.hpp"
#include "core/process.hpp"

using namespace abvm;
using ::testing::HasSubstr;
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
