// run/sizing: the sizes taken from the first block's journal lines (median over both sides, the
// scratch disk's cap, what is not sized), the sizes a resumed run takes from the journal, and the
// dry run's run lengths.
#include "run/sizing.hpp"

#include <gtest/gtest.h>

#include "config/experiment.hpp"

namespace abvm {
namespace {

Experiment experiment(const std::string& extra = "", const std::string& disk = "1G") {
  return load_experiment_text("name = \"sizing\"\n[disk]\nsize = \"" + disk +
                                  "\"\n[sides.B]\ndevice.iommu_platform = true\n"
                                  "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nbs = \"8M\"\ncount = 16\n"
                                  "[[workload]]\nname = \"fio-seq\"\ntype = \"fio\"\nsize = \"64M\"\n" + extra,
                              "sizing.toml", ".");
}

JournalEntry run(const std::string& workload, Side side, double seconds, int block = 0) {
  JournalEntry e;
  e.workload = workload;
  e.side = side;
  e.block = block;
  e.timing = RunTiming{.start = 100, .end = 100 + seconds, .load_end = 100 + seconds};
  return e;
}

TEST(RunSizing, TheMedianOverBothSidesSizesEachWorkload) {
  // dd: 0.2, 0.3 on A and 0.25, 0.9 on B: median 0.275 -> 1.4 / 0.275 = 5.09 -> x6.
  // fio: 1.1 s everywhere: long enough.
  const std::vector<JournalEntry> journal = {run("dd-write", Side::a, 0.2), run("dd-write", Side::a, 0.3),
                                             run("dd-write", Side::b, 0.25), run("dd-write", Side::b, 0.9),
                                             run("fio-seq", Side::a, 1.1), run("fio-seq", Side::b, 1.1),
                                             run("dd-write", Side::a, 0.01, 1)};  // another block: not counted
  const Sizing s = size_runs(experiment(), journal, 0);
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.workloads[0].runs, 4u);
  EXPECT_NEAR(*s.workloads[0].median_seconds, 0.275, 1e-9);
  EXPECT_EQ(s.workloads[0].scale, 6u);
  EXPECT_EQ(s.workloads[0].after, "bs=8M count=96");
  EXPECT_EQ(s.workloads[1].scale, 1u);
  EXPECT_TRUE(s.resized());
  const auto sized = sized_workloads(experiment().workloads, s);
  EXPECT_EQ(std::get<DdWorkload>(sized[0].spec).count, 96u);
  EXPECT_EQ(std::get<FioWorkload>(sized[1].spec).options.at("size"), "64M");
  EXPECT_EQ(describe_sizing(s)[0],
            "dd-write: 0.275 s per run (median of 4 in the first block) < 1s: bs=8M count=16 -> bs=8M count=96 (x6)");
}

TEST(RunSizing, FailedAndUntimedRunsDoNotCount) {
  JournalEntry failed = run("dd-write", Side::a, 0.01);
  failed.outcome = Outcome::workload_failed;
  JournalEntry untimed = run("dd-write", Side::b, 0.01);
  untimed.timing.reset();
  const Sizing s = size_runs(experiment(), {failed, untimed, run("dd-write", Side::b, 0.7)}, 0);
  EXPECT_EQ(s.workloads[0].runs, 1u);
  EXPECT_EQ(s.workloads[0].scale, 2u);  // 1.4 / 0.7
  EXPECT_EQ(s.workloads[1].scale, 1u);
  EXPECT_EQ(s.workloads[1].why_not, "no ok run with a timing in the first block");
}

TEST(RunSizing, TheScratchDiskCapsTheGrowth) {
  // 128 MiB per run on a 512 MiB disk: at most x4.
  const Sizing s = size_runs(experiment("", "512M"), {run("dd-write", Side::a, 0.1)}, 0);
  EXPECT_EQ(s.workloads[0].scale, 4u);
  EXPECT_TRUE(s.workloads[0].capped);
}

TEST(RunSizing, AZeroMinimumOrAToolThatSetsItsLengthIsNotSized) {
  const Experiment e = experiment("min_run_time = \"0s\"\nruntime = \"5s\"\n");  // both on fio-seq
  const Sizing s = size_runs(e, {run("dd-write", Side::a, 0.1), run("fio-seq", Side::a, 0.1)}, 0);
  EXPECT_EQ(s.workloads[1].scale, 1u);
  EXPECT_EQ(s.workloads[1].why_not, "fio's runtime= already sets its length");
  EXPECT_EQ(not_sized(experiment("[schedule]\nmin_run_time = \"0s\"\n")),
            "no workload has a min_run_time and a size abvm can scale");
  EXPECT_EQ(not_sized(experiment("[schedule]\norder = \"sequential\"\n")),
            "order = \"sequential\": the first block ends only after every boot of A");
  EXPECT_EQ(not_sized(experiment()), std::nullopt);
}

TEST(RunSizing, AResumedRunTakesTheScalesItsLaterBlocksRecorded) {
  // The first block alone would give x10 now; the journal says the later blocks ran x3.
  JournalEntry later = run("dd-write", Side::a, 1.2, 1);
  later.scale = 3;
  JournalEntry sizing = run("dd-write", Side::a, 0.05);
  sizing.sizing_block = true;
  sizing.scale = 1;
  const Sizing s = size_runs(experiment(), {sizing, later}, 0);
  EXPECT_EQ(s.workloads[0].scale, 3u);
  EXPECT_TRUE(s.workloads[0].recorded);
  EXPECT_EQ(s.workloads[0].after, "bs=8M count=48");
}

TEST(RunSizing, TheDryRunShowsEachRunLength) {
  EXPECT_EQ(describe_run_lengths(experiment("min_run_time = \"3s\"\n")),
            "run lengths (after the first block, each workload's runs grow to take at least its min_run_time; the "
            "first block is set aside when one grew):\n"
            "  dd-write         bs=8M count=16, at least 1s per run\n"
            "  fio-seq          bs=1M size=64M, at least 3s per run\n");
  EXPECT_EQ(describe_run_lengths(experiment("[schedule]\nmin_run_time = \"0s\"\n")),
            "run lengths (not sized: no workload has a min_run_time and a size abvm can scale):\n"
            "  dd-write         bs=8M count=16, as written\n"
            "  fio-seq          bs=1M size=64M, as written\n");
}

}  // namespace
}  // namespace abvm
