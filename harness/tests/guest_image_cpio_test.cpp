// The cpio writer against GNU cpio, the reference reader: what `cpio -t` lists and what
// `cpio -i` extracts must be exactly what was added.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/cpio.hpp"
#include "guest/job.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

CpioWriter sample() {
  CpioWriter w;
  w.add_directory("abvm");
  w.add_file("/abvm/job", "abvm-job 1\ndone\n", 0644);
  w.add_file("abvm/odd-size", std::string("x\0y", 3), 0600);  // NUL inside, size not a multiple of 4
  w.add_file("abvm/empty", "", 0644);
  w.add_symlink("abvm/link", "job");
  w.add_file("bin/tool", std::string(5000, 'z'), 0755);
  return w;
}

TEST(GuestCpio, GnuCpioListsTheEntries) {
  const std::string archive = sample().finish();
  EXPECT_EQ(archive.size() % 512, 0u);
  const std::string listing = run_checked({"cpio", "-t", "--quiet"}, {.stdin_data = archive});
  EXPECT_EQ(listing, "abvm\nabvm/job\nabvm/odd-size\nabvm/empty\nabvm/link\nbin/tool\n");
  EXPECT_EQ(cpio_list(archive), (std::vector<std::string>{"abvm", "abvm/job", "abvm/odd-size", "abvm/empty",
                                                           "abvm/link", "bin/tool"}));
}

TEST(GuestCpio, GnuCpioExtractsContentModesAndLinks) {
  const fs::path dir = fs::temp_directory_path() / ("abvm-cpio-" + make_nonce().substr(0, 8));
  fs::create_directories(dir);
  run_checked({"cpio", "-i", "-d", "--quiet", "--no-absolute-filenames"}, {.cwd = dir, .stdin_data = sample().finish()});
  EXPECT_EQ(read_file(dir / "abvm/job"), "abvm-job 1\ndone\n");
  EXPECT_EQ(read_file(dir / "abvm/odd-size"), std::string("x\0y", 3));
  EXPECT_EQ(read_file(dir / "abvm/empty"), "");
  EXPECT_EQ(read_file(dir / "bin/tool"), std::string(5000, 'z'));
  EXPECT_EQ(fs::read_symlink(dir / "abvm/link"), "job");
  EXPECT_EQ(fs::status(dir / "bin/tool").permissions() & fs::perms::all, fs::perms(0755));
  EXPECT_EQ(fs::status(dir / "abvm/odd-size").permissions() & fs::perms::all, fs::perms(0600));
  fs::remove_all(dir);
}

TEST(GuestCpio, DeviceNodesCarryMajorMinor) {
  CpioWriter w;
  w.add_char_device("dev/console", 0600, 5, 1);
  const std::string listing = run_checked({"cpio", "-t", "-v", "--quiet"}, {.stdin_data = w.finish()});
  // GNU cpio -tv prints "crw-------   1 root root   5,   1 ..." for a character device.
  EXPECT_EQ(listing.substr(0, 10), "crw-------") << listing;
  EXPECT_NE(listing.find("5,"), std::string::npos) << listing;
  EXPECT_NE(listing.find("dev/console"), std::string::npos);
}

TEST(GuestCpio, OutputIsReproducible) {
  EXPECT_EQ(sample().finish(), sample().finish());
}

TEST(GuestCpio, ListRejectsDamagedArchives) {
  const std::string archive = sample().finish();
  EXPECT_THROW(cpio_list(archive.substr(0, 200)), Error);
  std::string bad = archive;
  bad[0] = '1';
  EXPECT_THROW(cpio_list(bad), Error);
}

TEST(GuestCpio, EmptyPathIsRefused) {
  CpioWriter w;
  EXPECT_THROW(w.add_file("/", "x"), Error);
}

}  // namespace
