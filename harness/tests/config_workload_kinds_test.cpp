// Workload kinds are closed (issue 21): every place that does something per kind goes through
// visit_kind (config/workload.hpp), which refuses at compile time a visitor that misses a kind or
// takes any kind with a catch-all. The first tests compile tests/data/compile_probes/
// workload_kinds.cpp with this build's compiler: a third kind that a dispatch does not handle is a
// compile error with visit_kind's message, and the same dispatch handling it compiles. Then every
// real dispatch in harness/ is compiled with a third kind added to WorkloadSpec: each must fail,
// at visit_kind. The scan checks that nothing in harness/ picks a kind any other way
// (holds_alternative, get_if, get, std::visit on a spec), which would let a new kind fall silently
// into an else.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/keys.hpp"
#include "config/workload.hpp"
#include "core/process.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kSource = ABVM_SOURCE_DIR;
const fs::path kProbe = fs::path(ABVM_TEST_DATA) / "compile_probes" / "workload_kinds.cpp";

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

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


// The production sources (harness/<stage>/..., relative to harness/), the tests' and tools' not.
std::vector<std::string> production_sources() {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "harness")) {
    const fs::path& p = entry.path();
    const std::string rel = fs::relative(p, kSource / "harness").generic_string();
    if (rel.starts_with("tests/") || rel.starts_with("fuzz/") || rel.starts_with("bench/")) continue;
    if (p.extension() == ".cpp" || p.extension() == ".hpp") out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// config/workload.hpp with a third kind in WorkloadSpec, in a directory that comes before harness/
// on the include path: what the sources see once someone adds a tool and nothing else.
fs::path header_with_a_third_kind() {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("abvm_config_workload_kinds_test.{}", ::getpid()) / "config";
  fs::create_directories(dir);
  const std::string original = read_all(kSource / "harness" / "config" / "workload.hpp");
  static const std::regex spec(R"re(using WorkloadSpec = std::variant<([^>]*)>;)re");
  const std::string with_third = std::regex_replace(
      original, spec,
      "struct ThirdWorkload { static constexpr std::string_view kind = \"third\"; };\n"
      "using WorkloadSpec = std::variant<$1, ThirdWorkload>;");
  EXPECT_NE(with_third, original) << "no 'using WorkloadSpec = std::variant<...>;' in config/workload.hpp";
  std::ofstream(dir / "workload.hpp") << with_third;
  return dir.parent_path();
}

// Every dispatch on the kind in harness/ (every production source that calls visit_kind) stops
// compiling when a kind joins WorkloadSpec, at visit_kind, with its message.
TEST(ConfigWorkloadKinds, AThirdKindInWorkloadSpecIsACompileErrorAtEveryDispatch) {
  const fs::path override_dir = header_with_a_third_kind();
  int dispatching = 0;
  for (const std::string& rel : production_sources()) {
    if (rel == "config/workload.hpp" || read_all(kSource / "harness" / rel).find("visit_kind(") == std::string::npos) {
      continue;
    }
    ++dispatching;
    const auto r = abvm::run_process({ABVM_CXX_COMPILER, "-std=c++20", "-fsyntax-only", "-DTOML_HEADER_ONLY=0",
                                      "-I", override_dir.string(), "-I", (kSource / "harness").string(),
                                      (kSource / "harness" / rel).string()});
    EXPECT_NE(r.exit_code, 0) << rel << " compiles with a third workload kind";
    EXPECT_NE(r.err.find("a workload kind is not handled here"), std::string::npos) << rel << ":\n" << r.err;
  }
  // config/load_workloads.cpp, guest/job.cpp, samples/run_output.cpp, config/workload.cpp (sizing)
  EXPECT_GE(dispatching, 4);
  fs::remove_all(override_dir);
}

TEST(ConfigWorkloadKinds, NothingPicksAKindOutsideVisitKind) {
  static const std::regex picks(R"re(\b(holds_alternative|get_if|get)\s*<\s*\w*Workload\s*>|std::visit\s*\()re");
  // By file, relative to harness/, with why.
  const std::set<std::string> allowed = {
      "config/workload.hpp",  // visit_kind itself, and kind_name
      "cli/run.cpp",          // a remark on dd's own if= and of=; no else, nothing for other kinds to miss
      // std::visit over the findings (verdict/findings.hpp), closed sums of their own, not workloads
      "verdict/findings.hpp", "report/wording.cpp", "report/findings_json.cpp",
  };
  int files = 0;
  for (const std::string& rel : production_sources()) {
    ++files;
    if (allowed.contains(rel)) continue;
    const std::string text = read_all(kSource / "harness" / rel);
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
