// The data-flow rule of harness/ARCHITECTURE.md, read from the one place it is declared: the
// stage list (ABVM_STAGES) and each stage's `abvm_uses_<stage>` in the top CMakeLists.txt.
// A stage includes only core/ and the stages it declares it uses, all of them earlier; the
// offline stages never reach guests; nothing but cli/ itself, main.cpp and cli's own tests
// includes cli/.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

const fs::path kSource = ABVM_SOURCE_DIR;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> words_of_set(const std::string& cmake, const std::string& variable) {
  const std::regex re("set\\(" + variable + "([^)]*)\\)");
  std::smatch m;
  if (!std::regex_search(cmake, m, re)) return {};
  std::istringstream in(m[1].str());
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Layering {
  std::vector<std::string> stages;
  std::map<std::string, std::vector<std::string>> uses;
};

Layering declared_layering() {
  const std::string cmake = read_all(kSource / "CMakeLists.txt");
  Layering l;
  l.stages = words_of_set(cmake, "ABVM_STAGES");
  for (const auto& s : l.stages) l.uses[s] = words_of_set(cmake, "abvm_uses_" + s);
  return l;
}

// Every quoted include of `file` that names a stage folder: "guest/driver.hpp" -> "guest".
std::vector<std::string> included_stages(const fs::path& file, const std::vector<std::string>& stages) {
  static const std::regex include_re(R"re(^\s*#\s*include\s*"([a-z_]+)/)re");
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, include_re) &&
        std::find(stages.begin(), stages.end(), m[1].str()) != stages.end()) {
      out.push_back(m[1]);
    }
  }
  return out;
}

std::string lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST(CoreLayering, TheStageListIsDeclaredInDataFlowOrder) {
  const Layering l = declared_layering();
  ASSERT_GE(l.stages.size(), 10u);
  EXPECT_EQ(l.stages.front(), "core");
  EXPECT_EQ(l.stages.back(), "cli");
  // Every declared use names an earlier stage.
  for (std::size_t i = 0; i < l.stages.size(); ++i) {
    if (l.stages[i] == "cli") continue;
    for (const auto& used : l.uses.at(l.stages[i])) {
      const auto at = std::find(l.stages.begin(), l.stages.end(), used) - l.stages.begin();
      EXPECT_LT(static_cast<std::size_t>(at), i) << l.stages[i] << " declares it uses the later stage " << used;
    }
  }
  // Every stage folder is in the list.
  for (const auto& entry : fs::directory_iterator(kSource / "harness")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name == "tests" || name == "bench" || name == "fuzz") continue;
    EXPECT_NE(std::find(l.stages.begin(), l.stages.end(), name), l.stages.end())
        << "harness/" << name << "/ is not in ABVM_STAGES";
  }
}

TEST(CoreLayering, EveryStageIncludesOnlyCoreAndTheStagesItDeclares) {
  const Layering l = declared_layering();
  std::vector<std::string> violations;
  std::size_t files = 0;
  for (const auto& stage : l.stages) {
    if (stage == "cli") continue;  // cli sits on top of everything
    const auto& uses = l.uses.at(stage);
    for (const auto& entry : fs::recursive_directory_iterator(kSource / "harness" / stage)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      for (const auto& used : included_stages(entry.path(), l.stages)) {
        if (used == stage) continue;
        const bool allowed = used == "core" ? true : std::find(uses.begin(), uses.end(), used) != uses.end();
        if (stage == "core" || !allowed) {
          violations.push_back(entry.path().filename().string() + " (" + stage + ") includes " + used + "/");
        }
        // Analysis and reporting work on saved results without any guest or libvirt.
        const bool offline_stage = stage == "samples" || stage == "stats" || stage == "verdict" || stage == "report";
        if (offline_stage && (used == "guest" || used == "run" || used == "kernels")) {
          violations.push_back(entry.path().filename().string() + " (" + stage + ") includes " + used +
                               "/: analysis must not depend on guests");
        }
      }
    }
  }
  EXPECT_GT(files, 30u);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

TEST(CoreLayering, NothingButCliAndItsTestsIncludesCli) {
  const Layering l = declared_layering();
  std::vector<std::string> violations;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "harness")) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), kSource / "harness");
    const std::string top = rel.begin()->string();
    const std::string name = entry.path().filename().string();
    if (top == "cli" || name == "main.cpp" || (top == "tests" && name.starts_with("cli_"))) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    for (const auto& used : included_stages(entry.path(), l.stages)) {
      if (used == "cli") violations.push_back(rel.string() + " includes cli/");
    }
  }
  EXPECT_TRUE(violations.empty()) << lines(violations);
}
