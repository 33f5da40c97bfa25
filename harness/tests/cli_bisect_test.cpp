// abvm bisect without libvirt: whole bisections through the real Bisection and Runner (the same
// journal, plan, resume, looks and reports as abvm run) with the tests' one fake driver, whose
// guests print real dd output at a bandwidth the test scripts per kernel; each look of a step is
// bisect/bisection.hpp step_looks(), its end cli/run_session write_run_outputs(). Covers naming
// the scripted culprit with every step's results directory, each look finding what the full
// analysis (cli/results_analysis decide()) finds, a resume after an
// interruption that runs no finished step or trial again, a step whose kernel does not build, and
// the command's door: --help, --dry-run and the errors of bad input, through the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "bisect/bisection.hpp"
#include "bisect/report.hpp"
#include "cli/results_analysis.hpp"
#include "cli/run_session.hpp"
#include "config/experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "fake_driver.hpp"
#include "results/directory.hpp"
#include "samples/journal.hpp"
#include "verdict/look.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// The kernel a side boots, from the path the preparer below hands out: ".../kernel-<k>/vmlinuz".
int kernel_of(const fs::path& image) {
  const std::string dir = image.parent_path().filename().string();
  return std::stoi(dir.substr(dir.find('-') + 1));
}

// The 1-based number of the first line of `file` that starts with `text` (0: none), so that an
// expected message follows the file's edits.
int line_of(const fs::path& file, std::string_view text) {
  std::istringstream in(read_file(file));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.starts_with(text)) return n;
  }
  return 0;
}

// Hands over files instead of building kernels; kernel `broken` "does not build".
struct KernelFiles : GuestPreparer {
  fs::path dir;
  int broken = -1;
  std::multiset<int> prepared;
  PreparedGuests prepare(const Experiment& e) override {
    PreparedGuests g;
    g.base_image = dir / "base.cpio.gz";
    write_file_atomic(g.base_image, std::string(100, 'x'));
    for (Side s : kSides) {
      const int k = std::stoi(fs::path(e.side(s).kernel).stem().string().substr(7));  // kernel-<k>.toml
      if (k == broken) throw Error(fmt::format("kernel-{}.toml: make bzImage failed (exit 2)", k));
      prepared.insert(k);
      (s == Side::a ? g.a : g.b) = side_boot(e.side(s), dir / fmt::format("kernel-{}", k) / "vmlinuz", "");
    }
    g.kernels = {{"A", {{"release", "6.1"}}}, {"B", {{"release", "6.1"}}}};
    g.image = {{"sha256", "00"}};
    return g;
  }
};

struct Notes : RunObserver {
  std::vector<std::string> lines;
  void note(const std::string& text) override { lines.push_back(text); }
  void progress(const ProgressState&) override {}
  void finish() override {}
};

class BisectRunTest : public ::testing::Test {
 protected:
  fs::path root;
  test::FakeDriver driver{"bisect-host"};
  KernelFiles preparer;
  Notes notes;
  std::map<int, double> speed = {{0, 1}, {1, 1}, {2, 1}, {3, 0.57}, {4, 0.57}};  // patch 3 is the culprit
  std::function<bool()> stop = [] { return false; };
  Experiment experiment;

  void SetUp() override {
    ::setenv("ABVM_PYTHON", "/nonexistent/python3", 1);  // report.html without plots: fast
    // With the pid: other checkouts on this machine run the same tests at the same time.
    root = fs::temp_directory_path() / fmt::format("abvm-bisect-run-{}-{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "kernels" / "patches");
    preparer.dir = root;
    write_file_atomic(root / "kernels" / "frag.config", "CONFIG_VIRTIO=y\n");
    std::string series;
    for (int i = 1; i <= 4; ++i) {
      write_file_atomic(root / "kernels" / "patches" / fmt::format("000{}-p.patch", i), fmt::format("patch {}\n", i));
      series += fmt::format("000{}-p.patch\n", i);
    }
    write_file_atomic(root / "kernels" / "patches" / "series", series);
    const std::string recipe = "source = \"linux-source\"\npackage = \"linux-source-6.1\"\nfragments = [\"frag.config\"]\n";
    write_file_atomic(root / "kernels" / "base.toml", recipe);
    write_file_atomic(root / "kernels" / "tip.toml", recipe + "series = \"patches/series\"\n");
    // Every fake run of kernel k measures speed[k] with a spread of +-1.5 % per boot.
    driver.answer = [this](const test::FakeBoot& b) {
      const double wobble = test::fake_boot_wobble(b, 0.015);
      const std::string out = test::fake_dd_output(2e9 * speed.at(kernel_of(b.spec.kernel)) * wobble);
      return test::FakeAnswer{.console = test::fake_guest_console(b.trial, b.nonce, experiment.workloads, out)};
    };
    write_file_atomic(root / "bis.toml",
                      "name = \"bis\"\n[guest]\naccelerator = \"tcg\"\n[disk]\nsize = \"1M\"\n[sides.A]\nlabel = \"6.1\"\n"
                      "kernel = \"" + (root / "kernels/base.toml").string() + "\"\n[sides.B]\nkernel = \"" +
                          (root / "kernels/tip.toml").string() +
                          "\"\n[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nrepetitions = 2\n[schedule]\n"
                          // The scripted guests print their records all at once, not in paced windows:
                          // their runs' times say nothing of how they overlapped, so no pair is voided.
                          "boots_per_side = 10\ndesign = \"co-scheduled\"\nmin_overlap = 0.0\n"
                          "[schedule.sequential]\nenabled = true\n"
                          "max_boots_per_side = 20\nlook_every = 5\ncorrection = \"pocock\"\n"
                          "[analysis]\nmargin = 0.1\nmetrics = [{ name = \"dd-write.bandwidth\" }]\n");
    experiment = load_experiment(root / "bis.toml");
  }
  void TearDown() override {
    ::unsetenv("ABVM_PYTHON");
    fs::remove_all(root);
  }

  BisectDir start() {
    return start_bisection(experiment, setup_bisection(experiment, root / "bis.toml", {}), root / "results");
  }
  BisectEnd run(const BisectDir& dir, std::optional<MeasuredComparison> measured = std::nullopt) {
    Bisection b(dir, {.connect = [this]() -> GuestDriver& { return driver; },
                      .preparer = preparer,
                      .observer = notes,
                      .finish = [](const Experiment& e, const ResultsDir& d, const RunEnd& end) {
                        return cli::write_run_outputs(e, d, end).analysis;
                      },
                      .stop_requested = [this] { return stop(); },
                      .measured = std::move(measured)});
    return b.run("fake:///bisect");
  }
  static std::vector<StepQuestion> asked(const BisectEnd& end) {
    std::vector<StepQuestion> out;
    for (const auto& s : end.steps) out.push_back(s.question);
    return out;
  }
};

TEST_F(BisectRunTest, TheScriptedCulpritIsNamedAndEveryStepIsAnAbvmRunOfItsOwn) {
  const BisectDir dir = start();
  const BisectEnd end = run(dir);
  ASSERT_FALSE(end.interrupted);
  EXPECT_EQ(asked(end), (std::vector<StepQuestion>{{4, 0}, {2, 0}, {3, 0}, {4, 3}}));
  ASSERT_EQ(end.state.outcome, BisectOutcome::culprits);
  EXPECT_EQ(end.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0}}));
  EXPECT_EQ(bisect_exit_code(end.state), 1);
  for (const auto& s : end.steps) {
    const ResultsDir rd(dir.root() / s.results_dir);
    EXPECT_TRUE(fs::exists(rd.journal())) << s.results_dir;
    EXPECT_TRUE(fs::exists(rd.plan()));
    EXPECT_TRUE(fs::exists(rd.report_html()));
    const json analysis = json::parse(read_file(rd.analysis()));
    EXPECT_EQ(analysis["options"]["primary_estimate"], "paired");
    EXPECT_EQ(s.judgement.finding == StepFinding::slower, analysis["verdict"] == "regression") << s.results_dir;
    EXPECT_EQ(read_manifest(rd).status, RunStatus::stopped) << "each step stops at its first look: " << s.stop_reason;
    EXPECT_EQ(s.boots_per_side, 10);
    const Experiment step = load_saved_experiment(rd, read_manifest(rd));
    EXPECT_EQ(step.a.kernel, dir.kernel_recipe(s.question.reference).string());
    EXPECT_EQ(step.b.kernel, dir.kernel_recipe(s.question.kernel).string());
    EXPECT_DOUBLE_EQ(step.analysis.confidence, 1 - 0.05 / 7);
  }
  EXPECT_EQ(end.steps[0].judgement.effects.at(0).estimate_kind, "paired");
  EXPECT_NEAR(end.steps[0].judgement.effects.at(0).estimate, 0.57, 0.02);
  EXPECT_EQ(read_step_ledger(dir).size(), 4u);
  EXPECT_EQ(end.boots_per_side, 40);
  EXPECT_EQ(driver.boots.size(), 80u);
  EXPECT_EQ(preparer.prepared.count(1), 0u) << "kernel 1 is never needed";
}

// A step's looks are `abvm run`'s (verdict/look.hpp LookDecider: the journal read as it grows, the
// verdict-deciding analysis alone). On every step of a bisection, its journal replayed a block at
// a time, each look finds what judge_step() finds of the full analysis (cli/results_analysis
// decide()) of the same results at the same confidence, for the same reason.
TEST_F(BisectRunTest, EveryLookOfAStepFindsWhatTheFullAnalysisFinds) {
  const BisectDir dir = start();
  const BisectEnd end = run(dir);
  ASSERT_EQ(end.steps.size(), 4u);
  int found = 0;
  for (const auto& s : end.steps) {
    const ResultsDir done(dir.root() / s.results_dir);
    const Experiment step = load_saved_experiment(done, read_manifest(done));
    const std::string journal = read_file(done.journal());
    const ResultsDir replay(root / fmt::format("replay-{}", s.step));
    fs::create_directories(replay.root());
    write_manifest(replay, {.abvm_version = "test", .started = "2026-11-29T00:00:00Z"});
    const LookDecision look = step_looks(step);
    LookDecider reasons(step);
    for (std::size_t pos = 0; pos < journal.size();) {
      for (int line = 0; line < 4 && pos < journal.size(); ++line) pos = journal.find('\n', pos) + 1;  // a block
      write_file_atomic(replay.journal(), journal.substr(0, pos));
      for (double confidence : {s.confidence, 0.95}) {
        SCOPED_TRACE(fmt::format("step {}, {} bytes at {}", s.step, pos, confidence));
        const RunEnd at_confidence{.final_confidence = confidence};
        const StepJudgement full = judge_step(cli::decide(step, replay, at_confidence).analysis);
        EXPECT_EQ(look(replay, confidence).value_or("unknown"), to_string(full.finding));
        EXPECT_EQ(judge_step(reasons.analysis(replay.root(), confidence)).reason, full.reason);
        found += full.finding != StepFinding::unknown;
      }
    }
  }
  EXPECT_GT(found, 8) << "the looks find slower and not slower, not only unknown";
}

TEST_F(BisectRunTest, AResumedBisectionRunsNoFinishedStepOrTrialAgain) {
  const BisectDir dir = start();
  // Stop in the middle of step 2 (after 10 blocks of step 1 and 3 of step 2).
  stop = [this] { return driver.boots.size() >= 26; };
  const BisectEnd first = run(dir);
  ASSERT_TRUE(first.interrupted);
  ASSERT_EQ(first.steps.size(), 1u);
  const std::size_t booted = driver.boots.size();
  std::set<std::string> trials_before;  // "<step dir>/<trial>" booted in the first session
  for (const auto& b : driver.boots) trials_before.insert(b.spec.console_log.parent_path().string());
  stop = [] { return false; };
  const BisectEnd second = run(dir);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(asked(second), (std::vector<StepQuestion>{{4, 0}, {2, 0}, {3, 0}, {4, 3}}));
  EXPECT_EQ(second.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0}}));
  std::size_t again = 0;
  for (std::size_t i = booted; i < driver.boots.size(); ++i) {
    again += trials_before.contains(driver.boots[i].spec.console_log.parent_path().string());
  }
  // Only the block the interruption cut short runs again (a co-scheduled block runs whole).
  EXPECT_LE(again, 2u);
  EXPECT_EQ(driver.boots.size(), 80u + again);
  EXPECT_EQ(read_step_ledger(dir).size(), 4u);
  for (const auto& s : second.steps) {
    std::multiset<std::string> trials;
    for (const auto& e : read_journal(ResultsDir(dir.root() / s.results_dir).journal())) trials.insert(e.trial + "/" + std::to_string(e.run));
    for (const auto& t : trials) EXPECT_EQ(trials.count(t), 1u) << s.results_dir << " " << t;
  }
  // A third session has nothing left to do.
  const std::size_t all = driver.boots.size();
  EXPECT_EQ(run(dir).steps.size(), 4u);
  EXPECT_EQ(driver.boots.size(), all);
}

TEST_F(BisectRunTest, AStepWhoseKernelDoesNotBuildIsUnknownAndTheSearchGoesOnAroundIt) {
  preparer.broken = 2;
  const BisectDir dir = start();
  const BisectEnd end = run(dir);
  EXPECT_EQ(asked(end), (std::vector<StepQuestion>{{4, 0}, {2, 0}, {1, 0}, {3, 0}, {4, 3}}));
  EXPECT_EQ(end.steps[1].judgement.finding, StepFinding::unknown);
  EXPECT_EQ(end.steps[1].judgement.reason,
            "unknown: the step's kernels could not be prepared (kernel-2.toml: make bzImage failed (exit 2))");
  EXPECT_EQ(end.state.culprits, (std::vector<CulpritRange>{{.first = 2, .last = 3, .reference = 0, .unknown = {2}}}));
  const std::string sentence = bisect_sentence({.plan = read_bisect_plan(dir), .steps = end.steps, .state = end.state});
  EXPECT_NE(sentence.find("One of patches 2-3"), std::string::npos) << sentence;
}

TEST_F(BisectRunTest, TheBootBudgetOverAllStepsEndsTheSearchWithItsRange) {
  const BisectDir dir =
      start_bisection(experiment, setup_bisection(experiment, root / "bis.toml", {.max_boots_per_side = 25}), root / "results");
  const BisectEnd end = run(dir);
  // 10 + 10 boots per side, then 5 left: less than a step's first look.
  EXPECT_EQ(asked(end), (std::vector<StepQuestion>{{4, 0}, {2, 0}}));
  EXPECT_EQ(end.state.end, SearchEnd::out_of_budget);
  EXPECT_EQ(end.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 4, .reference = 0}}));
  EXPECT_EQ(bisect_exit_code(end.state), 1);
  // The second step's own budget was what was left of the bisection's.
  const ResultsDir second(dir.root() / end.steps[1].results_dir);
  EXPECT_EQ(load_saved_experiment(second, read_manifest(second)).schedule.sequential.max_boots_per_side, 15);
  const std::string sentence = bisect_sentence({.plan = read_bisect_plan(dir), .steps = end.steps, .state = end.state});
  EXPECT_NE(sentence.find("the boot budget, --max-boots, is spent"), std::string::npos) << sentence;
}

// The nightly job hands its own run of the head against A to the bisection as step 1
// (MeasuredComparison; cli_nightly_test covers the night that does). Taken when the run's blocks are
// a look of the step's schedule and decide at the step's level; otherwise step 1 runs as any step,
// and a run that cannot be read is said so, not an error.
class MeasuredStepTest : public BisectRunTest {
 protected:
  // A finished run of the bisection's first question, the tip (kernel 4) against the base: a first
  // bisection's own step 1, at its first look (10 blocks), or `fixed` blocks without looks.
  ResultsDir measured_run(int fixed = 0) {
    Experiment e = experiment;
    fs::path file = root / "bis.toml";
    if (fixed > 0) {
      std::string text = read_file(file);
      text.replace(text.find("boots_per_side = 10"), 19, fmt::format("boots_per_side = {}", fixed));
      text.replace(text.find("enabled = true"), 14, "enabled = false");
      file = root / "fixed.toml";
      write_file_atomic(file, text);
      e = load_experiment(file);
    }
    const BisectDir first = start_bisection(e, setup_bisection(e, file, {}), root / "first");
    const BisectEnd end = run(first);
    EXPECT_EQ(end.steps.at(0).question, (StepQuestion{4, 0}));
    return ResultsDir(first.root() / end.steps.at(0).results_dir);
  }
  static bool step_ran_itself(const BisectDir& dir, const StepRecord& s) {
    return s.stop_reason.find("taken from the comparison already measured") == std::string::npos &&
           fs::exists(ResultsDir(dir.root() / s.results_dir).journal()) && s.results_dir.find("-step1-") != std::string::npos;
  }
};

TEST_F(MeasuredStepTest, ARunOfTheFirstQuestionThatDecidesAtALookIsStepOneAndNotMeasuredAgain) {
  const ResultsDir measured = measured_run();
  const std::size_t boots = driver.boots.size();
  const BisectDir dir = start_bisection(experiment, setup_bisection(experiment, root / "bis.toml", {}), root / "second");
  const BisectEnd end = run(dir, MeasuredComparison{.question = {4, 0}, .results_dir = measured.root()});
  ASSERT_EQ(asked(end), (std::vector<StepQuestion>{{4, 0}, {2, 0}, {3, 0}, {4, 3}}));
  EXPECT_NE(end.steps[0].stop_reason.find("taken from the comparison already measured"), std::string::npos)
      << end.steps[0].stop_reason;
  EXPECT_EQ(fs::weakly_canonical(dir.root() / end.steps[0].results_dir), fs::weakly_canonical(measured.root()));
  EXPECT_EQ(end.steps[0].judgement.finding, StepFinding::slower);
  // Judged at the level of the step's own first look, where steps 2-4 stopped too (10 blocks each).
  EXPECT_DOUBLE_EQ(end.steps[0].confidence, end.steps[1].confidence);
  EXPECT_GT(end.steps[0].confidence, 1 - 0.05 / 7) << "a look's level, not the night's";
  EXPECT_EQ(driver.boots.size() - boots, 60u) << "steps 2-4 booted, step 1 did not";
}

TEST_F(MeasuredStepTest, ARunWhoseBlocksAreNoLookOfTheStepIsNotTakenAndTheStepRuns) {
  // 12 blocks: the step looks after 10, 15 and 20. A step stopped at a look never saw 12.
  const ResultsDir measured = measured_run(12);
  ASSERT_EQ(read_plan(measured).blocks, 12);
  const BisectDir dir = start_bisection(experiment, setup_bisection(experiment, root / "bis.toml", {}), root / "second");
  const BisectEnd end = run(dir, MeasuredComparison{.question = {4, 0}, .results_dir = measured.root()});
  ASSERT_FALSE(end.steps.empty());
  EXPECT_TRUE(step_ran_itself(dir, end.steps[0])) << end.steps[0].results_dir << ": " << end.steps[0].stop_reason;
  EXPECT_TRUE(std::any_of(notes.lines.begin(), notes.lines.end(), [&](const std::string& l) {
    return l.find("stopped after 12 blocks, no look of the step's schedule; the step runs") != std::string::npos;
  })) << ::testing::PrintToString(notes.lines);
  EXPECT_EQ(end.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0}}));
}

TEST_F(MeasuredStepTest, ARunThatCannotBeReadIsSaidAndTheStepRuns) {
  const BisectDir dir = start();
  const fs::path missing = root / "no-such-run";
  const BisectEnd end = run(dir, MeasuredComparison{.question = {4, 0}, .results_dir = missing});
  ASSERT_FALSE(end.steps.empty());
  EXPECT_TRUE(step_ran_itself(dir, end.steps[0])) << end.steps[0].results_dir;
  EXPECT_TRUE(std::any_of(notes.lines.begin(), notes.lines.end(), [&](const std::string& l) {
    return l.find("cannot be read") != std::string::npos && l.find(missing.string()) != std::string::npos &&
           l.find("the step runs") != std::string::npos;
  }));
  EXPECT_EQ(end.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0}}));
}

// ---- the command, through the real binary ---------------------------------------------------

ProcessResult abvm(std::vector<std::string> args) {
  args.insert(args.begin(), ABVM_BINARY);
  return run_process(args, {.timeout = std::chrono::seconds(60)});
}

TEST(BisectCommand, HelpSaysWhatItDoesAndItsExitCodes) {
  const ProcessResult r = abvm({"bisect", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* part : {"--resume", "--dry-run", "--max-steps", "--max-boots", "1 - (1 - confidence) / max-steps",
                           "4 not settled", "130 interrupted"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(BisectCommand, DryRunShowsTheSeriesTheErrorBudgetAndTheFirstStep) {
  const ProcessResult r = abvm({"bisect", "--dry-run", std::string(ABVM_SOURCE_DIR) + "/configs/bisect-control.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("patch  3: 0003-virtio_blk-bounce-every-request-through-swiotlb.patch -> kernel 3 (6.1+3)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Bonferroni over at most 7 steps: each step at 99.2857 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10 boots per side: look 1 of 3 at nominal level 99.56 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("name = 'bisect-control-step1'"), std::string::npos) << r.out;
  const ProcessResult seed = abvm({"bisect", "--dry-run", std::string(ABVM_SOURCE_DIR) + "/configs/virtio-dma-api-bisect.toml"});
  ASSERT_EQ(seed.exit_code, 0) << seed.err;
  EXPECT_NE(seed.out.find("patch  4: 0004-virtio-add-a-platform-hook-to-override-the-DMA-ops-o.patch"), std::string::npos);
}

TEST(BisectCommand, BadInputIsAnErrorSayingWhereAndWhatToDo) {
  const std::string configs = std::string(ABVM_SOURCE_DIR) + "/configs/";
  ProcessResult r = abvm({"bisect", configs + "demo.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(fmt::format("demo.toml:{} (sides.B.device.iommu_platform): side B's device.iommu_platform = true "
                                   "differs from side A's false: abvm bisect compares kernels only",
                                   line_of(configs + "demo.toml", "device.iommu_platform = true"))),
            std::string::npos) << r.err;
  r = abvm({"bisect", configs + "aa-control.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("aa-control.toml (sides.A.kernel: side A inherits guest.kernel (" + configs +
                       "aa-control.toml:7)): kernel 'debian-cloud' is a packaged Debian kernel, which has no patch series"),
            std::string::npos) << r.err;
  r = abvm({"bisect", "--max-boots", "3", configs + "bisect-control.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-boots 3 is less than the 10 boots per side every step needs before its first look"),
            std::string::npos) << r.err;
  r = abvm({"bisect", "--resume", ABVM_SOURCE_DIR});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an abvm bisect directory (no bisect-plan.json)"), std::string::npos) << r.err;
  r = abvm({"bisect", "--resume", "x", configs + "bisect-control.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give either CONFIG or --resume DIR, not both"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace abvm
