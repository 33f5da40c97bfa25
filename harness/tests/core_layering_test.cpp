// The data-flow rule of harness/ARCHITECTURE.md: a stage includes only core/ and earlier stages.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kStages = {"core", "config", "plan",  "guest",  "run",
                                          "samples", "stats", "verdict", "report", "cli"};

std::ptrdiff_t rank_of(const std::string& stage) {
  auto it = std::find(kStages.begin(), kStages.end(), stage);
  return it == kStages.end() ? -1 : it - kStages.begin();
}

}  // namespace

TEST(CoreLayering, EveryStageIncludesOnlyCoreAndEarlierStages) {
  const std::filesystem::path harness = std::filesystem::path(ABVM_SOURCE_DIR) / "harness";
  const std::regex include_re(R"re(^\s*#\s*include\s*"([a-z_]+)/)re");
  std::vector<std::string> violations;
  std::size_t files = 0;
  for (const auto& stage : kStages) {
    if (stage == "cli") continue;  // cli sits on top of everything
    const auto dir = harness / stage;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(entry.path());
      std::string line;
      ++files;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string used = m[1];
        const auto r = rank_of(used);
        if (r < 0) continue;
        if (used != "core" && r > rank_of(stage)) {
          violations.push_back(entry.path().filename().string() + " (" + stage + ") includes " + used + "/");
        }
        // Analysis and reporting must work on saved results without any guest or libvirt.
        const bool offline_stage = stage == "samples" || stage == "stats" || stage == "verdict" || stage == "report";
        if (offline_stage && (used == "guest" || used == "run")) {
          violations.push_back(entry.path().filename().string() + " (" + stage + ") includes " + used +
                               "/: analysis must not depend on guests");
        }
        if (stage == "core" && used != "core") {
          violations.push_back(entry.path().filename().string() + " (core) includes " + used + "/");
        }
      }
    }
  }
  EXPECT_GT(files, 5u);
  EXPECT_TRUE(violations.empty()) << [&] {
    std::string s;
    for (const auto& v : violations) s += v + "\n";
    return s;
  }();
}
