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
  EXPECT_EQ(error_of("{"), file.string() + ": not JSON ([json.exception.parse_error.101] parse error at line 1, "
                                           "column 2: syntax error while parsing object key - unexpected end of "
                                           "input; expected string literal); measure again with "
                                           "harness/bench/calibrate_designs.py, or remove the file");
  EXPECT_EQ(error_of(R"({"host": "h", "designs": [{"design": "zigzag", "sd_pair": 1, "sd_boot": 1, "blocks_per_minute": 1}]})"),
            file.string() + ": unknown design \"zigzag\"; measure again with harness/bench/calibrate_designs.py, "
                            "or remove the file");
  EXPECT_NE(error_of(R"({"host": "h", "designs": [{"design": "co-scheduled", "sd_pair": 0, "sd_boot": 1, "blocks_per_minute": 1}]})")
                .find("design \"co-scheduled\" has a figure that is not positive"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"designs": []})").find("a field is missing or mistyped"), std::string::npos);
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
