// config/workload: a workload's run size in the tool's words, and its scaling by a whole factor
// (run/sizing.hpp), per kind; and the min_run_time keys that ask for it.
#include "config/workload.hpp"

#include <gtest/gtest.h>

#include "config/experiment.hpp"
#include "core/error.hpp"

namespace abvm {
namespace {

const std::string kFile =
    "name = \"sizes\"\n[sides.B]\ndevice.iommu_platform = true\n"
    "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nbs = \"8M\"\ncount = 16\n";

TEST(ConfigWorkload, DdScalesItsCountAndKeepsItsBlockSize) {
  const WorkloadSpec dd = DdWorkload{.block_size = "8M", .count = 16};
  EXPECT_EQ(run_size(dd), "bs=8M count=16");
  EXPECT_EQ(unsizable(dd), std::nullopt);
  const WorkloadSpec big = scaled(dd, 5);
  EXPECT_EQ(run_size(big), "bs=8M count=80");
  EXPECT_EQ(std::get<DdWorkload>(big).oflag, std::vector<std::string>{"direct"});
  EXPECT_EQ(scratch_extent(dd), 128u << 20);
  EXPECT_EQ(scratch_extent(DdWorkload{.output = "/dev/null"}), std::nullopt);
}

TEST(ConfigWorkload, FioScalesItsSizeOrItsNumberOfIos) {
  FioWorkload fio;
  fio.options["size"] = "16M";
  EXPECT_EQ(run_size(fio), "bs=1M size=16M");
  EXPECT_EQ(run_size(scaled(fio, 3)), "bs=1M size=48M");
  EXPECT_EQ(scratch_extent(fio), 16u << 20);
  fio.options["number_ios"] = "100";
  EXPECT_EQ(run_size(scaled(fio, 3)), "bs=1M size=16M number_ios=300");
  EXPECT_EQ(scratch_extent(fio), std::nullopt);
}

TEST(ConfigWorkload, WhatSetsItsOwnLengthIsNotSized) {
  FioWorkload timed;
  timed.options["runtime"] = "10s";
  timed.options["time_based"] = "1";
  EXPECT_EQ(unsizable(timed), "fio's runtime= already sets its length");
  const WorkloadSpec file = FioWorkload{.job_file = "[job]\nrw=write\n"};
  EXPECT_EQ(unsizable(file), "a fio job file sets its own size");
  EXPECT_EQ(run_size(file), "job file");
}

TEST(ConfigWorkload, MinRunTimeIsOneSecondUnlessSetForTheScheduleOrTheWorkload) {
  const Experiment plain = load_experiment_text(kFile, "sizes.toml", ".");
  EXPECT_EQ(plain.schedule.min_run_time, std::chrono::seconds(1));
  EXPECT_EQ(plain.workloads[0].min_run_time, std::nullopt);
  const Experiment set = load_experiment_text(kFile + "min_run_time = \"0s\"\n[schedule]\nmin_run_time = \"2s\"\n",
                                              "sizes.toml", ".");
  EXPECT_EQ(set.schedule.min_run_time, std::chrono::seconds(2));
  EXPECT_EQ(set.workloads[0].min_run_time, std::chrono::milliseconds(0));
  try {
    load_experiment_text(kFile + "[schedule]\nmin_run_time = \"2h\"\n", "sizes.toml", ".");
    ADD_FAILURE() << "a 2 h minimum run time was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schedule.min_run_time"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace abvm
