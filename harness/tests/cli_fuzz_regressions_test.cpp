// Replays every kept fuzz input (harness/fuzz/regressions/<target>/: inputs that once crashed,
// and harness/fuzz/corpus/<target>/: the seeds) through the same entry points the libFuzzer
// programs use (harness/fuzz/targets.hpp), so the ordinary test run, built with GCC, guards every
// fixed crash without clang. An input that still crashes aborts this binary: the SIGABRT handler
// names it first.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/utf8.hpp"
#include "fuzz/targets.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(ABVM_SOURCE_DIR) / "harness" / "fuzz";

const std::map<std::string, std::function<void(std::string_view)>>& targets() {
  static const std::map<std::string, std::function<void(std::string_view)>> t = {
      {"experiment", abvm::fuzz::fuzz_experiment}, {"dd", abvm::fuzz::fuzz_dd},
      {"fio", abvm::fuzz::fuzz_fio},               {"numbers", abvm::fuzz::fuzz_numbers},
      {"journal", abvm::fuzz::fuzz_journal},       {"records", abvm::fuzz::fuzz_records},
      {"job_xml", abvm::fuzz::fuzz_job_xml},       {"plan", abvm::fuzz::fuzz_plan},
      {"calibration", abvm::fuzz::fuzz_calibration}, {"results", abvm::fuzz::fuzz_results},
      {"kernels", abvm::fuzz::fuzz_kernels},       {"bisect", abvm::fuzz::fuzz_bisect},
      {"analysis", abvm::fuzz::fuzz_analysis}};
  return t;
}

char g_current[4096];

void name_current_input(int sig) {
  const char head[] = "\nfuzz replay crashed on: ";
  (void)!::write(2, head, sizeof head - 1);
  (void)!::write(2, g_current, std::strlen(g_current));
  (void)!::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<fs::path> inputs_of(const std::string& target, const std::string& kind) {
  std::vector<fs::path> out;
  const fs::path dir = kFuzzDir / kind / target;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t replay(const std::string& kind) {
  std::signal(SIGABRT, name_current_input);
  std::size_t n = 0;
  for (const auto& [name, fn] : targets()) {
    for (const auto& path : inputs_of(name, kind)) {
      std::snprintf(g_current, sizeof g_current, "%s", path.c_str());
      fn(abvm::read_file(path));
      ++n;
    }
  }
  std::signal(SIGABRT, SIG_DFL);
  return n;
}

TEST(CliFuzzRegressions, EveryTargetHasASeedCorpusAndAProgram) {
  for (const auto& [name, fn] : targets()) {
    EXPECT_FALSE(inputs_of(name, "corpus").empty()) << "no seeds in harness/fuzz/corpus/" << name;
    EXPECT_TRUE(fs::exists(kFuzzDir / ("fuzz_" + name + ".cpp"))) << name;
  }
  // And no fuzz program without a replayed target.
  for (const auto& e : fs::directory_iterator(kFuzzDir)) {
    const std::string f = e.path().filename().string();
    if (f.starts_with("fuzz_") && f.ends_with(".cpp")) {
      EXPECT_TRUE(targets().count(f.substr(5, f.size() - 9)) == 1) << f << " is not replayed here";
    }
  }
}

TEST(CliFuzzRegressions, KeptCrashInputsNoLongerCrash) { EXPECT_GT(replay("regressions"), 0u); }

TEST(CliFuzzRegressions, SeedCorpusRunsClean) { EXPECT_GT(replay("corpus"), 0u); }

// The seeds of the readers of abvm's own files are files of their kind, as abvm writes them: each
// one reads without an error as the type its name says (a seed the reader refused would leave the
// fuzzer outside the reader).
template <class T>
void reads_as(const fs::path& seed) {
  SCOPED_TRACE(seed.string());
  const std::string text = abvm::read_file(seed);
  const abvm::JsonDocument doc(text, abvm::JsonSource{.file = seed.string(), .line = 1});
  EXPECT_NO_THROW((void)doc.root().as<T>());
}

TEST(CliFuzzRegressions, TheFileReadersSeedsAreFilesTheyAccept) {
  for (const auto& seed : inputs_of("plan", "corpus")) reads_as<abvm::Plan>(seed);
  for (const auto& seed : inputs_of("calibration", "corpus")) reads_as<abvm::HostCalibration>(seed);
  for (const auto& seed : inputs_of("results", "corpus")) {
    if (seed.extension() == ".jsonl") reads_as<abvm::LedgerEntry>(seed);
    else reads_as<abvm::RunManifest>(seed);
  }
  for (const auto& seed : inputs_of("kernels", "corpus")) {
    if (seed.filename() == "patched-paths.json") reads_as<std::vector<std::string>>(seed);
    else reads_as<abvm::fuzz::CachedKernel>(seed);
  }
  for (const auto& seed : inputs_of("analysis", "corpus")) {
    SCOPED_TRACE(seed.string());
    const auto j = nlohmann::json::parse(abvm::read_file(seed));
    const abvm::JsonOrigin origin{.file = seed.string(), .advice = "a seed"};
    const std::string name = seed.filename().string();
    if (name == "environment.json") EXPECT_NO_THROW((void)abvm::read_host_environment(j, origin));
    else if (name == "kernels.json") EXPECT_EQ(abvm::read_side_kernels(j, origin).size(), 2u);
    else EXPECT_NO_THROW((void)abvm::read_report_data(j, origin));
  }
  for (const auto& seed : inputs_of("bisect", "corpus")) {
    if (seed.extension() == ".jsonl") reads_as<abvm::StepRecord>(seed);
    else reads_as<abvm::BisectPlan>(seed);
  }
}

// The invariant helpers the targets rely on: if these were wrong, the fuzzers would miss bugs.
TEST(CliFuzzRegressions, Utf8Check) {
  using abvm::fuzz::valid_utf8;
  EXPECT_TRUE(valid_utf8("plain ascii <&>"));
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xff"));
  EXPECT_FALSE(valid_utf8("caf\xc3"));               // cut off
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));              // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));          // surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));      // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x98"));
  EXPECT_FALSE(valid_utf8("\xef\xbf\xbf"));          // U+FFFF: UTF-8, but no XML character
  // Making text well-formed replaces each byte the check stops at, and nothing else.
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(abvm::to_well_formed_utf8("caf\xc3\xa9 \xe2\x98\x83"), "caf\xc3\xa9 \xe2\x98\x83");
  EXPECT_EQ(abvm::to_well_formed_utf8("a\xffz"), "a" + fffd + "z");
  EXPECT_EQ(abvm::to_well_formed_utf8("5\x98"), "5" + fffd);
  EXPECT_EQ(abvm::to_well_formed_utf8("\xef\xbf\xbf"), fffd + fffd + fffd);
  EXPECT_TRUE(valid_utf8(abvm::to_well_formed_utf8("\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf\xe2\x98")));
}

TEST(CliFuzzRegressions, SafeFileNameCheck) {
  using abvm::fuzz::safe_file_name;
  EXPECT_TRUE(safe_file_name("dd-write"));
  EXPECT_TRUE(safe_file_name("..."));
  EXPECT_FALSE(safe_file_name(""));
  EXPECT_FALSE(safe_file_name(".."));
  EXPECT_FALSE(safe_file_name("../x"));
  EXPECT_FALSE(safe_file_name("a\nb"));
}

TEST(CliFuzzRegressions, BrokenInvariantAborts) {
  EXPECT_DEATH(abvm::fuzz::fuzz_check(false, "demo"), "abvm fuzz invariant broken: demo");
}

}  // namespace
