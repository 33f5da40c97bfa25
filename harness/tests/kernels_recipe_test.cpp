// Kernel recipes (strict parsing, exact messages), the cache key, the .config check and the
// patch step, on small files and a fake kernel tree (tests/data/kernels/fake-linux).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

const fs::path kData = fs::path(ABVM_TEST_DATA) / "kernels";
const fs::path kRepoKernels = fs::path(ABVM_SOURCE_DIR) / "kernels";

class KernelRecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("abvm-kernel-recipe-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }

  // The message of the Error that loading `text` as <dir>/r.toml throws.
  std::string load_error(const std::string& text) {
    fs::path file = write("r.toml", text);
    try {
      load_kernel_recipe(file.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }

  // A tarball of the fake tree: a tarball source identified by content, unpacked by abvm.
  fs::path fake_tarball() {
    fs::path tar = dir_ / "fake-linux.tar.gz";
    run_checked({"tar", "-czf", tar.string(), "-C", kData.string(), "fake-linux"});
    return tar;
  }

  fs::path dir_;
};

TEST_F(KernelRecipeTest, RepositoryRecipesLoadByName) {
  KernelRecipe a = load_kernel_recipe("linux-6.1-virtio");
  EXPECT_EQ(a.name, "linux-6.1-virtio");
  EXPECT_EQ(a.file, kRepoKernels / "linux-6.1-virtio.toml");
  EXPECT_EQ(a.source, KernelSource::linux_source);
  EXPECT_EQ(a.package, "linux-source-6.1");
  EXPECT_EQ(a.base_config, "tinyconfig");
  ASSERT_EQ(a.fragments.size(), 1u);
  EXPECT_EQ(a.fragments[0], kRepoKernels / "fragments" / "virtio-guest.config");
  EXPECT_FALSE(a.series.has_value());
  EXPECT_TRUE(a.patches.empty());

  KernelRecipe b = load_kernel_recipe("linux-6.1-virtio-dma-api");
  EXPECT_EQ(b.fragments, a.fragments);  // same config on both sides of the experiment
  ASSERT_EQ(b.patches.size(), 2u);
  EXPECT_EQ(b.patches[0].name, "0001-virtio_ring-use-the-DMA-API-for-all-devices.patch");
  EXPECT_EQ(b.patches[1].name, "0002-virtio_ring-abvm-report-once-per-device-when-the-DMA.patch");
  EXPECT_EQ(b.patches[0].path, kRepoKernels / "patches" / "virtio-dma-api" / b.patches[0].name);

  KernelRecipe d = load_kernel_recipe("debian-cloud");
  EXPECT_EQ(d.source, KernelSource::debian_package);
  EXPECT_EQ(d.package, "linux-image-cloud-amd64");
}

TEST_F(KernelRecipeTest, UnknownNameListsTheAvailableRecipes) {
  write("k/one.toml", "source = \"git\"\n");
  write("k/two.toml", "source = \"git\"\n");
  try {
    load_kernel_recipe("three", dir_ / "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "kernel recipe 'three' not found: no three.toml in " + (dir_ / "k").string() +
                                         " (available: one, two)");
  }
}

TEST_F(KernelRecipeTest, StrictErrorsNameFileLineAndKey) {
  std::string f = (dir_ / "r.toml").string();
  write("frag.config", "CONFIG_VIRTIO_BLK=y\n");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"linux-source-6.1\"\nfragment = \"frag.config\"\n"),
            f + ":3: unknown key 'fragment' in kernel recipe (known keys: description, source, package, path, "
                "commit, config, fragments, series, make_args)");
  EXPECT_EQ(load_error("package = \"linux-source-6.1\"\n"),
            f + ": missing key 'source' (one of: debian-package, linux-source, tarball, git)");
  EXPECT_EQ(load_error("source = 6\n"), f + ":1: 'source' must be a string");
  EXPECT_EQ(load_error("\nsource = \"kernel.org\"\n"),
            f + ":2: source = \"kernel.org\" is not one of: debian-package, linux-source, tarball, git");
  EXPECT_EQ(load_error("source = \"linux-source\"\n"), f + ": missing key 'package' (required for source = \"linux-source\")");
  EXPECT_EQ(load_error("source = \"tarball\"\npath = \"nowhere.tar.xz\"\n"),
            f + ":2: tarball " + (dir_ / "nowhere.tar.xz").string() + " does not exist");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nconfig = \"allyesconfig\"\n"),
            f + ":3: config = \"allyesconfig\" is not one of: tinyconfig, allnoconfig, defconfig");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nfragments = [\"frag.config\", \"gone.config\"]\n"),
            f + ":3: config fragment " + (dir_ / "gone.config").string() + " does not exist");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nfragments = \"frag.config\"\n"),
            f + ":3: 'fragments' must be an array of strings");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nmake_args = [\"vmlinux\"]\n"),
            f + ":3: make_args entry \"vmlinux\" is not a VARIABLE=value assignment");
  EXPECT_EQ(load_error("source = \"debian-package\"\npackage = \"linux-image-cloud-amd64\"\nseries = \"s\"\n"),
            f + ":3: 'series' does not apply to source = \"debian-package\" (a packaged kernel is used as built; "
                "build it from source to change it)");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\npath = \"x\"\n"),
            f + ":3: 'path' does not apply to source = \"linux-source\"");
  // toml++'s own syntax errors keep their line.
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \n").rfind(f + ":2: ", 0), 0u);
}

// A git recipe builds HEAD (which must be clean) or the commit it names, whatever the work tree
// holds; the cache key follows the commit built.
TEST_F(KernelRecipeTest, AGitRecipesCommitIsTheOneBuilt) {
  const std::string f = (dir_ / "r.toml").string();
  EXPECT_EQ(load_error("source = \"tarball\"\npath = \"" + fake_tarball().string() + "\"\ncommit = \"v1\"\n"),
            f + ":3: 'commit' applies to source = \"git\" only, not \"tarball\"");
  const fs::path tree = dir_ / "tree";
  run_checked({"cp", "-a", (kData / "fake-linux").string(), tree.string()});
  const auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", tree.string(), "-c", "user.name=t", "-c", "user.email=t@t"});
    return run_checked(args);
  };
  git({"init", "-q"});
  git({"add", "-A"});
  git({"commit", "-qm", "one"});
  const std::string first = git({"rev-parse", "HEAD"}).substr(0, 40);
  write("tree/Kconfig", "# changed\n");
  git({"commit", "-qam", "two"});
  write("head.toml", "source = \"git\"\npath = \"tree\"\n");
  write("first.toml", "source = \"git\"\npath = \"tree\"\ncommit = \"" + first + "\"\n");
  const std::string head_key = kernel_cache_key(load_kernel_recipe((dir_ / "head.toml").string()));
  const std::string first_key = kernel_cache_key(load_kernel_recipe((dir_ / "first.toml").string()));
  EXPECT_NE(head_key, first_key);
  write("first-by-branch.toml", "source = \"git\"\npath = \"tree\"\ncommit = \"HEAD~1\"\n");
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe((dir_ / "first-by-branch.toml").string())), first_key);
  write("tree/Makefile", "dirty\n");
  EXPECT_THROW(kernel_cache_key(load_kernel_recipe((dir_ / "head.toml").string())), Error);
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe((dir_ / "first.toml").string())), first_key);
  write("nope.toml", "source = \"git\"\npath = \"tree\"\ncommit = \"nope\"\n");
  try {
    kernel_cache_key(load_kernel_recipe((dir_ / "nope.toml").string()));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir_ / "nope.toml").string() + ": " + tree.string() + " has no commit 'nope': ", 0), 0u)
        << e.what();
  }
}

TEST_F(KernelRecipeTest, SeriesErrorsNameTheSeriesLine) {
  std::string series = (dir_ / "s" / "series").string();
  write("s/0001-a.patch", "");
  write("s/series", "# comment\n0001-a.patch\n\n0002-missing.patch\n");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nseries = \"s/series\"\n"),
            series + ":4: patch " + (dir_ / "s" / "0002-missing.patch").string() + " does not exist");
  write("s/series", "0001-a.patch -p0\n");
  EXPECT_EQ(load_error("source = \"linux-source\"\npackage = \"p\"\nseries = \"s/series\"\n"),
            series + ":1: unsupported option '-p0' for patch 0001-a.patch: abvm applies patches with -p1 only");
}

TEST_F(KernelRecipeTest, CacheKeyFollowsContentNotNames) {
  fs::path tar = fake_tarball();
  write("frag.config", "CONFIG_VIRTIO_BLK=y\n");
  write("p/0001-x.patch", "first\n");
  write("p/0002-y.patch", "second\n");
  write("p/series", "0001-x.patch\n0002-y.patch\n");
  std::string recipe = "source = \"tarball\"\npath = \"" + tar.string() +
                       "\"\nfragments = [\"frag.config\"]\nseries = \"p/series\"\n";
  write("r.toml", recipe);
  std::string key = kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string()));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string())), key);

  // Another recipe file name and a renamed fragment with the same text: same kernel.
  write("copy/frag-renamed.config", "CONFIG_VIRTIO_BLK=y\n");
  write("copy/other-name.toml", "description = \"same kernel\"\nsource = \"tarball\"\npath = \"" + tar.string() +
                                    "\"\nfragments = [\"frag-renamed.config\"]\nseries = \"../p/series\"\n");
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe((dir_ / "copy" / "other-name.toml").string())), key);

  write("p/0002-y.patch", "second, edited\n");
  std::string edited = kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string()));
  EXPECT_NE(edited, key);
  write("p/series", "0002-y.patch\n0001-x.patch\n");
  std::string reordered = kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string()));
  EXPECT_NE(reordered, edited);
  write("p/series", "0001-x.patch\n0002-y.patch\n");
  write("p/0002-y.patch", "second\n");
  EXPECT_EQ(kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string())), key);

  write("frag.config", "CONFIG_VIRTIO_BLK=y\nCONFIG_SMP=y\n");
  EXPECT_NE(kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string())), key);
  write("frag.config", "CONFIG_VIRTIO_BLK=y\n");
  write("r.toml", recipe + "make_args = [\"KCFLAGS=-O1\"]\n");
  EXPECT_NE(kernel_cache_key(load_kernel_recipe((dir_ / "r.toml").string())), key);
}

TEST_F(KernelRecipeTest, PatchThatDoesNotApplyNamesThePatchAndLeavesNothing) {
  fs::path tar = fake_tarball();
  fs::path good = kRepoKernels / "patches" / "virtio-dma-api" / "0001-virtio_ring-use-the-DMA-API-for-all-devices.patch";
  fs::path bad = kData / "fake-patches" / "0002-does-not-apply.patch";
  fs::path series = write("p/series", good.string() + "\n" + bad.string() + "\n");
  write("r.toml", "source = \"tarball\"\npath = \"" + tar.string() + "\"\nseries = \"p/series\"\n");
  KernelRecipe recipe = load_kernel_recipe((dir_ / "r.toml").string());
  fs::path cache = dir_ / "cache";
  std::vector<std::string> progress;
  KernelBuildOptions options{.cache_dir = cache, .progress = [&](std::string_view l) { progress.emplace_back(l); }};
  try {
    build_kernel(recipe, options);
    FAIL() << "expected abvm::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(series.string() + ": patch 2 of 2 (" + bad.string() + ") does not apply to tarball sha256 ", 0),
              0u)
        << m;
    // patch's own report of the failing hunk, then what to do.
    EXPECT_NE(m.find("Hunk #1 FAILED at 40."), std::string::npos) << m;
    EXPECT_NE(m.find("Refresh it against this source or remove it from the series."), std::string::npos) << m;
  }
  // The first (real) patch applied to the fake tree before the second failed.
  ASSERT_GE(progress.size(), 2u);
  EXPECT_EQ(progress[progress.size() - 2], "r: applying " + good.string());
  // No cache entry survives a failed build; the pristine source and the build tree do.
  for (const auto& e : fs::directory_iterator(cache)) {
    std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "src" || name == "locks" || name == "trees") << name;
  }
}

// The build tree is kept between builds, so kbuild recompiles only what changed; the files the
// previous build's patches touched are put back from the pristine tree first, also after a
// build that failed halfway through its series.
TEST_F(KernelRecipeTest, TheNextBuildRestoresWhatThePreviousBuildsPatchesTouched) {
  fs::path tar = fake_tarball();
  fs::path good = kRepoKernels / "patches" / "virtio-dma-api" / "0001-virtio_ring-use-the-DMA-API-for-all-devices.patch";
  fs::path adds = write("p/0002-add-a-file.patch",
                        "--- /dev/null\n+++ b/drivers/virtio/abvm_new.c\n@@ -0,0 +1 @@\n+int abvm_new;\n");
  fs::path bad = kData / "fake-patches" / "0002-does-not-apply.patch";
  write("p/series", good.string() + "\n" + adds.string() + "\n" + bad.string() + "\n");
  write("q/series", bad.string() + "\n");
  write("r.toml", "source = \"tarball\"\npath = \"" + tar.string() + "\"\nseries = \"p/series\"\n");
  write("s.toml", "source = \"tarball\"\npath = \"" + tar.string() + "\"\nseries = \"q/series\"\n");
  fs::path cache = dir_ / "cache";
  std::vector<std::string> progress;
  KernelBuildOptions options{.cache_dir = cache, .progress = [&](std::string_view l) { progress.emplace_back(l); }};
  EXPECT_THROW(build_kernel(load_kernel_recipe((dir_ / "r.toml").string()), options), Error);

  ASSERT_TRUE(fs::is_directory(cache / "trees"));
  const fs::path tree = fs::directory_iterator(cache / "trees")->path() / "linux";
  const std::string pristine = read_file(kData / "fake-linux" / "drivers" / "virtio" / "virtio_ring.c");
  EXPECT_NE(read_file(tree / "drivers" / "virtio" / "virtio_ring.c"), pristine);  // the first patch applied
  EXPECT_TRUE(fs::exists(tree / "drivers" / "virtio" / "abvm_new.c"));          // so did the second

  progress.clear();
  EXPECT_THROW(build_kernel(load_kernel_recipe((dir_ / "s.toml").string()), options), Error);
  EXPECT_EQ(read_file(tree / "drivers" / "virtio" / "virtio_ring.c"), pristine);
  EXPECT_FALSE(fs::exists(tree / "drivers" / "virtio" / "abvm_new.c"));
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress[0].find("s: reusing the build tree"), std::string::npos) << progress[0];
  EXPECT_NE(progress[0].find("(2 patched file(s) restored)"), std::string::npos) << progress[0];

  // A tree whose record is unreadable is not trusted: it is copied afresh.
  write_file_atomic(tree.parent_path() / "patched-paths.json", "not json");
  progress.clear();
  EXPECT_THROW(build_kernel(load_kernel_recipe((dir_ / "s.toml").string()), options), Error);
  ASSERT_GE(progress.size(), 2u);
  EXPECT_NE(progress[0].find("cannot be restored"), std::string::npos) << progress[0];
  EXPECT_NE(progress[1].find("copying the source tree"), std::string::npos) << progress[1];
}

TEST(KernelPatchPaths, HeadersRenamesAndNewFilesButNotRemovedLinesOrUnsafeNames) {
  const std::string patch =
      "Subject: [PATCH] x\n"
      "---\n"
      " a | 1 +\n"
      "diff --git a/drivers/virtio/virtio_ring.c b/drivers/virtio/virtio_ring.c\n"
      "--- a/drivers/virtio/virtio_ring.c\t2024-01-01 00:00:00\n"
      "+++ b/drivers/virtio/virtio_ring.c\t2024-01-01 00:00:00\n"
      "@@ -1,2 +1,2 @@\n"
      "--- a removed line that reads like a header\n"
      "+a replacement\n"
      "--- /dev/null\n"
      "+++ b/include/new.h\n"
      "diff --git a/old/name.c b/new/name.c\n"
      "similarity index 100%\n"
      "rename from old/name.c\n"
      "rename to new/name.c\n"
      "--- a/../../etc/passwd\n"
      "+++ b/../../etc/passwd\n"
      "--- a/drivers/virtio/virtio_ring.c\r\n"
      "+++ b/drivers/virtio/virtio_ring.c\r\n";
  EXPECT_EQ(paths_touched_by_patch(patch),
            (std::vector<std::string>{"drivers/virtio/virtio_ring.c", "include/new.h", "old/name.c", "new/name.c"}));
  // The shipped series touches one file.
  const fs::path p = kRepoKernels / "patches" / "virtio-dma-api" / "0001-virtio_ring-use-the-DMA-API-for-all-devices.patch";
  EXPECT_EQ(paths_touched_by_patch(read_file(p)), std::vector<std::string>{"drivers/virtio/virtio_ring.c"});
}

TEST_F(KernelRecipeTest, ConfigCheckNamesDroppedAndDisabledOptions) {
  fs::path frag = write("f.config", "# comment\nCONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_ACPI=y\n");
  fs::path recipe = dir_ / "r.toml";
  std::string good = "CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_ACPI=y\n";
  EXPECT_NO_THROW(check_kernel_config({frag}, good, recipe));

  auto error = [&](const std::vector<fs::path>& frags, const std::string& config) -> std::string {
    try {
      check_kernel_config(frags, config, recipe);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error({frag}, "CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_BLK_DEV_INITRD=y\n"
                          "# CONFIG_ACPI is not set\n"),
            frag.string() + ":4: CONFIG_ACPI=y was dropped by `make olddefconfig` (the final .config has "
                            "`# CONFIG_ACPI is not set`): a dependency is missing; enable it in the fragment");
  // A later fragment disabling virtio-blk: the error points at that line.
  fs::path off = write("off.config", "CONFIG_SMP=y\n# CONFIG_VIRTIO_BLK is not set\n");
  std::string without_blk = "CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=y\n# CONFIG_VIRTIO_BLK is not set\n"
                            "CONFIG_BLK_DEV_INITRD=y\nCONFIG_ACPI=y\nCONFIG_SMP=y\n";
  EXPECT_EQ(error({frag, off}, without_blk),
            off.string() + ":2: the kernel's .config has `# CONFIG_VIRTIO_BLK is not set`, but abvm guests boot an "
                           "initramfs without modules and need CONFIG_VIRTIO_BLK=y: fix the fragment");
  // Modular virtio-blk is not enough either; with no fragment mentioning it, the recipe is named.
  EXPECT_EQ(error({}, "CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=m\nCONFIG_BLK_DEV_INITRD=y\n"),
            recipe.string() + ": the kernel's .config has `CONFIG_VIRTIO_BLK=m`, but abvm guests boot an initramfs "
                              "without modules and need CONFIG_VIRTIO_BLK=y: fix the fragment");
}

}  // namespace
