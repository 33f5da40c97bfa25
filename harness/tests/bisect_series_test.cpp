// The series of a bisect experiment and the kernels of its steps (bisect/series.hpp), and each
// step's experiment (bisect/step_experiment.hpp): B's patches after A's, every way an experiment can
// fail to be a series (with the message that says where and what to do), the kernel recipes of
// every step (they load, hold the right patches, and are the same cache entries as the original
// recipes with those patches), a git range of a local tree made a series whose last kernel is
// the tip's tree, and a step's experiment file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "environment_skip.hpp"
#include "bisect/directory.hpp"
#include "bisect/series.hpp"
#include "bisect/step_experiment.hpp"
#include "bisect/strategy.hpp"
#include "config/experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "kernels/kernel.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

class BisectSeriesTest : public ::testing::Test {
 protected:
  fs::path root;

  void SetUp() override {
    root = fs::temp_directory_path() /
           ("abvm-bisect-series-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root);
    fs::create_directories(root / "kernels" / "patches" / "s");
    fs::create_directories(root / "kernels" / "fragments");
    write_file_atomic(root / "kernels" / "fragments" / "guest.config", "CONFIG_VIRTIO=y\n");
    write_file_atomic(root / "kernels" / "fragments" / "other.config", "CONFIG_VIRTIO=y\nCONFIG_SMP=y\n");
    for (int i = 1; i <= 4; ++i) {
      write_file_atomic(root / "kernels" / "patches" / "s" / patch(i), "patch " + std::to_string(i) + "\n");
    }
    recipe("base", {1});
    recipe("tip", {1, 2, 3, 4});
  }
  void TearDown() override { fs::remove_all(root); }

  static std::string patch(int i) { return "000" + std::to_string(i) + "-change-" + std::to_string(i) + ".patch"; }

  void recipe(const std::string& name, const std::vector<int>& patches, const std::string& extra = "",
              const std::string& fragment = "guest.config") {
    std::string series;
    for (int i : patches) series += patch(i) + "\n";
    write_file_atomic(root / "kernels" / "patches" / "s" / (name + ".series"), series);
    write_file_atomic(root / "kernels" / (name + ".toml"),
                      "source = \"linux-source\"\npackage = \"linux-source-6.1\"\nconfig = \"tinyconfig\"\n"
                      "fragments = [\"fragments/" + fragment + "\"]\n" +
                          (patches.empty() ? "" : "series = \"patches/s/" + name + ".series\"\n") + extra);
  }

  Experiment experiment(const std::string& a = "base", const std::string& b = "tip", const std::string& sides = "") {
    const std::string text = "name = \"bis\"\n[guest]\naccelerator = \"tcg\"\n[sides.A]\nlabel = \"base\"\nkernel = \"" +
                             (root / "kernels" / (a + ".toml")).string() + "\"\n[sides.B]\nkernel = \"" +
                             (root / "kernels" / (b + ".toml")).string() + "\"\n" + sides +
                             "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\n[schedule]\nboots_per_side = 6\n"
                             "[schedule.sequential]\nenabled = true\nmax_boots_per_side = 30\n"
                             "[analysis]\nmetrics = [{ name = \"dd-write.bandwidth\", better = \"higher\" }]\n";
    write_file_atomic(root / "bis.toml", text);
    return load_experiment(root / "bis.toml");
  }

  std::string error_of(const Experiment& e) {
    try {
      load_bisect_series(e);
    } catch (const Error& ex) {
      return ex.what();
    }
    return "";
  }
};

TEST_F(BisectSeriesTest, TheSeriesIsSideBsPatchesAfterSideAs) {
  const BisectSeries s = load_bisect_series(experiment());
  ASSERT_EQ(s.base_patches.size(), 1u);
  EXPECT_EQ(s.base_patches[0].text, "patch 1\n");
  ASSERT_EQ(s.patches.size(), 3u);
  EXPECT_EQ(s.patches[0].name, patch(2));
  EXPECT_EQ(s.patches[0].text, "patch 2\n");
  EXPECT_EQ(s.patches[2].name, patch(4));
  EXPECT_EQ(s.patches[2].commit, "");
  EXPECT_EQ(s.build.name, "tip");
  EXPECT_FALSE(s.git_range);
}

TEST_F(BisectSeriesTest, WhatIsNotASeriesIsRefusedSayingWhereAndWhatToDo) {
  const std::string file = (root / "bis.toml").string();
  recipe("same", {1});
  EXPECT_EQ(error_of(experiment("base", "same")),
            file + ":8 (sides.B.kernel): kernel '" + (root / "kernels/same.toml").string() +
                "' has no patches beyond side A's '" + (root / "kernels/base.toml").string() +
                "': there is nothing to bisect (side B needs a recipe with a patch series, or a later commit, side A "
                "its base)");
  recipe("other", {2, 3});
  EXPECT_EQ(error_of(experiment("base", "other")),
            file + ":8 (sides.B.kernel): the patches of side A's kernel '" + (root / "kernels/base.toml").string() +
                "' are not the first patches of side B's '" + (root / "kernels/other.toml").string() + "' (patch 1 " +
                patch(1) + " differs): abvm bisect needs A's series to be the start of B's");
  recipe("refragmented", {1, 2}, "", "other.config");
  EXPECT_EQ(error_of(experiment("base", "refragmented")),
            file + ":8 (sides.B.kernel): kernel '" + (root / "kernels/refragmented.toml").string() +
                "' is not side A's kernel '" + (root / "kernels/base.toml").string() +
                "' plus patches: its config fragments differ from the base's; abvm bisect needs B's recipe to be A's "
                "with a longer patch series (or a later commit of the same git tree)");
  EXPECT_EQ(error_of(experiment("base", "tip", "cmdline_append = \"swiotlb=force\"\n")),
            file + " (sides.B.cmdline: side B inherits guest.cmdline (default) + sides.B.cmdline_append (" + file +
                ":9)): side B's cmdline = \"swiotlb=force\" differs from side A's \"\": abvm bisect compares kernels only, so the sides must "
                "differ in their kernel and nothing else (set it in the shared table instead)");
  write_file_atomic(root / "kernels" / "packaged.toml", "source = \"debian-package\"\npackage = \"linux-image-cloud-amd64\"\n");
  EXPECT_EQ(error_of(experiment("packaged", "tip")),
            file + ":6 (sides.A.kernel): kernel '" + (root / "kernels/packaged.toml").string() +
                "' is a packaged Debian kernel, which has no patch series: abvm bisect needs kernels built from source "
                "(kernels/*.toml with source = \"linux-source\", \"tarball\" or \"git\")");
  EXPECT_EQ(error_of(experiment("base", "tip", "[hosts]\nuris = [\"qemu+ssh://root@lab3/system\"]\n")),
            file + ":10 (hosts.uris): abvm bisect runs its steps on one libvirt connection, not a pool: remove [hosts] "
                   "and name the host with abvm bisect --connect URI");
  EXPECT_EQ(error_of(experiment("missing", "tip")),
            file + ":6 (sides.A.kernel): kernel recipe " + (root / "kernels/missing.toml").string() + " does not exist");
}

TEST_F(BisectSeriesTest, EveryStepsKernelIsARecipeWithTheBasesPatchesAndThePrefixOfTheSeries) {
  const BisectSeries s = load_bisect_series(experiment());
  const auto recipes = write_kernel_recipes(s, root / "bisect" / "kernels");
  ASSERT_EQ(recipes.size(), 4u);
  for (int k = 0; k <= 3; ++k) {
    const KernelRecipe r = load_kernel_recipe(recipes[static_cast<std::size_t>(k)].string());
    EXPECT_EQ(r.name, "kernel-" + std::to_string(k));
    ASSERT_EQ(r.patches.size(), static_cast<std::size_t>(1 + k));
    for (int i = 0; i <= k; ++i) {
      EXPECT_EQ(r.patches[static_cast<std::size_t>(i)].name, patch(i + 1)) << "the series' own names are kept";
      EXPECT_EQ(read_file(r.patches[static_cast<std::size_t>(i)].path), "patch " + std::to_string(i + 1) + "\n");
    }
    EXPECT_EQ(r.package, "linux-source-6.1");
    EXPECT_EQ(r.base_config, "tinyconfig");
    ASSERT_EQ(r.fragments.size(), 1u);
    EXPECT_EQ(read_file(r.fragments[0]), "CONFIG_VIRTIO=y\n");
  }
  // Content-addressed: kernel 0 is side A's own cache entry and kernel 3 side B's.
  if (run_process({"dpkg-query", "-W", "linux-source-6.1"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed: the cache keys cannot be computed (harness/setup.sh installs it)");
  }
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe(recipes[0].string())),
            kernel_cache_key(load_kernel_recipe((root / "kernels" / "base.toml").string())));
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe(recipes[3].string())),
            kernel_cache_key(load_kernel_recipe((root / "kernels" / "tip.toml").string())));
  EXPECT_NE(kernel_cache_key(load_kernel_recipe(recipes[1].string())),
            kernel_cache_key(load_kernel_recipe(recipes[2].string())));
}

// A range of commits of one git tree: A's commit plus the commits up to B's as `git format-patch`
// makes them; the last kernel's build tree is B's tree, every kernel shares A's commit (one kept
// build tree), and a range that is not linear or runs backwards is refused.
TEST_F(BisectSeriesTest, AGitRangeIsTheSeriesOfItsCommitsOnTheBaseCommit) {
  const fs::path tree = root / "linux";
  run_checked({"cp", "-a", (fs::path(ABVM_TEST_DATA) / "kernels" / "fake-linux").string(), tree.string()});
  const auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", tree.string(), "-c", "user.name=t", "-c", "user.email=t@t"});
    return run_checked(args);
  };
  const auto commit = [&](const std::string& subject) {
    git({"add", "-A"});
    git({"commit", "-qm", subject});
    return git({"rev-parse", "HEAD"}).substr(0, 40);
  };
  git({"init", "-q", "-b", "main"});
  const std::string c0 = commit("base");
  write_file_atomic(tree / "drivers/virtio/virtio_ring.c", read_file(tree / "drivers/virtio/virtio_ring.c") + "/* one */\n");
  const std::string c1 = commit("virtio_ring: first change");
  write_file_atomic(tree / "drivers/virtio/abvm_new.c", "int abvm_new;\n");
  const std::string c2 = commit("virtio: add a file");
  write_file_atomic(tree / "Kconfig", read_file(tree / "Kconfig") + "# three\n");
  const std::string c3 = commit("kconfig: third change");
  const auto git_recipe = [&](const std::string& name, const std::string& at) {
    write_file_atomic(root / "kernels" / (name + ".toml"),
                      "source = \"git\"\npath = \"../linux\"\nfragments = [\"fragments/guest.config\"]\n" +
                          (at.empty() ? "" : "commit = \"" + at + "\"\n"));
  };
  git_recipe("g-base", c0);
  git_recipe("g-tip", "");
  const BisectSeries s = load_bisect_series(experiment("g-base", "g-tip"));
  EXPECT_TRUE(s.git_range);
  EXPECT_EQ(s.build.commit, c0);
  ASSERT_EQ(s.patches.size(), 3u);
  EXPECT_EQ(s.patches[0].name, "0001-virtio_ring-first-change.patch");
  EXPECT_EQ(s.patches[1].name, "0002-virtio-add-a-file.patch");
  EXPECT_EQ(s.patches[0].commit, c1);
  EXPECT_EQ(s.patches[2].commit, c3);
  EXPECT_NE(s.patches[1].text.find("+int abvm_new;"), std::string::npos);

  const auto recipes = write_kernel_recipes(s, root / "bisect" / "kernels");
  ASSERT_EQ(recipes.size(), 4u);
  const KernelRecipe k0 = load_kernel_recipe(recipes[0].string());
  EXPECT_EQ(k0.commit, c0);
  EXPECT_TRUE(k0.patches.empty());
  EXPECT_EQ(load_kernel_recipe(recipes[3].string()).patches.size(), 3u);
  EXPECT_EQ(kernel_cache_key(k0), kernel_cache_key(load_kernel_recipe((root / "kernels" / "g-base.toml").string())));
  // The fake tree's make fails, after the series is applied: the build tree is then the tip's.
  const KernelBuildOptions options{.cache_dir = root / "cache", .progress = [](std::string_view) {}};
  EXPECT_THROW(build_kernel(load_kernel_recipe(recipes[3].string()), options), Error);
  const fs::path built = fs::directory_iterator(root / "cache" / "trees")->path() / "linux";
  for (const char* f : {"drivers/virtio/virtio_ring.c", "drivers/virtio/abvm_new.c", "Kconfig", "Makefile"}) {
    EXPECT_EQ(read_file(built / f), git({"show", c3 + ":" + f})) << f;
  }

  const std::string file = (root / "bis.toml").string();
  try {
    load_bisect_series(experiment("g-tip", "g-base"));
    FAIL() << "a backwards range is taken";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              file + ":8 (sides.B.kernel): kernels '" + (root / "kernels/g-tip.toml").string() + "' and '" +
                  (root / "kernels/g-base.toml").string() + "' are two commits of " + tree.string() + ", but side A's " +
                  c3.substr(0, 12) + " is not an ancestor of side B's " + c0.substr(0, 12) + ": give A the older commit");
  }
  git({"checkout", "-q", "-b", "side", c1});
  write_file_atomic(tree / "side.txt", "side\n");
  commit("side");
  git({"checkout", "-q", "main"});
  git({"merge", "-q", "--no-edit", "side"});
  git_recipe("g-merged", git({"rev-parse", "HEAD"}).substr(0, 40));
  try {
    load_bisect_series(experiment("g-base", "g-merged"));
    FAIL() << "a range with a merge is taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("there are merges between them"), std::string::npos) << e.what();
  }
}

TEST_F(BisectSeriesTest, AStepsExperimentIsTheBisectExperimentWithItsKernelsLabelsSeedLevelAndBudget) {
  const Experiment e = experiment();
  const BisectDir dir(root / "bisect");
  write_kernel_recipes(load_bisect_series(e), dir.kernels());
  const BisectPlan plan{.config_dir = root, .base_label = "base", .patches = {{1, "a", ""}, {2, "b", ""}, {3, "c", ""}},
                        .max_steps = 7, .confidence = 0.95, .step_confidence = step_confidence(0.95, 7), .margin = 0.05};
  const Experiment s = step_experiment(e, dir, plan,
                                       {.step = 4, .question = {.kernel = 3, .reference = 1}, .seed = 99,
                                        .max_boots_per_side = 12});
  EXPECT_EQ(s.name, "bis-step4");
  EXPECT_EQ(s.a.kernel, dir.kernel_recipe(1).string());
  EXPECT_EQ(s.b.kernel, dir.kernel_recipe(3).string());
  EXPECT_EQ(s.a.label, "base+1");
  EXPECT_EQ(s.b.label, "base+3");
  EXPECT_EQ(s.schedule.seed, 99u);
  EXPECT_DOUBLE_EQ(s.analysis.confidence, 1 - 0.05 / 7);
  EXPECT_EQ(s.schedule.sequential.max_boots_per_side, 12);
  EXPECT_EQ(s.schedule.boots_per_side, 6);
  ASSERT_EQ(s.analysis.metrics.size(), 1u);
  EXPECT_EQ(s.analysis.metrics[0].name, "dd-write.bandwidth");
  ASSERT_EQ(s.workloads.size(), 1u);
  EXPECT_EQ(s.workloads[0].name, "dd-write");
  EXPECT_EQ(s.schedule.sequential.enabled, true);
  // No budget: the experiment's own; a budget below boots_per_side is never asked for.
  EXPECT_EQ(step_experiment(e, dir, plan, {.step = 1, .question = {3, 0}, .seed = 5}).schedule.sequential.max_boots_per_side, 30);
  EXPECT_NE(step_seed(7, 1), step_seed(7, 2));
  EXPECT_LT(step_seed(~0ULL, 3), 1ULL << 63);
}

}  // namespace
}  // namespace abvm
