// A kernel cache entry read back (kernels/cache_entry.hpp load_cached): its identity.json gives the
// kernel's files under the entry, and a damaged one is an Error naming the file, the field and what
// it must be, and saying to remove the entry.
#include "kernels/cache_entry.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "samples_test_util.hpp"

namespace abvm::kernel_build {
namespace {

TEST(KernelsCacheEntry, AnIdentityReadsAsTheKernelOfTheEntry) {
  test::TempDir entry("kernel-entry");
  EXPECT_FALSE(load_cached(entry.path()).has_value());
  write_file_atomic(entry.path() / "identity.json",
                    R"({"recipe": "p", "release": "6.1.0-27-cloud-amd64", "image": "root/boot/vmlinuz",
                        "modules_dir": "root/lib/modules/6.1.0-27-cloud-amd64", "cache_key": "ab"})");
  const auto k = load_cached(entry.path());
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->image, entry.path() / "root/boot/vmlinuz");
  EXPECT_EQ(k->modules_dir, entry.path() / "root/lib/modules/6.1.0-27-cloud-amd64");
  EXPECT_EQ(k->identity.at("cache_key"), "ab");
  EXPECT_TRUE(k->cache_hit);
}

TEST(KernelsCacheEntry, ADamagedIdentityNamesTheFieldAndSaysToRemoveTheEntry) {
  test::TempDir entry("kernel-damaged");
  const std::string file = (entry.path() / "identity.json").string();
  const std::string remove = "; the kernel cache entry is damaged: remove " + entry.path().string() +
                             " and abvm builds it again";
  write_file_atomic(file, R"({"recipe": "p", "release": 6, "image": "bzImage"})");
  try {
    load_cached(entry.path());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), file + ": field \"release\" must be a string, not 6" + remove);
  }
  write_file_atomic(file, R"({"recipe": "p", "release": "6.1")");
  EXPECT_THROW(load_cached(entry.path()), Error);
}

}  // namespace
}  // namespace abvm::kernel_build
