// The co-scheduled design end to end (issue 10): the real `abvm run` boots each block's A and B
// guests through libvirt at the same time, both pinned to the same host CPUs (0-1), each on its own
// scratch image, and analyses the blocks as pairs: the paired estimate decides, the unpaired
// one is still reported, and the noise anatomy counts the pairs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <algorithm>
#include <string>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const char* kExperiment = R"(name = "co-scheduled"
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
bs = "4k"
count = 2000
oflag = ["direct"]
repetitions = 2
[schedule]
min_run_time = "0s"
seed = 10
boots_per_side = 3
allow_identical_sides = true
design = "co-scheduled"
cpu_set = "0-1"
)";

// When a trial ended and how long it ran (trials.jsonl), in seconds since the epoch.
struct Span {
  double end = 0, seconds = 0;
};

std::string fmt_id(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "t%04d", n);
  return buf;
}

double epoch_seconds(const std::string& iso) {
  std::tm tm{};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return static_cast<double>(timegm(&tm));
}

TEST(CoScheduledE2ETest, EachBlocksGuestsRunTogetherPinnedAndAreAnalysedAsPairs) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  const fs::path dir = fs::temp_directory_path() / "abvm-co-scheduled-e2e";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / "experiment.toml", kExperiment);
  const ProcessResult r = run_process(
      {ABVM_BINARY, "run", "--results-dir", (dir / "results").string(), (dir / "experiment.toml").string()},
      {.timeout = std::chrono::minutes(9)});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  fs::path d;
  for (const auto& e : fs::directory_iterator(dir / "results")) d = e.path();
  ASSERT_FALSE(d.empty());

  const json plan = json::parse(read_file(d / "plan.json"));
  EXPECT_EQ(plan["design"], "co-scheduled");
  std::map<std::string, Span> span;
  std::istringstream ledger(read_file(d / "trials.jsonl"));
  for (std::string line; std::getline(ledger, line);) {
    const json t = json::parse(line);
    EXPECT_EQ(t["outcome"], "ok") << line;
    span[t["trial"]] = {epoch_seconds(t["time"]), t["seconds"].get<double>()};
  }
  ASSERT_EQ(span.size(), 6u);
  for (const auto& t : plan["trials"]) {
    const std::string id = t["id"];
    const std::string xml = read_file(d / "trials" / id / "domain.xml");
    EXPECT_NE(xml.find("cpuset=\"0-1\""), std::string::npos) << id;
    const bool second = t["position"].get<int>() % 2 == 1;
    EXPECT_NE(xml.find((d / (second ? "scratch-1.raw" : "scratch.raw")).string()), std::string::npos) << id;
  }
  // The two guests of a block ran at the same time: each ran for seconds, and they ended within
  // about a second of each other (ledger times have whole seconds).
  for (int k = 0; k < 3; ++k) {
    const Span a = span[fmt_id(2 * k)], b = span[fmt_id(2 * k + 1)];
    const double overlap = std::min(a.end, b.end) - std::max(a.end - a.seconds, b.end - b.seconds);
    EXPECT_GT(overlap, 0.5 * std::min(a.seconds, b.seconds)) << "block " << k;
  }
  EXPECT_FALSE(fs::exists(d / "scratch.raw"));
  EXPECT_FALSE(fs::exists(d / "scratch-1.raw"));

  const json analysis = json::parse(read_file(d / "analysis.json"));
  EXPECT_EQ(analysis["options"]["primary_estimate"], "paired");
  const json& m = analysis["metrics"][0];
  EXPECT_EQ(m["primary_estimate"], "paired");
  EXPECT_EQ(m["effect"], m["paired_effect"]);
  EXPECT_TRUE(m["unpaired_effect"].is_object());
  EXPECT_EQ(m["noise"]["pairs"], 3);
  const std::string summary = read_file(d / "summary.txt");
  EXPECT_NE(summary.find("paired B/A"), std::string::npos) << summary;
  // The noise anatomy, with the blocks needed in minutes at this run's pace (from the ledger).
  EXPECT_NE(summary.find("per-block B/A"), std::string::npos) << summary;
  EXPECT_NE(summary.find("s per block"), std::string::npos) << summary;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace abvm
