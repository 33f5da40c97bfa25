// The shipped controls, reduced, on real guests (the `controls` ctest label; issues 11 and 19).
// configs/swiotlb-control.toml (B bounces every DMA through swiotlb) must come out a regression and
// configs/aa-control.toml (the same side twice) must not, in the design they ship with
// (co-scheduled): a change to the guest, the driver, the design or the analysis that breaks
// either fails here, not only in a README table. Each runs 8 blocks instead of 10.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

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
  std::string err;
};

// Runs configs/<name>.toml with boots_per_side = 8 and returns its exit code and analysis.json.
ControlRun run_control(const std::string& name) {
  std::string text = read_file(fs::path(ABVM_SOURCE_DIR) / "configs" / (name + ".toml"));
  const auto at = text.find("boots_per_side = 10");
  EXPECT_NE(at, std::string::npos) << name << ".toml no longer has boots_per_side = 10: update this test";
  if (at == std::string::npos) return {};
  text.replace(at, 19, "boots_per_side = 8");
  const fs::path dir = fs::temp_directory_path() / ("abvm-controls-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / (name + ".toml"), text);
  const ProcessResult r = run_process(
      {ABVM_BINARY, "run", "--results-dir", (dir / "results").string(), (dir / (name + ".toml")).string()},
      {.timeout = std::chrono::minutes(15)});
  ControlRun out{.exit_code = r.exit_code, .err = r.err};
  for (const auto& e : fs::directory_iterator(dir / "results")) {
    if (fs::exists(e.path() / "analysis.json")) out.analysis = json::parse(read_file(e.path() / "analysis.json"));
  }
  if (out.exit_code == 1 || out.exit_code == 0 || out.exit_code == 4) fs::remove_all(dir);
  return out;
}

TEST(ControlsE2ETest, SwiotlbForceIsARegression) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const ControlRun r = run_control("swiotlb-control");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  EXPECT_EQ(r.analysis["verdict"], "regression");
  EXPECT_EQ(r.analysis["options"]["primary_estimate"], "paired");
  EXPECT_EQ(r.analysis["source"]["design"], "co-scheduled");
}

TEST(ControlsE2ETest, TheSameSideTwiceIsNoRegression) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const ControlRun r = run_control("aa-control");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  EXPECT_NE(r.analysis["verdict"], "regression");
  for (const auto& m : r.analysis["metrics"]) EXPECT_NE(m["verdict"], "regression") << m["headline"];
}

// configs/neighbour-control.toml (issue 19 item 3): B limits virtio-blk to one request in flight.
// The queue-depth-bound fio job must come out a regression, and the single-request dd, which that
// cannot slow down, neither an improvement nor a regression: its verdict must not depend on its
// slow neighbour. Every pair of runs overlapped (the paired windows), none was voided.
TEST(ControlsE2ETest, ASlowNeighbourDoesNotMoveAWorkloadItCannotAffect) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const ControlRun r = run_control("neighbour-control");
  ASSERT_TRUE(r.analysis.is_object()) << r.err;
  std::map<std::string, std::string> verdicts;
  for (const auto& m : r.analysis["metrics"]) verdicts[m["name"]] = m["verdict"];
  EXPECT_EQ(verdicts["fio-rand.write.bandwidth"], "regression") << r.err;
  EXPECT_EQ(verdicts["fio-rand.write.clat_p50"], "regression") << r.err;
  EXPECT_NE(verdicts["dd-4k.bandwidth"], "regression") << r.err;
  EXPECT_NE(verdicts["dd-4k.bandwidth"], "improvement") << r.err;
  EXPECT_EQ(r.analysis["source"]["design"], "co-scheduled");
}

}  // namespace
}  // namespace abvm
