// The end of `abvm run` (cli/run.cpp, finish_run): the summary table reaches the terminal in one
// piece, and the "abvm: report: ..." and "abvm: results: ..." lines on stderr come after it, even
// when stdout and stderr are the same pipe (a CI log); reports that cannot be written say how to
// write them. Driven through `abvm run --resume` on a finished run, which analyses again without
// booting anything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/files.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"
#include "report_test_support.hpp"
#include "results/directory.hpp"

using namespace abvm;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// A run whose trials are all done, its reports not written yet: the demo results in `dir`.
ResultsDir finished_run(const fs::path& dir) {
  fs::copy(report_data("report/results-demo"), dir, fs::copy_options::recursive);
  const ResultsDir results(dir);
  write_manifest(results, {.abvm_version = "test",
                           .config = dir / "config.toml",
                           .config_dir = dir,
                           .started = "2026-11-29T00:00:00Z",
                           .status = RunStatus::complete});
  write_file_atomic(results.plan(), "{}\n");  // a finished run reads no plan
  for (const fs::path& out : {results.analysis(), results.summary(), results.report_html()}) fs::remove(out);
  return results;
}

// `dir` made read-only, as a filesystem the kernel remounts read-only after an error: a read-only
// bind mount of itself (writes fail with EROFS, for root too), undone when this goes.
class ReadOnly {
 public:
  explicit ReadOnly(fs::path dir) : dir_(std::move(dir)) {
    if (::mount(dir_.c_str(), dir_.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      error_ = std::strerror(errno);
      return;
    }
    mounted_ = true;
    if (::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
      error_ = std::strerror(errno);
    }
  }
  ~ReadOnly() { undo(); }
  ReadOnly(const ReadOnly&) = delete;
  ReadOnly& operator=(const ReadOnly&) = delete;
  // Why the directory could not be made read-only ("" when it is).
  const std::string& error() const { return error_; }
  void undo() {
    if (mounted_ && ::umount2(dir_.c_str(), MNT_DETACH) == 0) mounted_ = false;
  }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

// The words of a command line as printed (no quoting: the test's paths have no spaces).
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST(CliRunFinish, SummaryTableIsContiguousAndTheReportLinesFollowIt) {
  ReportTempDir tmp;
  const fs::path dir = tmp / "demo-finished";
  const ResultsDir results = finished_run(dir);

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

// The results filesystem turns read-only (or full) while the reports of a finished run are
// written: every trial is in the journal by then. The run ends with exit 3 and a message that
// names the file that could not be written, says that no run was lost and gives the command that
// writes the reports (and the JUnit file asked for) once the filesystem takes writes again; that
// command, run as printed, does. (Mid-run, HostFaultsE2ETest turns a real ext4 read-only.)
TEST(CliRunFinish, ReportsThatCannotBeWrittenNameTheFileAndTheCommandThatWritesThem) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("a read-only bind mount needs root");
  ReportTempDir tmp;
  const fs::path dir = tmp / "demo-finished";
  const ResultsDir results = finished_run(dir);
  const fs::path junit = tmp / "junit.xml";
  const std::string journal_before = read_file(results.journal());

  ReadOnly read_only(dir);
  if (!read_only.error().empty()) ABVM_SKIP_WITHOUT("cannot make a read-only bind mount here: " << read_only.error());
  const auto r = run_process({ABVM_BINARY, "run", "--resume", dir.string(), "--junit", junit.string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(results.analysis().string() + ": cannot write"));
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));
  EXPECT_THAT(r.err, HasSubstr("every trial this run ran is recorded in " + results.journal().string() +
                               " (no run was lost)"));
  const std::string with = "write the reports with: ";
  const auto at = r.err.find(with);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string command = r.err.substr(at + with.size(), r.err.find('\n', at) - at - with.size());
  EXPECT_EQ(command, "abvm run --resume " + dir.string() + " --junit " + junit.string());
  EXPECT_FALSE(fs::exists(results.analysis()));
  EXPECT_FALSE(fs::exists(junit));

  read_only.undo();
  std::vector<std::string> argv = words(command);
  ASSERT_EQ(argv.at(0), "abvm");
  argv[0] = ABVM_BINARY;
  const auto again = run_process(argv);
  EXPECT_NE(again.exit_code, 2) << again.err;
  EXPECT_NE(again.exit_code, 3) << again.err;
  for (const fs::path& out : {results.analysis(), results.summary(), results.report_html(), junit}) {
    EXPECT_TRUE(fs::exists(out)) << out << " was not written by: " << command;
  }
  EXPECT_EQ(read_file(results.journal()), journal_before);
}
