// The shipped controls, reduced, on real guests (the `controls` ctest label; issues 11 and 19).
// configs/swiotlb-control.toml (B bounces every DMA through swiotlb) must come out a regression and
// configs/aa-control.toml (the same side twice) must not, in the design they ship with
// (co-scheduled): a change to the guest, the driver, the design or the analysis that breaks
// either fails here, not only in a README table. Each runs 8 blocks instead of 10.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct ControlRun {
  int exit_code = -1;
  json analysis;
  std::vector<json> journal;  // its lines
  std::string err;
  fs::path dir;
};

// The run's files go once the test has passed; they stay for a look when it failed.
void clean_up(const ControlRun& r) {
  if (!r.dir.empty() && !::testing::Test::HasFailure()) fs::remove_all(r.dir);
}

// Runs configs/<name>.toml with boots_per_side = `boots` (and `analysis` lines added to its
// [analysis] table) and returns its exit code and analysis.json.
ControlRun run_control(const std::string& name, int boots = 8, const std::string& analysis = "") {
  std::string text = read_file(fs::path(ABVM_SOURCE_DIR) / "configs" / (name + ".toml"));
  const auto at = text.find("boots_per_side = 10");
  EXPECT_NE(at, std::string::npos) << name << ".toml no longer has boots_per_side = 10: update this test";
  if (at == std::string::npos) return {};
  text.replace(at, 19, "boots_per_side = " + std::to_string(boots));
  if (!analysis.empty()) {
    const auto table = text.find("\n[analysis]\n");
    EXPECT_NE(table, std::string::npos) << name << ".toml has no [analysis] table";
    if (table == std::string::npos) return {};
    text.insert(table + 12, analysis);
  }
  const fs::path dir = fs::temp_directory_path() / ("abvm-controls-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / (name + ".toml"), text);
  const ProcessResult r = run_process(
      {ABVM_BINARY, "run", "--results-dir", (dir / "results").string(), (dir / (name + ".toml")).string()},
      {.timeout = std::chrono::minutes(15)});
  ControlRun out{.exit_code = r.exit_code, .err = r.err, .dir = dir};
  for (const auto& e : fs::directory_iterator(dir / "results")) {
    if (fs::exists(e.path() / "analysis.json")) out.analysis = json::parse(read_file(e.path() / "analysis.json"));
    if (fs::exists(e.path() / "journal.jsonl")) {
      std::istringstream lines(read_file(e.path() / "journal.jsonl"));
      for (std::string line; std::getline(lines, line);) out.journal.push_back(json::parse(line));
    }
  }
  return out;
}

const json* metric_named(const json& analysis, const std::string& name) {
  for (const auto& m : analysis["metrics"]) {
    if (m["name"] == name) return &m;
  }
  return nullptr;
}

TEST(ControlsE2ETest, SwiotlbForceIsARegression) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const ControlRun r = run_control("swiotlb-control");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  EXPECT_EQ(r.analysis["verdict"], "regression");
  EXPECT_EQ(r.analysis["options"]["primary_estimate"], "paired");
  EXPECT_EQ(r.analysis["source"]["design"], "co-scheduled");
  // Issue 27: bouncing every DMA costs the host more CPU per GiB, reported and not judged (the verdict
  // above is bandwidth's); and the bytes the host's disk counted in each window are the tool's, times
  // the runs the window held (the measured one, the filler's finished ones, and at most one cut short).
  for (const std::string workload : {"dd-write", "fio-seqwrite"}) {
    const json* cost = metric_named(r.analysis, workload + ".host_cpu_per_gib");
    ASSERT_NE(cost, nullptr) << workload;
    EXPECT_EQ(cost->at("judged"), false);
    EXPECT_GT(cost->at("effect").at("ci_low").get<double>(), 1.0) << workload << ": " << cost->at("headline");
  }
  // The figures README quotes (run this binary directly to see them).
  for (const auto& m : r.analysis["metrics"]) {
    if (m["name"].get<std::string>().find("_cpu_per_") != std::string::npos) std::cout << m["headline"] << "\n";
  }
  std::size_t windows = 0;
  for (const json& e : r.journal) {
    if (e["outcome"] != "ok") continue;
    ASSERT_TRUE(e.contains("cost")) << e.dump();
    const json& c = e["cost"];
    ASSERT_TRUE(c.contains("host")) << e.dump();
    const double tool = c.at("tool_bytes").get<double>(), runs = c.at("tool_runs").get<double>();
    const double disk = c.at("host").at("disk_bytes").get<double>();
    EXPECT_GE(disk, 0.95 * tool * runs) << e.dump();
    EXPECT_LE(disk, 1.05 * tool * (runs + 1)) << e.dump();
    ++windows;
  }
  EXPECT_GT(windows, 0u);
  clean_up(r);
}

TEST(ControlsE2ETest, TheSameSideTwiceIsNoRegression) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const ControlRun r = run_control("aa-control");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  EXPECT_NE(r.analysis["verdict"], "regression");
  for (const auto& m : r.analysis["metrics"]) EXPECT_NE(m["verdict"], "regression") << m["headline"];
  clean_up(r);
}

// configs/neighbour-control.toml (issue 19 item 3): B limits virtio-blk to one request in flight.
// The queue-depth-bound fio job must come out a regression, and the single-request dd, which that
// cannot slow down, neither an improvement nor a regression: its verdict must not depend on its
// slow neighbour. Every pair of runs overlapped (the paired windows), none was voided.
TEST(ControlsE2ETest, ASlowNeighbourDoesNotMoveAWorkloadItCannotAffect) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  // 8 blocks: its 3 metrics put each interval at 98.33 %, which a signed-rank interval of n pairs
  // reaches only from n = 7 (1 - 2/2^n); 8 leave one block to spare.
  const ControlRun r = run_control("neighbour-control", 8);
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  std::map<std::string, std::string> verdicts;
  for (const auto& m : r.analysis["metrics"]) verdicts[m["name"]] = m["verdict"];
  EXPECT_EQ(verdicts["fio-rand.write.bandwidth"], "regression") << r.err;
  EXPECT_EQ(verdicts["fio-rand.write.clat_p50"], "regression") << r.err;
  EXPECT_NE(verdicts["dd-4k.bandwidth"], "regression") << r.err;
  EXPECT_NE(verdicts["dd-4k.bandwidth"], "improvement") << r.err;
  EXPECT_EQ(r.analysis["source"]["design"], "co-scheduled");
  clean_up(r);
}

// What a ruler's config states of a metric: "# expected: <metric> <ratio> [<low>, <high>]" (the
// range where the ratio depends on each side's time beyond the model: the short runs).
struct Expected {
  double ratio = 0, low = 0, high = 0;  // low = high = ratio without a range
  bool range = false;
};
std::map<std::string, Expected> expected_ratios(const std::string& name) {
  std::map<std::string, Expected> out;
  const std::string text = read_file(fs::path(ABVM_SOURCE_DIR) / "configs" / (name + ".toml"));
  const std::regex line(R"(\n# expected: (\S+) ([0-9.]+)(?: \[([0-9.]+), ([0-9.]+)\])?\n)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    Expected e{.ratio = std::stod((*it)[2])};
    e.range = (*it)[3].matched;
    e.low = e.range ? std::stod((*it)[3]) : e.ratio;
    e.high = e.range ? std::stod((*it)[4]) : e.ratio;
    out[(*it)[1]] = e;
  }
  return out;
}

// configs/ruler-10.toml in the design it ships with (co-scheduled): both sides' disks throttled,
// B's caps 0.90 of A's, so B/A is known by construction (the config's "# expected:" lines, from
// QEMU's burst model, which puts it within 0.15 % for any tool overhead of 0-60 ms, and for the
// 0.27-0.31 s runs of dd-write-short within the range that each side's overhead measured in
// isolation gives). Every metric is a regression, and its interval, at 98 % for the family (99.3 %
// each: 9 of the 10 blocks are enough to reach it), meets the expected ratio (the range for the short
// runs): the paired design measures the true effect at both run lengths (issue 26: with the filler's
// fork and DONE's checksum in the window, the short runs' slower side paid 4-5 ms more, about 1.5 %;
// with both guests on one CPU it still paid 3-4 ms for its partner's CPU work, and this test failed in
// CI at 0.849-0.867: the ruler now runs on CPUs 0-1).
TEST(ControlsE2ETest, TheTenPercentRulerIsMeasuredAtItsKnownRatio) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const std::map<std::string, Expected> expected = expected_ratios("ruler-10");
  ASSERT_EQ(expected.size(), 3u);
  ASSERT_TRUE(expected.at("dd-write-short.bandwidth").range);
  const ControlRun r = run_control("ruler-10", 10, "confidence = 0.98\n");
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  EXPECT_EQ(r.analysis["source"]["design"], "co-scheduled");
  EXPECT_EQ(r.analysis["verdict"], "regression");
  // The judged metrics are the ruler's three; its runs' cost is reported beside them, not judged
  // (issue 27).
  std::size_t judged = 0;
  for (const auto& m : r.analysis.at("metrics")) judged += m.at("judged").get<bool>() ? 1 : 0;
  EXPECT_EQ(judged, expected.size());
  for (const auto& [name, e] : expected) {
    const json* found = metric_named(r.analysis, name);
    ASSERT_NE(found, nullptr) << name;
    const json& m = *found;
    const double low = m.at("effect").at("ci_low"), high = m.at("effect").at("ci_high");
    EXPECT_EQ(m.at("verdict"), "regression") << name;
    EXPECT_LE(low, e.high * 1.0015) << m["name"] << ": [" << low << ", " << high << "] against [" << e.low << ", " << e.high << "]";
    EXPECT_GE(high, e.low * 0.9985) << m["name"] << ": [" << low << ", " << high << "] against [" << e.low << ", " << e.high << "]";
    EXPECT_EQ(m.at("overlap").at("voided"), 0) << m["name"];
  }
  clean_up(r);
}

}  // namespace
}  // namespace abvm
