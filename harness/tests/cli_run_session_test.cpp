// The end of a run (cli/run_session.cpp write_run_outputs) reports from what the run holds in
// memory (issue 29 item 1): a whole run through the real Runner with the tests' one fake driver,
// its reports written; then every file but the journal is deleted (config.toml, kernels.json and
// environment.json, which the report once read back, among them) and the reports written again
// from memory: report.html, analysis.json and summary.txt come out the same. Before the deletion,
// the same outputs come from the directory's files, as `abvm report DIR`, `abvm analyze DIR
// --html` and `abvm run --resume` read them (the real binary).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cli/results_analysis.hpp"
#include "cli/run_session.hpp"
#include "config/experiment.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "fake_driver.hpp"
#include "plan/plan.hpp"
#include "results/directory.hpp"
#include "run/runner.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A Python that does not exist: report.html without plots, fast and the same on every machine.
constexpr const char* kNoPython = "/nonexistent/python3";

// Hands over the guests the test prepared instead of building them.
struct Prepared : GuestPreparer {
  PreparedGuests guests;
  PreparedGuests prepare(const Experiment&) override { return guests; }
};

struct Quiet : RunObserver {
  void note(const std::string&) override {}
  void progress(const ProgressState&) override {}
  void finish() override {}
};

class RunSessionTest : public ::testing::Test {
 protected:
  fs::path root;
  test::FakeDriver driver{"session-host"};
  Prepared preparer;
  Quiet quiet;
  Experiment experiment;

  void SetUp() override {
    ::setenv("ABVM_PYTHON", kNoPython, 1);
    // With the pid: other checkouts on this machine run the same tests at the same time.
    root = fs::temp_directory_path() / fmt::format("abvm-run-session-{}-{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
    // B about 3 % slower, with a spread of +-1 % per boot.
    driver.answer = [this](const test::FakeBoot& b) {
      const double speed = b.spec.kernel.string().ends_with("-b") ? 0.97 : 1.0;
      const std::string out = test::fake_dd_output(2e9 * speed * test::fake_boot_wobble(b, 0.01));
      return test::FakeAnswer{.console = test::fake_guest_console(b.trial, b.nonce, experiment.workloads, out)};
    };
    write_file_atomic(root / "session.toml",
                      "name = \"session\"\ndescription = \"the report made from memory\"\n[guest]\nkernel = \"k\"\n"
                      "accelerator = \"tcg\"\n[disk]\nsize = \"16M\"\n[sides.A]\nlabel = \"base\"\n[sides.B]\n"
                      "label = \"patched\"\ncmdline_append = \"b=1\"\n[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\n"
                      "bs = \"8M\"\ncount = 16\nrepetitions = 2\n[schedule]\nboots_per_side = 4\nseed = 7\n");
    experiment = load_experiment(root / "session.toml");
    PreparedGuests& g = preparer.guests;
    g.base_image = root / "base.cpio.gz";
    write_file_atomic(g.base_image, std::string(100, 'x'));
    g.a = side_boot(experiment.a, "/k/vmlinuz-a", "");
    g.b = side_boot(experiment.b, "/k/vmlinuz-b", "");
    // Each side's kernel as a real build records it (run/prepare.cpp), with what the report's
    // sides table shows: the release and the guest's whole command line.
    g.kernels = {{"A", {{"release", "6.1-memory-a"}, {"cmdline", "console=ttyS0 quiet"}}},
                 {"B", {{"release", "6.1-memory-b"}, {"cmdline", "console=ttyS0 quiet b=1"}}}};
    g.image = {{"sha256", "00"}};
  }
  void TearDown() override {
    ::unsetenv("ABVM_PYTHON");
    fs::remove_all(root);
  }

  // A whole run of the experiment, as `abvm run` drives it, up to its reports.
  RunEnd run(const ResultsDir& dir) {
    Runner runner(experiment, dir,
                  {.connect = [this] { return std::vector<HostDriver>{{.name = "", .driver = &driver}}; },
                   .preparer = preparer,
                   .observer = quiet,
                   .decide = cli::sequential_looks(experiment),
                   .stop_requested = [] { return false; }});
    return runner.run({.uri = "fake:///session"});
  }
};

ProcessResult abvm_cmd(std::vector<std::string> args) {
  args.insert(args.begin(), ABVM_BINARY);
  return run_process(args, {.extra_env = {std::string("ABVM_PYTHON=") + kNoPython}});
}

TEST_F(RunSessionTest, TheReportOfARunComesFromMemoryAndIsTheOneItsFilesGive) {
  const ResultsDir dir = start_run(experiment, make_plan(experiment, 7), root / "results", root / "session.toml",
                                   "fake:///session");
  const RunEnd end = run(dir);
  ASSERT_EQ(end.status, RunStatus::complete);
  ASSERT_TRUE(end.records.has_value()) << "a session that ran hands over what it wrote";
  cli::write_run_outputs(experiment, dir, end);
  const std::string html = read_file(dir.report_html());
  const std::string analysis = read_file(dir.analysis()), summary = read_file(dir.summary());
  // The context is there: the experiment, each side's kernel, the host.
  EXPECT_THAT(html, HasSubstr("<h1>session</h1>"));
  EXPECT_THAT(html, HasSubstr("the report made from memory"));
  EXPECT_THAT(html, HasSubstr("<td>6.1-memory-b</td>"));
  EXPECT_THAT(html, HasSubstr("<td>console=ttyS0 quiet b=1</td>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>QEMU</th>"));
  EXPECT_THAT(summary, HasSubstr(" per block")) << "the pace, from the trials' seconds";

  // The commands that read the directory's files give the same outputs.
  const std::string from_files = (root / "from-files.html").string();
  const std::vector<std::vector<std::string>> readers = {
      {"report", dir.root().string(), "-o", from_files},
      {"analyze", dir.root().string(), "--html", from_files},
      {"run", "--resume", dir.root().string()}};
  for (const auto& command : readers) {
    const ProcessResult r = abvm_cmd(command);
    EXPECT_TRUE(r.exit_code != 2 && r.exit_code != 3) << command[0] << ": " << r.err;
    const fs::path written = command[0] == "run" ? dir.report_html() : fs::path(from_files);
    EXPECT_EQ(read_file(written), html) << "abvm " << command[0];
    fs::remove(written);
  }
  EXPECT_EQ(read_file(dir.analysis()), analysis) << "abvm run --resume";
  EXPECT_EQ(read_file(dir.summary()), summary) << "abvm run --resume";

  // Gone from disk, nothing but the journal is missed: the run holds the rest (the three files the
  // report once read back, and run.json and trials.jsonl, which the analysis read).
  for (const fs::path& file : {dir.config(), dir.kernels(), dir.environment(), dir.manifest(), dir.ledger()}) {
    ASSERT_TRUE(fs::exists(file)) << file;
  }
  for (const auto& entry : fs::directory_iterator(dir.root())) {
    if (entry.path() != dir.journal()) fs::remove_all(entry.path());
  }
  cli::write_run_outputs(experiment, dir, end);
  EXPECT_EQ(read_file(dir.report_html()), html);
  EXPECT_EQ(read_file(dir.analysis()), analysis);
  EXPECT_EQ(read_file(dir.summary()), summary);
}

}  // namespace
}  // namespace abvm
