// `abvm config show|keys` and `abvm kernel list` through the real binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/process.hpp"

using namespace abvm;
using ::testing::HasSubstr;

namespace {

ProcessResult abvm_run(std::vector<std::string> args) {
  args.insert(args.begin(), ABVM_BINARY);
  return run_process(args, {.cwd = std::filesystem::path(ABVM_SOURCE_DIR)});
}

}  // namespace

TEST(CliTools, ConfigShowPrintsEveryValueWithItsOrigin) {
  auto r = abvm_run({"config", "show", "configs/demo.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("configs/demo.toml:"));
  EXPECT_THAT(r.out, HasSubstr("default"));
  EXPECT_THAT(r.out, HasSubstr("sides.B.device.iommu_platform"));
  EXPECT_THAT(r.out, HasSubstr("side A inherits"));
}

TEST(CliTools, ConfigShowRejectsAnUnknownKeyWithFileAndLine) {
  auto path = std::filesystem::temp_directory_path() / ("abvm-cli-tools-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << "name = \"x\"\nfrobnicate = 1\n";
  auto r = abvm_run({"config", "show", path.string()});
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path.string() + ":2:"));
  EXPECT_THAT(r.err, HasSubstr("frobnicate"));
}

TEST(CliTools, ConfigShowRejectsAnUnknownKernelRecipe) {
  auto path = std::filesystem::temp_directory_path() / ("abvm-cli-tools-k-" + std::to_string(::getpid()) + ".toml");
  std::ifstream demo(std::filesystem::path(ABVM_SOURCE_DIR) / "configs/demo.toml");
  std::string text((std::istreambuf_iterator<char>(demo)), std::istreambuf_iterator<char>());
  auto at = text.find("\"debian-cloud\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"no-such-kernel\"");
  std::ofstream(path) << text;
  auto r = abvm_run({"config", "show", path.string()});
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no-such-kernel"));
}

TEST(CliTools, ConfigKeysListsTheKeyTable) {
  auto r = abvm_run({"config", "keys"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("schedule.boots_per_side"));
  EXPECT_THAT(r.out, HasSubstr("analysis.margin"));
}

TEST(CliTools, KernelListShowsTheShippedRecipes) {
  auto r = abvm_run({"kernel", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("debian-cloud"));
  EXPECT_THAT(r.out, HasSubstr("linux-6.1-virtio "));
  EXPECT_THAT(r.out, HasSubstr("linux-6.1-virtio-dma-api"));
}

// issue 29 item 7: a mistyped subcommand is a usage error that names the word, with or without
// --help (CLI11 alone printed the top-level help and exited 0 for `abvm nightly2 --help`).
TEST(CliTools, UnknownSubcommandIsAUsageErrorNamingTheWord) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frob"},
                                               std::vector<std::string>{"nightly2", "--help"},
                                               std::vector<std::string>{"--help", "nightly2"}}) {
    auto r = abvm_run(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_THAT(r.err, HasSubstr("'" + std::string(args[0] == "--help" ? args[1] : args[0]) +
                                 "' is not a subcommand of abvm"));
    EXPECT_EQ(r.out, "");
  }
  auto nested = abvm_run({"config", "shw"});
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_THAT(nested.err, HasSubstr("'shw' is not a subcommand of abvm config"));
}

TEST(CliTools, KnownSubcommandsStillParse) {
  EXPECT_EQ(abvm_run({"nightly", "--help"}).exit_code, 0);
  EXPECT_EQ(abvm_run({"--help"}).exit_code, 0);
  EXPECT_EQ(abvm_run({"--version"}).exit_code, 0);
  auto r = abvm_run({"config", "keys"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}
