// nightly/settings: the [nightly] table of an experiment file, the experiment without it, and the
// errors of bad input at their line.
#include "nightly/settings.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const std::string kExperiment =
    "name = \"night\"\n"
    "[nightly]\n"
    "tree = \"linux\"\n"
    "branch = \"master\"\n"
    "base = \"v6.1\"\n"
    "url = \"https://git.example.org/linux.git\"\n"
    "recipe = \"recipe.toml\"\n"
    "drift_every = 3\n"
    "[nightly.bisect]\n"
    "max_boots = 40\n"
    "max_wall_time = \"2h\"\n"
    "[[workload]]\n"
    "name = \"dd-write\"\n"
    "type = \"dd\"\n"
    "[schedule]\n"
    "design = \"co-scheduled\"\n"
    "[schedule.sequential]\n"
    "enabled = true\n";

class NightlySettingsTest : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / fmt::format("abvm-nightly-settings-{}-{}", ::getpid(),
                                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override {
    fs::create_directories(dir);
    write_file_atomic(dir / "frag.config", "CONFIG_VIRTIO=y\n");
    write_file_atomic(dir / "recipe.toml", "source = \"linux-source\"\npackage = \"linux-source-6.1\"\n"
                                           "fragments = [\"frag.config\"]\nmake_args = [\"KCFLAGS=-O2\"]\n");
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string error_of(const std::string& text) {
    write_file_atomic(dir / "n.toml", text);
    try {
      load_nightly_experiment(dir / "n.toml");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(NightlySettingsTest, TheNightlyTableAndTheExperimentAreRead) {
  write_file_atomic(dir / "n.toml", kExperiment);
  const NightlyExperiment x = load_nightly_experiment(dir / "n.toml");
  EXPECT_EQ(x.nightly.tree, dir / "linux");
  EXPECT_EQ(x.nightly.branch, "master");
  EXPECT_EQ(x.nightly.base, "v6.1");
  EXPECT_EQ(x.nightly.drift_every, 3);
  EXPECT_EQ(x.nightly.bisect_max_boots, 40);
  EXPECT_EQ(x.nightly.bisect_max_wall, std::chrono::hours(2));
  EXPECT_EQ(x.nightly.bisect_max_steps, std::nullopt);
  EXPECT_EQ(x.experiment.name, "night");
  EXPECT_EQ(x.experiment.workloads.size(), 1u);
  EXPECT_EQ(x.build.source, KernelSource::git);
  EXPECT_EQ(x.build.path, dir / "linux");
  EXPECT_EQ(x.build.make_args, std::vector<std::string>{"KCFLAGS=-O2"});
  EXPECT_EQ(x.build.fragments.size(), 1u);
  EXPECT_EQ(x.sha256.size(), 64u);
}

TEST_F(NightlySettingsTest, TheNightlyTablesAreBlankedKeepingLineNumbers) {
  const std::string out = without_nightly_tables(kExperiment);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(kExperiment.begin(), kExperiment.end(), '\n'));
  EXPECT_EQ(out.find("tree"), std::string::npos);
  EXPECT_EQ(out.find("max_boots"), std::string::npos);
  EXPECT_NE(out.find("[[workload]]\nname = \"dd-write\""), std::string::npos);
}

TEST_F(NightlySettingsTest, BadInputIsAnErrorAtItsLine) {
  const std::string file = (dir / "n.toml").string();
  std::string t = kExperiment;
  EXPECT_EQ(error_of(std::string(t).replace(t.find("drift_every"), 11, "drift_evry")),
            file + ":8: unknown key 'drift_evry' in [nightly] (known: base, bisect, branch, drift_every, recipe, tree, url)");
  EXPECT_EQ(error_of(std::string(t).replace(t.find("https://"), 8, "git://")),
            file + ":6: nightly.url 'git://git.example.org/linux.git' must be the tree's public https:// URL (the "
                   "history, reports and KCIDB name the tree by it; the local tree is nightly.tree)");
  EXPECT_EQ(error_of(std::string(t).replace(t.find("max_wall_time = \"2h\""), 20, "max_wall_time = 2")),
            file + ":11: nightly.bisect.max_wall_time must be a duration such as \"2h\" or \"90m\"");
  EXPECT_NE(error_of("name = \"x\"\n").find("needs a [nightly] table"), std::string::npos);
  EXPECT_EQ(error_of(t + "[sides.A]\nkernel = \"linux-6.1-virtio\"\n"),
            file + ":19: sides is set, but abvm nightly sets both sides: each side's kernel is one of the night's "
                   "commits of nightly.tree built with nightly.recipe, and the sides differ in nothing else (put shared "
                   "settings in [guest], [device] ...): remove it");
  EXPECT_NE(error_of(std::string(t).replace(t.find("recipe.toml"), 11, "nothere.toml")).find("(nightly.recipe)"),
            std::string::npos);
}

// Issue 28: a night is co-scheduled with sequential stopping; a file that says otherwise, or says
// nothing, is told so at the key's line.
TEST_F(NightlySettingsTest, ANightIsCoScheduledWithSequentialStopping) {
  const std::string file = (dir / "n.toml").string();
  const std::string t = kExperiment;
  const std::string why = "abvm nightly runs both commits co-scheduled with sequential stopping, like configs/demo.toml";
  EXPECT_EQ(error_of(std::string(t).replace(t.find("co-scheduled"), 12, "lockstep")),
            file + ":16: schedule.design is \"lockstep\", but " + why + ": set it to \"co-scheduled\"");
  EXPECT_EQ(error_of(std::string(t).replace(t.find("enabled = true"), 14, "enabled = false")),
            file + ":18: schedule.sequential.enabled is false, but " + why + ": set it to true");
  EXPECT_EQ(error_of(t.substr(0, t.find("[schedule]"))),
            file + ": schedule.design is not set, but " + why + ": add design = \"co-scheduled\" to [schedule]");
  EXPECT_EQ(error_of(t.substr(0, t.find("[schedule.sequential]"))),
            file + ": schedule.sequential.enabled is not set, but " + why +
                ": add [schedule.sequential] with enabled = true");
  EXPECT_EQ(error_of(t), "");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

TEST(NightlySettings, TheShippedNightlyExperimentLoads) {
  const std::filesystem::path file = std::filesystem::path(ABVM_SOURCE_DIR) / "configs" / "nightly.toml";
  const NightlyExperiment x = load_nightly_experiment(file);
  EXPECT_EQ(x.nightly.tree, std::filesystem::path(ABVM_SOURCE_DIR) / "linux");
  EXPECT_EQ(x.nightly.branch, "linux-6.1.y");
  EXPECT_EQ(x.build.base_config, "tinyconfig");
  EXPECT_EQ(x.experiment.schedule.design, Design::co_scheduled);
  EXPECT_TRUE(x.experiment.schedule.sequential.enabled);
}

}  // namespace
}  // namespace abvm
