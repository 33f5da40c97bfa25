// The host calibration file (harness/bench/calibrate_designs.py writes it) and the budget
// warning `abvm run` derives from it.
#include "plan/calibration.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

// Figures of the shape calibrate_designs.py writes (extra fields are ignored).
const char* kCalibration = R"({"calibration_version": 1, "host": "lab1", "time": "2026-12-01T05:00:00Z",
  "metric": "dd-write.bandwidth", "cpu_set": "0", "designs": [
  {"design": "sequential-blocks", "runs": 4, "sd_pair": 0.17, "sd_boot": 0.15, "sd_run": 0.07,
   "blocks_per_minute": 3.7, "blocks_for_2_5_percent": 225},
  {"design": "co-scheduled", "runs": 4, "sd_pair": 0.06, "sd_boot": 0.15, "sd_run": 0.07,
   "blocks_per_minute": 3.5, "blocks_for_2_5_percent": 16}]})";

class CalibrationTest : public ::testing::Test {
 protected:
  // One file per test process: ctest -j runs this fixture's tests side by side.
  fs::path file = fs::temp_directory_path() / ("abvm-calibration-test-" + std::to_string(::getpid()) + ".json");
  void TearDown() override { fs::remove(file); }
  HostCalibration read(const std::string& text) {
    write_file_atomic(file, text);
    return read_calibration(file).value();
  }
  std::string error_of(const std::string& text) {
    try {
      read(text);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
};

Experiment experiment(const std::string& schedule) {
  return load_experiment_text("name = \"x\"\n[sides.B]\ndevice.iommu_platform = true\n[[workload]]\nname = \"w\"\n"
                              "type = \"dd\"\n[schedule]\n" + schedule,
                              "x.toml", ".");
}

TEST_F(CalibrationTest, ReadsTheScriptsFile) {
  const HostCalibration c = read(kCalibration);
  EXPECT_EQ(c.host, "lab1");
  ASSERT_EQ(c.designs.size(), 2u);
  EXPECT_EQ(c.designs[1].design, Design::co_scheduled);
  EXPECT_EQ(c.designs[1].pair_sd, 0.06);
  EXPECT_EQ(c.designs[0].blocks_per_minute, 3.7);
  EXPECT_FALSE(read_calibration(file.string() + ".none").has_value());
}

TEST_F(CalibrationTest, ABrokenFileIsAnErrorNamingItAndWhatToDo) {
  const std::string remedy = "; measure again with harness/bench/calibrate_designs.py, or remove the file";
  EXPECT_EQ(error_of("{"), file.string() + ": not JSON (parse error at line 1, column 2: syntax error while parsing "
                                           "object key - unexpected end of input; expected string literal)" + remedy);
  EXPECT_EQ(error_of(R"({"host": "h", "designs": [{"design": "zigzag", "sd_pair": 1, "sd_boot": 1, "blocks_per_minute": 1}]})"),
            file.string() + ": field \"designs[0].design\" must be one of \"sequential-blocks\", \"co-scheduled\", "
                            "\"lockstep\", \"same-guest\", not \"zigzag\"" + remedy);
  EXPECT_EQ(error_of(R"({"host": "h", "designs": [{"design": "co-scheduled", "sd_pair": 0, "sd_boot": 1, "blocks_per_minute": 1}]})"),
            file.string() + ": design \"co-scheduled\" has a figure that is not positive" + remedy);
  EXPECT_EQ(error_of(R"({"designs": []})"), file.string() + ": field \"host\" is missing (a string)" + remedy);
  EXPECT_EQ(error_of(R"({"host": "h", "designs": [{"design": "lockstep", "sd_pair": "0.1"}]})"),
            file.string() + ": field \"designs[0].sd_pair\" must be a number, not \"0.1\"" + remedy);
  EXPECT_EQ(error_of(R"({"calibration_version": 3, "host": "h", "designs": []})"),
            file.string() + ": calibration_version 3 is newer than this abvm reads (2); update abvm, or measure again "
                            "with this checkout's harness/bench/calibrate_designs.py");
}

// The same formula as calibrate_designs.py's blocks_needed, written out: at ±2.5 %, 95 %,
// n = (1.96 sd / ln 1.025)^2 / (3/pi), twice that per side for the unpaired estimate.
TEST_F(CalibrationTest, BlocksNeededMatchTheScriptsFormula) {
  const HostCalibration c = read(kCalibration);
  const double z = 1.959963984540054, h = std::log(1.025);
  EXPECT_EQ(calibrated_blocks(c.designs[0], 0.025, 0.05),
            static_cast<std::uint64_t>(std::ceil(2 * std::pow(z * 0.15 / h, 2) * M_PI / 3)));
  EXPECT_EQ(calibrated_blocks(c.designs[1], 0.025, 0.05),
            static_cast<std::uint64_t>(std::ceil(std::pow(z * 0.06 / h, 2) * M_PI / 3)));
}

TEST_F(CalibrationTest, BudgetWarningNamesTheBetterDesign) {
  const HostCalibration c = read(kCalibration);
  const auto w = budget_warning(experiment("boots_per_side = 20\n"), c, "lab1");
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("design sequential-blocks needs about 297 blocks"), std::string::npos) << *w;
  EXPECT_NE(w->find("the budget is 20 boots per side"), std::string::npos) << *w;
  EXPECT_NE(w->find("set schedule.design = \"co-scheduled\""), std::string::npos) << *w;
  // Co-scheduled with 40 boots: enough. Another host's calibration says nothing here.
  EXPECT_FALSE(budget_warning(experiment("boots_per_side = 40\ndesign = \"co-scheduled\"\n"), c, "lab1"));
  EXPECT_FALSE(budget_warning(experiment("boots_per_side = 20\n"), c, "lab2"));
  // The sequential budget counts, not the first look's.
  const auto small = budget_warning(
      experiment("boots_per_side = 5\ndesign = \"co-scheduled\"\n[schedule.sequential]\nenabled = true\n"
                 "max_boots_per_side = 10\n"), c, "lab1");
  ASSERT_TRUE(small.has_value());
  EXPECT_NE(small->find("budget is 10 boots per side"), std::string::npos) << *small;
  EXPECT_NE(small->find("raise the budget or widen analysis.margin"), std::string::npos) << *small;
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// What the end of `abvm run` says another design would cost: this run's and the best other one's.
TEST_F(CalibrationTest, DesignCostsNameThisRunsDesignAndTheBestOther) {
  const HostCalibration c = read(kCalibration);
  Experiment e;
  e.schedule.design = Design::sequential_blocks;
  const auto text = design_costs(e, c, "lab1");
  ASSERT_TRUE(text.has_value());
  const std::uint64_t seq = calibrated_blocks(c.designs[0], 0.025, 0.05);
  const std::uint64_t co = calibrated_blocks(c.designs[1], 0.025, 0.05);
  EXPECT_NE(text->find(fmt::format("design sequential-blocks needs about {} blocks", seq)), std::string::npos) << *text;
  EXPECT_NE(text->find(fmt::format("the best other design, co-scheduled needs about {} blocks", co)), std::string::npos)
      << *text;
  EXPECT_FALSE(design_costs(e, c, "another-host").has_value());
  e.schedule.design = Design::lockstep;  // not calibrated
  EXPECT_FALSE(design_costs(e, c, "lab1").has_value());
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// The script's own output (harness/bench/calibrate_designs.py --reanalyze on a reduced series of
// real guests: the noise series in two designs, ruler-10 in sequential blocks, one run each), read
// as `abvm run` reads it; the summary is the one the script printed for the design.
TEST_F(CalibrationTest, ReadsTheScriptsVersion2Output) {
  const auto c = read_calibration(fs::path(ABVM_TEST_DATA) / "calibration" / "calibration-v2.json");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->version, 2);
  EXPECT_EQ(c->host, "vm");
  ASSERT_EQ(c->designs.size(), 2u);
  EXPECT_EQ(c->designs[1].design, Design::co_scheduled);
  ASSERT_EQ(c->checks.size(), 4u);
  EXPECT_EQ(c->checks[2].experiment, "ruler-10");
  EXPECT_EQ(c->checks[2].expected, 0.8975);
  EXPECT_EQ(c->checks[2].runs, 1u);
  EXPECT_FALSE(c->checks[2].bias->se.has_value());  // one run: no standard error
  EXPECT_EQ(truth_summary(*c, Design::sequential_blocks),
            "checked on noise, ruler-10: bias untested (one run each), intervals held the known ratio in 3 of 3 runs, "
            "0 of 3 verdicts contradicting the known effect");
  EXPECT_EQ(truth_summary(*c, Design::lockstep), "not checked on a known effect on this host");
}

// Version 2: the noise of three designs, and how two of them fared on a ruler (co-scheduled
// within its noise, lockstep biased) and on a control whose direction alone is known.
const char* kTruth = R"({"calibration_version": 2, "host": "lab1", "time": "2026-12-02T05:00:00Z",
  "metric": "dd-write.bandwidth", "noise_source": "noise", "designs": [
  {"design": "sequential-blocks", "sd_pair": 0.17, "sd_boot": 0.15, "blocks_per_minute": 3.7},
  {"design": "co-scheduled", "sd_pair": 0.06, "sd_boot": 0.15, "blocks_per_minute": 3.5},
  {"design": "lockstep", "sd_pair": 0.05, "sd_boot": 0.15, "blocks_per_minute": 4.0}],
  "experiments": [
  {"experiment": "ruler-10", "design": "co-scheduled", "metric": "dd-write.bandwidth", "truth": "ratio",
   "expected": 0.8975, "runs": [{}, {}, {}], "estimate": 0.8957,
   "bias": {"mean_log": -0.002, "se": 0.001, "runs": 3, "beyond_2se": false},
   "coverage": {"covered": 3, "runs": 3, "share": 1.0, "level": 0.975, "p_low": 1.0, "undercovers": false},
   "spurious": {"count": 0, "runs": 3, "errors": 0}},
  {"experiment": "ruler-10", "design": "lockstep", "metric": "dd-write.bandwidth", "truth": "ratio",
   "expected": 0.8975, "runs": [{}, {}, {}],
   "bias": {"mean_log": 0.0296, "se": 0.004, "runs": 3, "beyond_2se": true},
   "coverage": {"covered": 0, "runs": 3, "level": 0.975, "undercovers": true},
   "spurious": {"count": 1, "runs": 3}},
  {"experiment": "neighbour", "design": "co-scheduled", "metric": "fio-rand.write.bandwidth", "truth": "direction",
   "expected": null, "runs": [{}, {}, {}], "bias": null, "coverage": null, "spurious": {"count": 1, "runs": 3}}],
  "skipped": []})";

const std::string kLockstepOff =
    "off on known effects on this host: ruler-10 dd-write.bandwidth: estimates +3.0 % ± 0.4 % from the known "
    "ratio 0.8975 over 3 runs (beyond 2 s.e.), intervals held it in 0 of 3 runs at 97.5 %";
const std::string kCoScheduledChecked =
    "checked on ruler-10, neighbour: no bias beyond 2 s.e., intervals held the known ratio in 3 of 3 runs, 1 of 6 "
    "verdicts contradicting the known effect";

TEST_F(CalibrationTest, ReadsVersion2TruthChecks) {
  const HostCalibration c = read(kTruth);
  EXPECT_EQ(c.version, 2);
  ASSERT_EQ(c.checks.size(), 3u);
  const TruthCheck& ruler = c.checks[0];
  EXPECT_EQ(ruler.experiment, "ruler-10");
  EXPECT_EQ(ruler.design, Design::co_scheduled);
  EXPECT_EQ(ruler.metric, "dd-write.bandwidth");
  EXPECT_EQ(ruler.expected, 0.8975);
  EXPECT_EQ(ruler.runs, 3u);
  ASSERT_TRUE(ruler.bias.has_value());
  EXPECT_EQ(ruler.bias->se, 0.001);
  ASSERT_TRUE(ruler.coverage.has_value());
  EXPECT_EQ(ruler.coverage->level, 0.975);
  EXPECT_FALSE(ruler.failed());
  EXPECT_TRUE(c.checks[1].failed());
  EXPECT_FALSE(c.checks[2].expected.has_value());
  EXPECT_FALSE(c.checks[2].bias.has_value());
  EXPECT_EQ(c.checks[2].spurious, 1u);
  // A version 1 file has no checks and reads as before.
  EXPECT_TRUE(read(kCalibration).checks.empty());
  EXPECT_EQ(read(kCalibration).version, 1);
}

TEST_F(CalibrationTest, ANewerVersionOrATruthWithoutItsRatioIsRefused) {
  EXPECT_EQ(error_of(R"({"calibration_version": 3, "host": "h", "designs": []})"),
            file.string() + ": calibration_version 3 is newer than this abvm reads (2); update abvm, or measure again "
                            "with this checkout's harness/bench/calibrate_designs.py");
  EXPECT_EQ(error_of(R"({"calibration_version": 2, "host": "h", "designs": [], "experiments": [
    {"experiment": "ruler-3", "design": "lockstep", "metric": "m", "truth": "ratio", "expected": null, "runs": [],
     "bias": {"mean_log": 0, "se": null, "runs": 1, "beyond_2se": null}, "coverage": null,
     "spurious": {"count": 0, "runs": 1}}]})"),
            file.string() + ": experiment \"ruler-3\" in design \"lockstep\" has a bias or coverage but no expected "
                            "ratio; measure again with harness/bench/calibrate_designs.py, or remove the file");
  EXPECT_EQ(error_of(R"({"calibration_version": 2, "host": "h", "designs": []})"),
            file.string() + ": field \"experiments\" is missing (a list); measure again with "
                            "harness/bench/calibrate_designs.py, or remove the file");
  EXPECT_EQ(error_of(R"({"calibration_version": 0, "host": "h", "designs": []})"),
            file.string() + ": calibration_version 0 is not one abvm writes; measure again with "
                            "harness/bench/calibrate_designs.py, or remove the file");
  EXPECT_EQ(error_of(R"({"calibration_version": "2", "host": "h", "designs": []})"),
            file.string() + ": field \"calibration_version\" must be an integer, not \"2\"; measure again with "
                            "harness/bench/calibrate_designs.py, or remove the file");
}

TEST_F(CalibrationTest, TruthSummarySaysWhatEachDesignWasCheckedOn) {
  const HostCalibration c = read(kTruth);
  EXPECT_EQ(truth_summary(c, Design::co_scheduled), kCoScheduledChecked);
  EXPECT_EQ(truth_summary(c, Design::lockstep), kLockstepOff);
  EXPECT_EQ(truth_summary(c, Design::sequential_blocks), "not checked on a known effect on this host");
  // One run each: a bias without its standard error is not a test.
  const HostCalibration one = read(R"({"calibration_version": 2, "host": "h", "designs": [], "experiments": [
    {"experiment": "aa", "design": "same-guest", "metric": "m", "truth": "ratio", "expected": 1.0, "runs": [{}],
     "bias": {"mean_log": 0.01, "se": null, "runs": 1, "beyond_2se": null},
     "coverage": {"covered": 1, "runs": 1, "level": 0.95, "undercovers": false},
     "spurious": {"count": 0, "runs": 1}}]})");
  EXPECT_EQ(truth_summary(one, Design::same_guest),
            "checked on aa: bias untested (one run each), intervals held the known ratio in 1 of 1 runs, 0 of 1 "
            "verdicts contradicting the known effect");
}

// Lockstep is the cheapest by its noise, but its estimates were off on the ruler: the warning
// proposes co-scheduled, and says what it was checked on.
TEST_F(CalibrationTest, BudgetWarningProposesOnlyADesignThatPassedItsChecks) {
  const HostCalibration c = read(kTruth);
  const auto w = budget_warning(experiment("boots_per_side = 20\n"), c, "lab1");
  ASSERT_TRUE(w.has_value());
  const std::uint64_t co = calibrated_blocks(c.designs[1], 0.025, 0.05);
  EXPECT_EQ(*w, fmt::format("this host's calibration (2026-12-02T05:00:00Z) says design sequential-blocks needs "
                            "about 297 blocks (~80 min) for a ±2.5 % interval at 95 %, and the budget is 20 boots "
                            "per side: expect an inconclusive verdict; design co-scheduled needs about {} (~{:.0f} "
                            "min; {}): set schedule.design = \"co-scheduled\"",
                            co, static_cast<double>(co) / 3.5, kCoScheduledChecked));
  // With the version 1 file, the proposal says that it was not checked on a known effect.
  const auto v1 = budget_warning(experiment("boots_per_side = 20\n"), read(kCalibration), "lab1");
  ASSERT_TRUE(v1.has_value());
  EXPECT_NE(v1->find("min; not checked on a known effect on this host): set schedule.design = \"co-scheduled\""),
            std::string::npos)
      << *v1;
}

TEST_F(CalibrationTest, TruthWarningNamesTheFiguresTheEffectAndASoundDesign) {
  const HostCalibration c = read(kTruth);
  const auto w = truth_warning(experiment("boots_per_side = 20\ndesign = \"lockstep\"\n"), c, "lab1");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "this host's calibration (2026-12-02T05:00:00Z) found design lockstep " + kLockstepOff +
                    ": its verdicts may be off by as much; design co-scheduled was " + kCoScheduledChecked);
  EXPECT_FALSE(truth_warning(experiment("boots_per_side = 20\ndesign = \"co-scheduled\"\n"), c, "lab1"));
  EXPECT_FALSE(truth_warning(experiment("boots_per_side = 20\n"), c, "lab1"));  // not checked: nothing to say
  EXPECT_FALSE(truth_warning(experiment("boots_per_side = 20\ndesign = \"lockstep\"\n"), c, "lab2"));
}

// A series of known effects without the A/A noise series: no noise figures, so no budget warning,
// but the truth warning still names the design that passed.
TEST_F(CalibrationTest, TruthWarningWithoutNoiseFiguresStillNamesASoundDesign) {
  const HostCalibration c = read(R"({"calibration_version": 2, "host": "lab1", "time": "t", "noise_source": null,
    "designs": [], "experiments": [
    {"experiment": "ruler-3", "design": "lockstep", "metric": "m", "truth": "ratio", "expected": 0.97, "runs": [{}, {}],
     "bias": {"mean_log": 0.05, "se": 0.01, "runs": 2, "beyond_2se": true}, "coverage": null,
     "spurious": {"count": 2, "runs": 2}},
    {"experiment": "ruler-3", "design": "co-scheduled", "metric": "m", "truth": "ratio", "expected": 0.97,
     "runs": [{}, {}], "bias": {"mean_log": 0.001, "se": 0.01, "runs": 2, "beyond_2se": false},
     "coverage": {"covered": 2, "runs": 2, "level": 0.95, "undercovers": false}, "spurious": {"count": 0, "runs": 2}}]})");
  const Experiment lockstep = experiment("boots_per_side = 20\ndesign = \"lockstep\"\n");
  EXPECT_FALSE(budget_warning(lockstep, c, "lab1"));
  const auto w = truth_warning(lockstep, c, "lab1");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "this host's calibration (t) found design lockstep off on known effects on this host: ruler-3 m: "
                "estimates +5.1 % ± 1.0 % from the known ratio 0.97 over 2 runs (beyond 2 s.e.): its verdicts may be "
                "off by as much; design co-scheduled was checked on ruler-3: no bias beyond 2 s.e., intervals held "
                "the known ratio in 2 of 2 runs, 0 of 2 verdicts contradicting the known effect");
}

TEST_F(CalibrationTest, DesignCostsSayWhatEachDesignWasCheckedOn) {
  const HostCalibration c = read(kTruth);
  Experiment e;
  e.schedule.design = Design::lockstep;
  const auto text = design_costs(e, c, "lab1");
  ASSERT_TRUE(text.has_value());
  const std::uint64_t lock = calibrated_blocks(c.designs[2], 0.025, 0.05);
  const std::uint64_t co = calibrated_blocks(c.designs[1], 0.025, 0.05);
  EXPECT_EQ(*text, fmt::format("by this host's calibration (2026-12-02T05:00:00Z), a ±2.5 % interval at 95 %: "
                               "design lockstep needs about {} blocks (~{:.0f} min; {}); the best other design, "
                               "co-scheduled needs about {} blocks (~{:.0f} min; {})",
                               lock, static_cast<double>(lock) / 4.0, kLockstepOff, co,
                               static_cast<double>(co) / 3.5, kCoScheduledChecked));
}

}  // namespace
}  // namespace abvm
