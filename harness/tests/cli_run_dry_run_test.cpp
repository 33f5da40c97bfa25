// `abvm run --dry-run` (cli/run.cpp) through the real binary, without guests: what each workload runs,
// with the flags a rule chose and why (issue 20: a read of the scratch disk into /dev/null was shown
// with oflag=direct, which fails in every run, "without a word"), and the loader's refusal of a
// workload that cannot work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/process.hpp"

using namespace abvm;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

class CliRunDryRun : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("abvm-cli-dry-run-" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }

  ProcessResult dry_run(const std::string& workloads) {
    std::ofstream(dir / "read.toml") << "name = \"read\"\n[sides.B]\ndevice.iommu_platform = true\n" << workloads;
    return run_process({ABVM_BINARY, "run", "--dry-run", "--results-dir", (dir / "results").string(),
                        (dir / "read.toml").string()});
  }
};

}  // namespace

TEST_F(CliRunDryRun, EachWorkloadShowsItsCommandAndTheFlagsARuleChoseWithWhy) {
  const auto r = dry_run(
      "[[workload]]\nname = \"dd-read\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/dev/null\"\n"
      "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\n"
      "[[workload]]\nname = \"copy\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/tmp/x\"\noflag = [\"dsync\"]\n"
      "[[workload]]\nname = \"cpu-ref\"\ntype = \"dd\"\nof = \"/dev/null\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("\n== workloads (each boot runs them; @scratch is the scratch disk) ==\n"
                        "dd-read: dd if=@scratch of=/dev/null bs=1M count=64 iflag=direct\n"
                        "  iflag = [\"direct\"]: default for if = \"@scratch\" (the scratch disk: O_DIRECT)\n"
                        "  oflag = []: default for of = \"/dev/null\" (not the scratch disk: no O_DIRECT)\n"
                        "dd-write: dd if=/dev/zero of=@scratch bs=1M count=64 oflag=direct\n"
                        "  iflag = []: default for if = \"/dev/zero\" (not the scratch disk: no O_DIRECT)\n"
                        "  oflag = [\"direct\"]: default for of = \"@scratch\" (the scratch disk: O_DIRECT)\n"
                        "copy: dd if=@scratch of=/tmp/x bs=1M count=64 iflag=direct oflag=dsync\n"
                        "  iflag = [\"direct\"]: default for if = \"@scratch\" (the scratch disk: O_DIRECT)\n"
                        "cpu-ref: dd if=/dev/zero of=/dev/null bs=1M count=64\n"
                        "  iflag = []: default for if = \"/dev/zero\" (not the scratch disk: no O_DIRECT)\n"
                        "  oflag = []: default for of = \"/dev/null\" (not the scratch disk: no O_DIRECT)\n"
                        "  (neither if nor of is @scratch: it measures the guest's CPU and memory, not the disk)\n\n"));
  // The guest job, from the code that boots trials, runs the same arguments.
  EXPECT_THAT(r.out, HasSubstr("workload dd-read\n"));
  EXPECT_THAT(r.out, HasSubstr("arg if=@scratch\narg of=/dev/null\narg bs=1M\narg count=64\narg iflag=direct\nend\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("arg of=/dev/null\narg bs=1M\narg count=64\narg iflag=direct\narg oflag")));
  EXPECT_FALSE(fs::exists(dir / "results")) << "a dry run creates no results directory";
}

TEST_F(CliRunDryRun, AWorkloadThatCannotWorkIsRefusedAtItsLineBeforeAnything) {
  const auto r = dry_run("[[workload]]\nname = \"dd-read\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/dev/null\"\n"
                         "oflag = [\"direct\"]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "abvm: error: " + (dir / "read.toml").string() +
                       ":9: key 'workload[0].oflag' = [\"direct\"] asks for O_DIRECT on of = \"/dev/null\", which "
                       "cannot be opened with O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" "
                       "from it\n");
  EXPECT_TRUE(r.out.empty());
}

// --help says what the code does: the workloads in a dry run, exit 3 for a broken workload.
TEST(CliRunHelp, SaysWhatADryRunShowsAndWhenARunEndsWithExit3) {
  const auto r = run_process({ABVM_BINARY, "run", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("each workload's command"));
  EXPECT_THAT(r.out, HasSubstr("3 infrastructure error"));
  EXPECT_THAT(r.out, HasSubstr("a workload failed in every run of the first block on both sides"));
}

// Issue 26: each workload's run length, its size and the time it will be sized to, or why not.
TEST_F(CliRunDryRun, EachWorkloadShowsItsRunLength) {
  const auto r = dry_run(
      "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nbs = \"8M\"\ncount = 16\n"
      "[[workload]]\nname = \"fio-timed\"\ntype = \"fio\"\nruntime = \"5s\"\n"
      "[[workload]]\nname = \"fio-seq\"\ntype = \"fio\"\nsize = \"128M\"\nmin_run_time = \"2s\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run lengths (after the first block, each workload's runs grow to take at least its "
                               "min_run_time; the first block is set aside when one grew):\n"
                               "  dd-write         bs=8M count=16, at least 1s per run\n"
                               "  fio-timed        bs=1M size=64M runtime=5s, as written: fio's runtime= already sets "
                               "its length\n"
                               "  fio-seq          bs=1M size=128M, at least 2s per run\n"));
}
