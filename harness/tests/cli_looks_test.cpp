// The looks of `abvm run` (cli/results_analysis.hpp sequential_looks): one look object for the
// whole run, its journal growing between looks, decides at every look what decide() (the final
// analysis, `abvm analyze RESULTS_DIR`) decides of the same results at the same confidence, in
// the design the experiment gives and in another one.
#include <gtest/gtest.h>

#include <string>

#include "cli/results_analysis.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "report_test_support.hpp"

using namespace abvm;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
namespace fs = std::filesystem;

namespace {

// A look's answer, or decide()'s verdict in the same words; an Error's message when it refuses.
template <typename Decide>
std::string answer_of(Decide&& decide) {
  try {
    return decide();
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

void expect_looks_decide_as_decide(const Experiment& e, const fs::path& dir_path, const std::string& journal) {
  const ResultsDir dir(dir_path);
  write_file_atomic(dir.journal(), "");
  const LookDecision look = cli::sequential_looks(e);
  std::size_t pos = 0;
  int decided = 0;
  while (pos < journal.size()) {
    // Eight more lines a look.
    for (int i = 0; i < 8 && pos < journal.size(); ++i) pos = journal.find('\n', pos) + 1;
    write_file_atomic(dir.journal(), journal.substr(0, pos));
    for (double confidence : {0.95, 0.8}) {
      const std::string looked = answer_of([&] { return look(dir, confidence).value_or("inconclusive"); });
      const std::string full = answer_of([&] {
        return std::string(to_string(cli::decide(e, dir, RunEnd{.final_confidence = confidence}).analysis.verdict));
      });
      EXPECT_EQ(looked, full) << to_string(e.schedule.design) << ", " << pos << " bytes at " << confidence;
      decided += !looked.starts_with("error: ");
    }
  }
  EXPECT_GT(decided, 4) << "most looks have both sides to compare";
}

}  // namespace

TEST(CliLooks, EveryLookDecidesWhatTheFullAnalysisDecides) {
  ReportTempDir tmp;
  const fs::path dir = tmp / "run";
  fs::create_directories(dir);
  write_manifest(ResultsDir(dir), {.abvm_version = "test", .started = "2026-11-29T00:00:00Z"});
  const std::string journal = read_file(report_data("report/results-co-scheduled/journal.jsonl"));
  Experiment e = load_experiment(report_data("report/results-co-scheduled/config.toml"));
  expect_looks_decide_as_decide(e, dir, journal);  // co-scheduled: paired, pairs beyond max_start_skew left out
  e.schedule.design = Design::sequential_blocks;
  expect_looks_decide_as_decide(e, dir, journal);
  e.analysis.margin = 0.01;
  expect_looks_decide_as_decide(e, dir, journal);
}
