// Fetches Debian's cloud kernel for real (apt-get download + dpkg-deb -x) into a private
// cache directory, and checks what the image worker's boot test relies on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "environment_skip.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

bool apt_reachable() {
  // apt-cache works offline from the local lists; the download itself needs the mirror.
  return find_program("apt-get").has_value() && run_process({"apt-cache", "show", "linux-image-cloud-amd64"}).exit_code == 0;
}

}  // namespace

TEST(GuestKernelDebian, FetchesCloudKernelAndCachesIt) {
  if (!apt_reachable()) ABVM_SKIP_WITHOUT("apt-cache does not know linux-image-cloud-amd64 (no Debian apt lists)");
  fs::path cache = fs::temp_directory_path() / ("abvm-kernel-debian-test-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  std::vector<std::string> progress;
  KernelBuildOptions options{.cache_dir = cache, .progress = [&](std::string_view l) { progress.emplace_back(l); }};

  KernelArtifact a = fetch_debian_kernel("linux-image-cloud-amd64", options);
  EXPECT_FALSE(a.cache_hit);
  // The metapackage resolves to the concrete package whose name carries the release.
  EXPECT_EQ(a.identity["source"]["package"].get<std::string>(), "linux-image-" + a.release);
  EXPECT_NE(a.release.find("-cloud-amd64"), std::string::npos) << a.release;
  ASSERT_TRUE(fs::is_regular_file(a.image));
  EXPECT_EQ(a.image.filename(), "vmlinuz-" + a.release);
  ASSERT_TRUE(a.modules_dir.has_value());
  EXPECT_TRUE(fs::is_regular_file(*a.modules_dir / "modules.dep"));
  // virtio_blk is a module in Debian kernels: the image worker packs it from here.
  std::ifstream dep(*a.modules_dir / "modules.dep");
  std::string deps((std::istreambuf_iterator<char>(dep)), {});
  EXPECT_NE(deps.find("virtio_blk.ko"), std::string::npos);
  // The setup header's version string starts with the release (read from the bzImage itself).
  EXPECT_EQ(a.identity["version"].get<std::string>().rfind(a.release + " ", 0), 0u) << a.identity.dump();
  EXPECT_EQ(a.identity["image_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(a.identity["config_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(a.identity["source"]["deb_sha256"].get<std::string>().size(), 64u);
  std::string file = run_checked({"file", "-b", a.image.string()});
  EXPECT_NE(file.find("Linux kernel x86 boot executable bzImage"), std::string::npos) << file;

  KernelArtifact again = fetch_debian_kernel("linux-image-cloud-amd64", options);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.image, a.image);
  EXPECT_EQ(again.identity, a.identity);
  fs::remove_all(cache);
}

TEST(GuestKernelDebian, MissingPackageIsAnErrorNamingIt) {
  if (!apt_reachable()) ABVM_SKIP_WITHOUT("apt-cache does not know linux-image-cloud-amd64 (no Debian apt lists)");
  KernelBuildOptions options{.cache_dir = fs::temp_directory_path() / "abvm-kernel-never-created"};
  try {
    fetch_debian_kernel("linux-image-abvm-no-such-flavour", options);
    FAIL() << "expected abvm::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Debian package 'linux-image-abvm-no-such-flavour' not found by apt-cache", 0), 0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("apt-get update"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / "abvm-kernel-never-created"));
}
