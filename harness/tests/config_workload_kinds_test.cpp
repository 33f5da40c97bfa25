// Workload kinds are closed (issue 21): every place that does something per kind goes through
// visit_kind (config/workload.hpp), which refuses at compile time a visitor that misses a kind or
// takes any kind with a catch-all. The first tests compile tests/data/compile_probes/
// workload_kinds.cpp with this build's compiler: a third kind that a dispatch does not handle is a
// compile error with visit_kind's message, and the same dispatch handling it compiles. The scan
// checks that nothing in harness/ picks a kind any other way (holds_alternative, get_if, get,
// std::visit on a spec), which would let a new kind fall silently into an else.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "config/keys.hpp"
#include "config/workload.hpp"
#include "core/process.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kSource = ABVM_SOURCE_DIR;
const fs::path kProbe = fs::path(ABVM_TEST_DATA) / "compile_probes" / "workload_kinds.cpp";

abvm::ProcessResult compile_probe(const std::string& probe) {
  return abvm::run_process({ABVM_CXX_COMPILER, "-std=c++20", "-fsyntax-only", "-I", (kSource / "harness").string(),
                            "-D" + probe, kProbe.string()});
}

TEST(ConfigWorkloadKinds, ADispatchHandlingEveryKindCompiles) {
  const auto r = compile_probe("PROBE_EVERY_KIND");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ConfigWorkloadKinds, AThirdKindUnhandledIsACompileError) {
  for (const std::string probe : {"PROBE_THIRD_KIND_UNHANDLED", "PROBE_THIRD_KIND_UNHANDLED_MUTABLE"}) {
    const auto r = compile_probe(probe);
    EXPECT_NE(r.exit_code, 0) << probe;
    EXPECT_NE(r.err.find("a workload kind is not handled here"), std::string::npos) << probe << ":\n" << r.err;
  }
}

TEST(ConfigWorkloadKinds, ACatchAllIsACompileError) {
  const auto r = compile_probe("PROBE_CATCH_ALL");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("a catch-all case would take a new workload kind silently"), std::string::npos) << r.err;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ConfigWorkloadKinds, NothingPicksAKindOutsideVisitKind) {
  static const std::regex picks(R"re(\b(holds_alternative|get_if|get)\s*<\s*\w*Workload\s*>|std::visit\s*\()re");
  // By file, relative to harness/, with why.
  const std::set<std::string> allowed = {
      "config/workload.hpp",  // visit_kind itself, and kind_name
      "cli/run.cpp",          // a remark on dd's own if= and of=; no else, nothing for other kinds to miss
  };
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "harness")) {
    const fs::path& p = entry.path();
    const std::string rel = fs::relative(p, kSource / "harness").generic_string();
    if (rel.starts_with("tests/") || rel.starts_with("fuzz/") || rel.starts_with("bench/")) continue;
    if (p.extension() != ".cpp" && p.extension() != ".hpp") continue;
    ++files;
    if (allowed.contains(rel)) continue;
    const std::string text = read_all(p);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, picks))
        << rel << " picks a workload kind with '" << m.str() << "': use visit_kind with an overloaded{...}, one "
        << "lambda per kind, so that a new kind is a compile error there";
  }
  EXPECT_GT(files, 100);
}

TEST(ConfigWorkloadKinds, NamesRoundTrip) {
  for (const std::string& name : abvm::workload_kind_names()) {
    const auto spec = abvm::default_spec(name);
    ASSERT_TRUE(spec.has_value()) << name;
    EXPECT_EQ(abvm::kind_name(*spec), name);
  }
  EXPECT_EQ(abvm::workload_kind_names(), (std::vector<std::string>{"dd", "fio"}));
  EXPECT_FALSE(abvm::default_spec("fio2").has_value());
}

// A key that is one kind's only is for a kind there is.
TEST(ConfigWorkloadKinds, KeysOfOneKindNameAKind) {
  const auto kinds = abvm::workload_kind_names();
  for (const abvm::KeySpec& spec : abvm::key_table()) {
    if (spec.only_for.empty()) continue;
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), spec.only_for), kinds.end()) << spec.path;
  }
}

}  // namespace
