// The designs of issue 10 end to end with real guests: the real `abvm run` boots them through
// libvirt, and what the plan, the domain XML, the journal and the analysis say is checked against
// what the design promises.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

double epoch_seconds(const std::string& iso) {
  std::tm tm{};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return static_cast<double>(timegm(&tm));
}

std::vector<json> jsonl(const fs::path& file) {
  std::vector<json> out;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// Runs `experiment` with the real abvm; returns its results directory.
fs::path run_experiment(const std::string& name, const std::string& experiment) {
  const fs::path dir = fs::temp_directory_path() / ("abvm-designs-e2e-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / "experiment.toml", experiment);
  const ProcessResult r = run_process(
      {ABVM_BINARY, "run", "--results-dir", (dir / "results").string(), (dir / "experiment.toml").string()},
      {.timeout = std::chrono::minutes(9)});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  fs::path d;
  if (fs::exists(dir / "results")) {
    for (const auto& e : fs::directory_iterator(dir / "results")) d = e.path();
  }
  return d;
}

// Same-guest on two lanes: each block is one guest holding both sides' disks (B's with
// iommu_platform), the guest alternates its runs between them and reports each disk's features,
// so side A's runs say VIRTIO_F_ACCESS_PLATFORM was not negotiated and side B's that it was; the
// two lanes (host CPUs 0 and 1) run blocks at the same time; the paired estimate decides.
TEST(DesignsE2ETest, SameGuestOnTwoLanesMeasuresBothDisksInEachBootAndBlocksOverlap) {
  if (!find_program("qemu-system-x86_64")) GTEST_SKIP() << "qemu-system-x86_64 is not installed";
  const fs::path d = run_experiment("same-guest", R"(name = "same-guest"
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
[schedule]
seed = 3
boots_per_side = 4
design = "same-guest"
cpu_sets = ["0", "1"]
)");
  ASSERT_FALSE(d.empty());
  const json plan = json::parse(read_file(d / "plan.json"));
  EXPECT_EQ(plan["design"], "same-guest");
  ASSERT_EQ(plan["trials"].size(), 4u);
  std::set<std::string> lanes;
  std::map<std::string, std::pair<double, double>> span;  // trial -> (start, end)
  for (const json& t : jsonl(d / "trials.jsonl")) {
    EXPECT_EQ(t["outcome"], "ok") << t.dump();
    const double end = epoch_seconds(t["time"]);
    span[t["trial"]] = {end - t["seconds"].get<double>(), end};
  }
  for (const json& t : plan["trials"]) {
    const std::string id = t["id"];
    const std::string xml = read_file(d / "trials" / id / "domain.xml");
    EXPECT_NE(xml.find("<serial>abvm-scratch-a</serial>"), std::string::npos) << id;
    EXPECT_NE(xml.find("<serial>abvm-scratch-b</serial>"), std::string::npos) << id;
    EXPECT_NE(xml.find("iommu=\"on\""), std::string::npos) << id;
    EXPECT_NE(xml.find("iommu=\"off\""), std::string::npos) << id;
    lanes.insert(json::parse(read_file(d / "trials" / id / "result.json"))["lane"].get<std::string>());
  }
  EXPECT_EQ(lanes, (std::set<std::string>{"cpu 0", "cpu 1"}));
  // The first two blocks ran on the two lanes at once.
  const auto [s0, e0] = span["t0000"];
  const auto [s1, e1] = span["t0001"];
  EXPECT_GT(std::min(e0, e1) - std::max(s0, s1), 0.5 * std::min(e0 - s0, e1 - s1));
  // Every boot measured both sides, each on its own disk as its device options say.
  std::map<std::string, std::map<std::string, int>> runs;  // boot -> side -> runs
  for (const json& e : jsonl(d / "journal.jsonl")) {
    EXPECT_EQ(e["outcome"], "ok") << e.dump();
    ++runs[e["boot"]][e["side"]];
    EXPECT_EQ(e["guest"]["facts"]["virtio_f_access_platform"], e["side"] == "B" ? "negotiated" : "not negotiated")
        << e.dump();
  }
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& [boot, sides] : runs) EXPECT_EQ(sides, (std::map<std::string, int>{{"A", 2}, {"B", 2}})) << boot;
  const json analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis["options"]["primary_estimate"], "paired");
  EXPECT_EQ(analysis["metrics"][0]["noise"]["pairs"], 4);
  EXPECT_FALSE(fs::exists(d / "scratch.raw"));
  EXPECT_FALSE(fs::exists(d / "scratch-3.raw"));
  if (!::testing::Test::HasFailure()) fs::remove_all(d.parent_path().parent_path());
}

}  // namespace
}  // namespace abvm
