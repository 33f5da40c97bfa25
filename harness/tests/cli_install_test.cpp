// abvm outside its source tree: `cmake --install` into a temporary prefix, then the installed
// binary, run from another working directory without ABVM_DATA_DIR, finds its data under
// <prefix>/share/abvm (core/resources.hpp). To prove that the data comes from the prefix and not
// from the source tree the binary was built from, each test marks or removes an installed file and
// looks for the effect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/files.hpp"
#include "core/process.hpp"

using namespace abvm;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

const std::string kSeed = std::string(ABVM_TEST_DATA) + "/seed/";
// The build directory whose install rules are tested: where ABVM_BINARY was built.
const fs::path kBuildDir = fs::path(ABVM_BINARY).parent_path();

class CliInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    // The locator's override would hide what is tested; the children inherit this environment.
    ::unsetenv("ABVM_DATA_DIR");
    root_ = fs::temp_directory_path() / ("abvm-cli-install-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    prefix_ = root_ / "prefix";
    work_ = root_ / "work";
    fs::create_directories(work_);
    const ProcessResult r = run_process({"cmake", "--install", kBuildDir.string(), "--prefix", prefix_.string()},
                                        {.timeout = std::chrono::minutes(2)});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    data_ = prefix_ / "share" / "abvm";
  }
  void TearDown() override { fs::remove_all(root_); }

  // The installed abvm, run in work_ (not the source tree, not the build tree).
  ProcessResult abvm(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), (prefix_ / "bin" / "abvm").string());
    return run_process(args, {.cwd = work_, .timeout = std::chrono::minutes(2), .extra_env = std::move(env)});
  }

  // A kernel recipe that exists only in the installed data.
  void add_installed_only_kernel() {
    fs::copy_file(data_ / "kernels" / "debian-cloud.toml", data_ / "kernels" / "installed-only.toml");
  }

  fs::path root_, prefix_, work_, data_;
};

}  // namespace

TEST_F(CliInstall, InstallsTheBinaryAndItsDataUnderThePrefix) {
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "bin/abvm"));
  for (const char* f : {"report/template.html", "report/plot.py", "report/schema.json", "guests/base.toml",
                        "guests/agent/init.sh", "guests/enable-deb-src.sh", "kernels/debian-cloud.toml",
                        "kernels/linux-6.1-virtio-dma-api.toml", "kernels/fragments/virtio-guest.config",
                        "kernels/patches/virtio-dma-api/series", "configs/demo.toml", "configs/aa-control.toml"}) {
    EXPECT_TRUE(fs::is_regular_file(data_ / f)) << f;
  }
  EXPECT_EQ(fs::status(data_ / "guests/agent/init.sh").permissions() & fs::perms::owner_exec, fs::perms::owner_exec);
  EXPECT_FALSE(fs::exists(data_ / "results"));
}

TEST_F(CliInstall, ConfigKeysAndKernelListReadTheInstalledData) {
  add_installed_only_kernel();
  auto r = abvm({"config", "keys"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("schedule.boots_per_side"));
  r = abvm({"kernel", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("installed-only"));
  EXPECT_THAT(r.out, HasSubstr("linux-6.1-virtio-dma-api"));
}

TEST_F(CliInstall, AnalyzeOnTheSeedUsesTheInstalledTemplateAndPlotScript) {
  // Marked copies: the report shows that these, not the source tree's, were used.
  std::string tmpl = read_file(data_ / "report/template.html");
  std::ofstream(data_ / "report/template.html", std::ios::trunc) << tmpl << "<!-- the installed template -->\n";
  std::ofstream(data_ / "report/plot.py", std::ios::trunc)
      << "print('{\"missing\": [{\"reason\": \"the installed plot.py ran\"}]}')\n";
  const auto r = abvm({"analyze", "--a", kSeed + "dd-without-patches.txt", "--b", kSeed + "dd-with-patches.txt",
                       "--html", "seed.html"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;  // inconclusive, as from the source tree
  EXPECT_THAT(r.out, HasSubstr("verdict: inconclusive"));
  const std::string html = read_file(work_ / "seed.html");
  EXPECT_THAT(html, HasSubstr("<!-- the installed template -->"));
  EXPECT_THAT(html, HasSubstr("the installed plot.py ran"));
}

TEST_F(CliInstall, DryRunOfAnInstalledConfigFindsInstalledKernelRecipes) {
  auto r = abvm({"run", "--dry-run", (data_ / "configs/demo.toml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kernel recipe 'debian-cloud'"));
  EXPECT_THAT(r.out, HasSubstr("<domain"));
  EXPECT_THAT(r.out, Not(HasSubstr(ABVM_SOURCE_DIR)));
  // Results land in results/ under the working directory (shown as placeholders: nothing is made).
  EXPECT_THAT(r.out, HasSubstr((work_ / "results" / "demo-&lt;timestamp").string()));
  EXPECT_FALSE(fs::exists(work_ / "results")) << "a dry run creates nothing";

  // A config naming a recipe that only the installation has.
  add_installed_only_kernel();
  std::string demo = read_file(data_ / "configs/demo.toml");
  const auto at = demo.find("\"debian-cloud\"");
  ASSERT_NE(at, std::string::npos);
  demo.replace(at, 14, "\"installed-only\"");
  std::ofstream(work_ / "mine.toml") << demo;
  r = abvm({"run", "--dry-run", "mine.toml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kernel recipe 'installed-only'"));
}

TEST_F(CliInstall, ADataDirVariableWithoutTheDataIsAnErrorNamingIt) {
  const fs::path bogus = work_ / "not-abvm-data";
  fs::create_directories(bogus);
  const auto r = abvm({"kernel", "list"}, {"ABVM_DATA_DIR=" + bogus.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("ABVM_DATA_DIR=" + bogus.string() + " does not hold abvm's data"));
}

TEST_F(CliInstall, ABrokenInstallationSaysWhereItLookedAndNeverFallsBackToTheSourceTree) {
  fs::remove(data_ / "report/template.html");
  const auto r = abvm({"kernel", "list"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("cannot find abvm's data: " + data_.string() + " has no report/template.html"));
  EXPECT_THAT(r.err, HasSubstr("ABVM_DATA_DIR"));
}

TEST_F(CliInstall, TheVariableCanPointTheInstalledBinaryElsewhere) {
  fs::remove_all(data_);
  const auto r = abvm({"kernel", "list"}, {std::string("ABVM_DATA_DIR=") + ABVM_SOURCE_DIR});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("debian-cloud"));
}
