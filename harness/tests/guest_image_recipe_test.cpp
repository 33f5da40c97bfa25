// build_guest_image's checks before it builds anything: a missing package is an Error that
// names the package and harness/setup.sh; a broken recipe is an Error located in the file.
#include <gtest/gtest.h>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

std::string error_of(const GuestImageOptions& options) {
  try {
    build_guest_image(options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no Error)";
}

class Recipe : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("abvm-recipe-" + make_nonce().substr(0, 8));
    fs::create_directories(dir_ / "agent");
    write_file_atomic(dir_ / "agent/init.sh", "#!/bin/sh\n");
    text_ = read_file(fs::path(ABVM_SOURCE_DIR) / "guests/base.toml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  GuestImageOptions with(const std::string& text) {
    write_file_atomic(dir_ / "base.toml", text);
    return {.recipe = dir_ / "base.toml", .cache_dir = dir_ / "cache"};
  }
  std::string replaced(const std::string& from, const std::string& to) {
    std::string t = text_;
    t.replace(t.find(from), from.size(), to);
    return t;
  }
  fs::path dir_;
  std::string text_;
};

TEST_F(Recipe, MissingBusyboxNamesThePackage) {
  const auto e = error_of(with(replaced("path = \"/bin/busybox\"", "path = \"/nonexistent/busybox\"")));
  EXPECT_EQ(e, "/nonexistent/busybox is missing: install the Debian package busybox-static (run harness/setup.sh as root)");
}

TEST_F(Recipe, MissingDdNamesThePackage) {
  const auto e = error_of(with(replaced("path = \"/usr/bin/dd\"", "path = \"/nonexistent/dd\"")));
  EXPECT_EQ(e, "/nonexistent/dd is missing: install the Debian package coreutils (run harness/setup.sh as root)");
}

TEST_F(Recipe, MissingKeyIsLocated) {
  const auto e = error_of(with(replaced("source_package = \"fio\"", "")));
  EXPECT_EQ(e, (dir_ / "base.toml").string() + ": [fio] needs a string 'source_package'");
}

TEST_F(Recipe, SyntaxErrorIsLocated) {
  const auto e = error_of(with("[busybox\npackage = 1\n"));
  EXPECT_EQ(e.rfind((dir_ / "base.toml").string() + ":1: ", 0), 0u) << e;
}

TEST(GuestImageCache, FollowsXdgCacheHome) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", "/var/tmp/xdg", 1);
  EXPECT_EQ(abvm_cache_dir(), fs::path("/var/tmp/xdg/abvm"));
  ::setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  EXPECT_EQ(abvm_cache_dir(), fs::path(std::getenv("HOME")) / ".cache/abvm");
  if (old) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
