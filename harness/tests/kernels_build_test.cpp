// Real kernel builds from Debian's linux-source-6.1 (slow: ~6.5 min for the first tinyconfig
// build on 2 idle cores; label "kernel-build"). They use the user's kernel cache on purpose,
// so that CI reuses it: the first run builds, later runs check the cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "environment_skip.hpp"
#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

bool have_linux_source() { return fs::exists("/usr/src/linux-source-6.1.tar.xz"); }

// ccache's counters for the kernel cache (ccache 4.7 --print-stats: "name\tvalue" lines).
std::map<std::string, long> ccache_stats() {
  std::string dir = (abvm_cache_dir() / "kernels" / "ccache").string();
  std::map<std::string, long> out;
  std::istringstream in(run_checked({"ccache", "--print-stats"}, {.extra_env = {"CCACHE_DIR=" + dir}}));
  std::string name;
  long value = 0;
  while (in >> name >> value) out[name] = value;
  return out;
}

long misses(const std::map<std::string, long>& before, const std::map<std::string, long>& after) {
  auto get = [](const auto& m, const char* k) { return m.count(k) ? m.at(k) : 0L; };
  return get(after, "cache_miss") - get(before, "cache_miss");
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void expect_built_kernel(const KernelArtifact& a) {
  ASSERT_TRUE(fs::is_regular_file(a.image));
  std::string file = run_checked({"file", "-b", a.image.string()});
  EXPECT_NE(file.find("Linux kernel x86 boot executable bzImage, version " + a.release + " (abvm@abvm) #1 SMP abvm-" +
                      a.identity["cache_key"].get<std::string>().substr(0, 12)),
            std::string::npos)
      << file;
  std::string config = read_file(a.image.parent_path() / "config");
  for (const char* option : {"CONFIG_64BIT=y", "CONFIG_VIRTIO_BLK=y", "CONFIG_VIRTIO_PCI=y", "CONFIG_SERIAL_8250_CONSOLE=y",
                             "CONFIG_BLK_DEV_INITRD=y", "CONFIG_RD_GZIP=y", "CONFIG_DEVTMPFS_MOUNT=y", "CONFIG_ACPI=y",
                             "CONFIG_SWIOTLB=y"}) {
    EXPECT_NE(config.find(std::string("\n") + option + "\n"), std::string::npos) << option;
  }
  EXPECT_FALSE(a.modules_dir.has_value());
  EXPECT_EQ(a.release.rfind("6.1.", 0), 0u) << a.release;
}

}  // namespace

TEST(GuestKernelBuild, UnpatchedThenPatchedWithCacheAndCcache) {
  if (!have_linux_source()) ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed (harness/setup.sh installs it)");
  KernelRecipe a_recipe = load_kernel_recipe("linux-6.1-virtio");
  KernelRecipe b_recipe = load_kernel_recipe("linux-6.1-virtio-dma-api");
  ASSERT_NE(kernel_cache_key(a_recipe), kernel_cache_key(b_recipe));

  auto t = std::chrono::steady_clock::now();
  KernelArtifact a = build_kernel(a_recipe);
  std::cerr << "[ timing ] linux-6.1-virtio: " << seconds_since(t) << " s (cache " << (a.cache_hit ? "hit" : "miss")
            << ")\n";
  expect_built_kernel(a);
  EXPECT_TRUE(a.identity["patches"].empty());

  // Force a real rebuild of the patched kernel when it is cached, so the ccache claim is
  // measured on every run: remove only its cache entry.
  std::string b_key = kernel_cache_key(b_recipe);
  fs::remove_all(abvm_cache_dir() / "kernels" / b_key);
  auto before = ccache_stats();
  t = std::chrono::steady_clock::now();
  KernelArtifact b = build_kernel(b_recipe);
  double b_seconds = seconds_since(t);
  long b_misses = misses(before, ccache_stats());
  std::cerr << "[ timing ] linux-6.1-virtio-dma-api after linux-6.1-virtio: " << b_seconds << " s, " << b_misses
            << " ccache misses\n";
  EXPECT_FALSE(b.cache_hit);
  expect_built_kernel(b);
  // Of ~1300 compiles, only what the patch touches (virtio_ring.c), what embeds the build's
  // identity (init/version.c via compile.h) and the few that miss in every build (measured:
  // 7 in the unpatched build right after a build in another directory) compile again.
  EXPECT_LE(b_misses, 10) << "the patched build should reuse the unpatched objects through ccache";
  ASSERT_EQ(b.identity["patches"].size(), 2u);
  EXPECT_EQ(b.identity["patches"][0]["name"], "0001-virtio_ring-use-the-DMA-API-for-all-devices.patch");
  EXPECT_EQ(b.identity["patches"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(b.identity["config_sha256"], a.identity["config_sha256"]);  // same config on both sides
  EXPECT_NE(b.identity["image_sha256"], a.identity["image_sha256"]);

  // Back to the unpatched kernel in the same build tree: the patched file is restored from the
  // pristine source, and the build is reproducible, so the image is byte for byte the first one.
  fs::remove_all(abvm_cache_dir() / "kernels" / kernel_cache_key(a_recipe));
  t = std::chrono::steady_clock::now();
  KernelArtifact a2 = build_kernel(a_recipe);
  std::cerr << "[ timing ] linux-6.1-virtio again after linux-6.1-virtio-dma-api: " << seconds_since(t) << " s\n";
  EXPECT_FALSE(a2.cache_hit);
  EXPECT_EQ(a2.identity["image_sha256"], a.identity["image_sha256"]);
  EXPECT_EQ(a2.identity["config_sha256"], a.identity["config_sha256"]);

  // Second build of the same recipe: a cache hit, no make at all.
  t = std::chrono::steady_clock::now();
  KernelArtifact again = build_kernel(b_recipe);
  double again_seconds = seconds_since(t);
  std::cerr << "[ timing ] linux-6.1-virtio-dma-api again: " << again_seconds << " s\n";
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.identity, b.identity);
  EXPECT_LT(again_seconds, 5.0);
}

TEST(GuestKernelBuild, FragmentDisablingVirtioBlkFailsAfterOlddefconfig) {
  if (!have_linux_source()) ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed (harness/setup.sh installs it)");
  fs::path dir = fs::temp_directory_path() / ("abvm-kernel-build-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path base = fs::path(ABVM_SOURCE_DIR) / "kernels" / "fragments" / "virtio-guest.config";
  fs::path off = dir / "no-virtio-blk.config";
  std::ofstream(off) << "# A user's fragment that turns the guest's disk driver off.\n# CONFIG_VIRTIO_BLK is not set\n";
  std::ofstream(dir / "r.toml") << "source = \"linux-source\"\npackage = \"linux-source-6.1\"\nfragments = [\""
                                << base.string() << "\", \"no-virtio-blk.config\"]\n";
  KernelRecipe recipe = load_kernel_recipe((dir / "r.toml").string());
  std::vector<std::string> progress;
  KernelBuildOptions options{.progress = [&](std::string_view l) { progress.emplace_back(l); }};
  try {
    build_kernel(recipe, options);
    FAIL() << "expected abvm::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              off.string() + ":2: the kernel's .config has `# CONFIG_VIRTIO_BLK is not set`, but abvm guests boot an "
                             "initramfs without modules and need CONFIG_VIRTIO_BLK=y: fix the fragment");
  }
  // It stopped after olddefconfig, before compiling anything.
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.back().find("olddefconfig"), std::string::npos) << progress.back();
  EXPECT_FALSE(fs::exists(abvm_cache_dir() / "kernels" / kernel_cache_key(recipe)));
  fs::remove_all(dir);
}
