// The end of `abvm run` (cli/run.cpp, finish_run): the summary table reaches the terminal in one
// piece, and the "abvm: report: ..." and "abvm: results: ..." lines on stderr come after it, even
// when stdout and stderr are the same pipe (a CI log). Driven through `abvm run --resume` on a
// finished run, which analyses again without booting anything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/files.hpp"
#include "core/process.hpp"
#include "report_test_support.hpp"
#include "results/directory.hpp"

using namespace abvm;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(CliRunFinish, SummaryTableIsContiguousAndTheReportLinesFollowIt) {
  ReportTempDir tmp;
  const fs::path dir = tmp / "demo-finished";
  fs::copy(report_data("report/results-demo"), dir, fs::copy_options::recursive);
  const ResultsDir results(dir);
  write_manifest(results, {.abvm_version = "test",
                           .config = dir / "config.toml",
                           .config_dir = dir,
                           .started = "2026-11-29T00:00:00Z",
                           .status = RunStatus::complete});
  write_file_atomic(results.plan(), "{}\n");  // a finished run reads no plan

  // One pipe for both streams, as in a CI job's log.
  const auto r = run_process({"sh", "-c", "exec \"$0\" run --resume \"$1\" 2>&1", ABVM_BINARY, dir.string()});
  ASSERT_NE(r.exit_code, 2) << r.out;
  ASSERT_NE(r.exit_code, 3) << r.out;
  const std::string summary = read_file(results.summary());
  ASSERT_GT(summary.size(), 200u);
  const auto at = r.out.find(summary);
  ASSERT_NE(at, std::string::npos) << "the summary is not in one piece in the combined output:\n" << r.out;
  const std::string after = r.out.substr(at + summary.size());
  EXPECT_THAT(after, HasSubstr("abvm: report: "));
  EXPECT_THAT(after, HasSubstr("abvm: results: "));
  EXPECT_EQ(r.out.substr(0, at).find("abvm: report: "), std::string::npos) << r.out;
}
