// Every test ctest knows has a timeout and its two labels (its kind and its stage), and the kind is
// true: read from `ctest --show-only=json-v1` on this build tree, i.e. what ctest will really do.
// (CMake 3.25's gtest_discover_tests(PROPERTIES LABELS "a;b" TIMEOUT n) kept the first label only
// and no timeout; this test is what would have caught it.)
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace fs = std::filesystem;
using abvm::run_process;
using nlohmann::json;

namespace {

const std::set<std::string> kKinds = {"unit", "guest", "kernel-build", "download", "browser", "controls"};

struct CtestEntry {
  std::string name;
  std::string binary;  // file name of the program the test runs
  std::vector<std::string> labels;
  double timeout = 0;  // 0: none
  bool run_serial = false;
};

struct CtestTests {
  std::vector<CtestEntry> tests;
  std::set<std::string> not_built;  // programs this build tree did not build
};

CtestTests ctest_tests() {
  const fs::path build = fs::path(ABVM_BINARY).parent_path();
  const auto r = run_process({"ctest", "--test-dir", build.string(), "--show-only=json-v1"});
  if (r.exit_code != 0) throw std::runtime_error("ctest --show-only=json-v1 failed: " + r.err);
  const json doc = json::parse(r.out);
  CtestTests out;
  for (const auto& t : doc.at("tests")) {
    CtestEntry e{.name = t.at("name").get<std::string>()};
    // A test program this build tree did not build (CI's sanitizer build makes the unit tests'
    // programs only: --target abvm_unit_tests) is one placeholder, <program>_NOT_BUILT, that ctest
    // -L never selects.
    if (const std::string suffix = "_NOT_BUILT"; e.name.ends_with(suffix)) {
      out.not_built.insert(e.name.substr(0, e.name.size() - suffix.size()));
      continue;
    }
    if (t.contains("command") && !t["command"].empty()) {
      e.binary = fs::path(t["command"][0].get<std::string>()).filename().string();
    }
    for (const auto& p : t.value("properties", json::array())) {
      if (p.at("name") == "LABELS") e.labels = p.at("value").get<std::vector<std::string>>();
      if (p.at("name") == "TIMEOUT") e.timeout = p.at("value").get<double>();
      if (p.at("name") == "RUN_SERIAL") e.run_serial = p.at("value").get<bool>();
    }
    out.tests.push_back(std::move(e));
  }
  return out;
}

std::string kind_of(const CtestEntry& t) {
  for (const auto& l : t.labels) {
    if (kKinds.contains(l)) return l;
  }
  return "";
}

}  // namespace

TEST(CoreCtestLabels, EveryTestHasATimeoutAKindAndAStage) {
  const auto tests = ctest_tests().tests;
  ASSERT_GT(tests.size(), 100u) << "ctest knows too few tests: is this the build tree?";
  for (const auto& t : tests) {
    EXPECT_NE(t.binary, "") << t.name << ": ctest has no command for it (is its test program built?)";
    EXPECT_GT(t.timeout, 0) << t.name << " has no TIMEOUT";
    ASSERT_EQ(t.labels.size(), 2u) << t.name << " should have exactly two labels (its kind, stage:<stage>)";
    EXPECT_NE(kind_of(t), "") << t.name << ": no kind label (unit, guest, kernel-build, download, browser, controls)";
    std::string stage;  // ctest lists labels sorted
    for (const auto& l : t.labels) {
      if (l.starts_with("stage:")) stage = l;
    }
    ASSERT_NE(stage, "") << t.name << " has no stage:<stage> label";
    EXPECT_TRUE(t.binary.starts_with("abvm_" + stage.substr(6) + "_")) << t.name << " runs " << t.binary
                                                                       << " but is labelled " << stage;
  }
}

// The kind says what a test needs: a unit test runs in the per-stage binary and fast; the Debian
// kernel download is not a unit test, the Chromium screenshot boots no guest.
TEST(CoreCtestLabels, KindsAreTrue) {
  const CtestTests all = ctest_tests();
  std::map<std::string, std::set<std::string>> kinds_by_binary;
  std::size_t units = 0, serial_units = 0;
  for (const auto& t : all.tests) {
    const std::string kind = kind_of(t);
    kinds_by_binary[t.binary].insert(kind);
    const bool stage_binary = t.binary.ends_with("_tests");  // abvm_<stage>_tests
    EXPECT_EQ(kind == "unit", stage_binary) << t.name << " (" << t.binary << ") is labelled " << kind;
    if (kind == "unit") {
      EXPECT_LE(t.timeout, 120) << t.name;
    }
    // `ctest -j2` (README's test command) runs unit tests two at a time, and every other test alone,
    // as it does the unit tests that check real time (ABVM_TIMED_UNIT_TEST_RE), the agent's among them.
    if (kind != "unit" || t.name.starts_with("GuestAgentSteps.")) {
      EXPECT_TRUE(t.run_serial) << t.name << " (" << kind << ") runs beside other tests";
    }
    if (kind == "unit" && t.run_serial) ++serial_units;
    if (kind == "unit") ++units;
  }
  const std::map<std::string, std::string> known = {
      {"abvm_kernels_debian_test", "download"},     {"abvm_report_chromium_e2e_test", "browser"},
      {"abvm_kernels_build_test", "kernel-build"},  {"abvm_cli_run_e2e_test", "guest"},
      {"abvm_guest_libvirt_driver_test", "guest"},  {"abvm_cli_controls_test", "controls"}};
  for (const auto& [binary, kind] : known) {
    if (all.not_built.contains(binary)) continue;  // e.g. the sanitizer build's unit tests alone
    EXPECT_EQ(kinds_by_binary[binary], std::set<std::string>{kind}) << binary;
  }
  EXPECT_LT(serial_units * 5, units) << "most unit tests run two at a time";
  // abvm_unit_tests builds every unit program: a tree may lack the others only.
  for (const auto& binary : all.not_built) {
    EXPECT_FALSE(binary.ends_with("_tests")) << binary << ", a unit test program, was not built";
  }
}
