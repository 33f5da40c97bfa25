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
#include <tuple>
#include <algorithm>

#include "environment_skip.hpp"
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
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
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
min_run_time = "0s"
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

// Lockstep: the block's two guests are alive together on host CPU 0, but their runs take turns on
// the host's go, typed into each guest's console: by the host's clock (result.json, each run's
// timing: when its go was typed, when it started and ended), a block's runs alternate between its
// two guests and none begins before the one before it has ended.
TEST(DesignsE2ETest, LockstepGuestsTakeTurnsOnTheHostsGo) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const fs::path d = run_experiment("lockstep", R"(name = "lockstep"
[guest]
kernel = "debian-cloud"
accelerator = "tcg"
[disk]
size = "64M"
[sides.A]
label = "first"
[sides.B]
label = "second"
[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 8
oflag = ["direct"]
repetitions = 3
warmup = 1
[schedule]
min_run_time = "0s"
seed = 5
boots_per_side = 2
allow_identical_sides = true
design = "lockstep"
)");
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(json::parse(read_file(d / "plan.json"))["design"], "lockstep");
  for (const json& t : jsonl(d / "trials.jsonl")) EXPECT_EQ(t["outcome"], "ok") << t.dump();
  // Each guest said READY before each of its 4 runs (1 warm-up + 3) and got the go for it.
  for (const char* id : {"t0000", "t0001", "t0002", "t0003"}) {
    const std::string console = read_file(d / "trials" / id / "console.log");
    std::size_t ready = 0;
    for (std::size_t at = console.find(":READY:"); at != std::string::npos; at = console.find(":READY:", at + 1)) ++ready;
    EXPECT_EQ(ready, 4u) << id;
  }
  for (int block = 0; block < 2; ++block) {
    std::vector<std::tuple<double, double, double, std::string>> runs;  // go, end, clock error, trial
    for (int k = 0; k < 2; ++k) {
      const std::string id = "t000" + std::to_string(2 * block + k);
      const json result = json::parse(read_file(d / "trials" / id / "result.json"));
      EXPECT_EQ(result["runs"].size(), 3u) << id;
      for (const json& r : result["runs"]) {
        const json& t = r["timing"];
        EXPECT_LE(t["go"].get<double>(), t["start"].get<double>() + t["clock_error"].get<double>()) << id;
        runs.emplace_back(t["go"].get<double>(), t["end"].get<double>(), t["clock_error"].get<double>(), id);
        // Taking turns, a run and its partner do not overlap: recorded, not voided.
        EXPECT_LT(r["overlap"]["pair"].get<double>(), 0.05) << id;
      }
    }
    std::sort(runs.begin(), runs.end());
    for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
      const auto& [go, end, error, id] = runs[i];
      EXPECT_LE(end, std::get<0>(runs[i + 1]) + error) << "block " << block << ": run " << i + 1 << " began first";
      EXPECT_NE(id, std::get<3>(runs[i + 1])) << "block " << block << ": one guest took two turns in a row";
    }
  }
  const json analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis["options"]["primary_estimate"], "paired");
  EXPECT_EQ(analysis["metrics"][0]["noise"]["pairs"], 2);
  if (!::testing::Test::HasFailure()) fs::remove_all(d.parent_path().parent_path());
}

// Co-scheduled, sides of different speed (B: one request in flight, so its queue-depth-bound fio
// takes about twice as long): every run of A and its partner run of B start on one go and end
// together, so each pair overlapped at least 95 % by the host's clock; nothing is voided. Without
// the paired windows, A's guest ran ahead and powered off while B still measured (issue 19).
TEST(DesignsE2ETest, CoScheduledSidesOfDifferentSpeedOverlapInEveryPair) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const fs::path d = run_experiment("co-scheduled-speeds", R"(name = "speeds"
[guest]
kernel = "debian-cloud"
accelerator = "tcg"
[disk]
size = "64M"
[sides.A]
label = "default"
[sides.B]
label = "qd1"
cmdline_append = "virtio_blk.queue_depth=1"
[[workload]]
name = "fio-rand"
type = "fio"
rw = "randwrite"
bs = "4k"
size = "8M"
ioengine = "libaio"
iodepth = 32
repetitions = 2
[[workload]]
name = "dd-4k"
type = "dd"
bs = "4k"
count = 1000
oflag = ["direct"]
repetitions = 2
[schedule]
min_run_time = "0s"
seed = 11
boots_per_side = 2
design = "co-scheduled"
)");
  ASSERT_FALSE(d.empty());
  std::map<std::string, std::map<std::string, double>> fio_seconds;  // side -> trial -> fio time
  std::size_t pairs = 0;
  for (const char* id : {"t0000", "t0001", "t0002", "t0003"}) {
    const json result = json::parse(read_file(d / "trials" / id / "result.json"));
    EXPECT_EQ(result["outcome"], "ok") << id << ": " << result["detail"];
    // The pair traded the lane's two CPUs every 10 ms while both guests ran (several seconds).
    ASSERT_TRUE(result["vcpu_swap"].is_object()) << id << " " << result["vcpu_swap"];
    EXPECT_GT(result["vcpu_swap"]["swaps"].get<long>(), 100) << id;
    EXPECT_EQ(result["vcpu_swap"]["off"], "") << id;
    for (const json& r : result["runs"]) {
      ASSERT_TRUE(r.contains("timing") && r.contains("overlap")) << id << " " << r.dump();
      const json& t = r["timing"];
      EXPECT_GE(r["overlap"]["run"].get<double>(), 0.95) << id << " " << r.dump();
      EXPECT_GE(r["overlap"]["pair"].get<double>(), 0.95) << id << " " << r.dump();
      EXPECT_LT(t["clock_error"].get<double>(), 0.2) << id;
      if (r["workload"] == "fio-rand") fio_seconds[result["side"]][id] += t["end"].get<double>() - t["start"].get<double>();
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 16u);  // 4 boots x (2 fio + 2 dd)
  // The sides did differ in speed: B's fio took longer in both blocks.
  double a = 0, b = 0;
  for (const auto& [id, s] : fio_seconds["A"]) a += s;
  for (const auto& [id, s] : fio_seconds["B"]) b += s;
  EXPECT_GT(b, 1.3 * a) << "B's fio runs were not slower: the test no longer has sides of different speed";
  if (!::testing::Test::HasFailure()) fs::remove_all(d.parent_path().parent_path());
}

}  // namespace
}  // namespace abvm
