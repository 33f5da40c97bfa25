// read_file and read_file_from: every byte, from files whose size the kernel knows and from
// files it does not (/proc's report 0), and errors that name the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"

namespace fs = std::filesystem;
using abvm::read_file;
using abvm::read_file_from;
using abvm::write_file_atomic;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("abvm-files-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string patterned(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) % 256);  // NULs too
  return s;
}

}  // namespace

TEST(CoreFiles, AFileIsReadWholeWithEveryByte) {
  for (const std::size_t n : {0u, 1u, 4095u, 4096u, 4097u, 3'000'001u}) {
    const fs::path p = scratch("whole-" + std::to_string(n));
    const std::string content = patterned(n);
    write_file_atomic(p, content);
    EXPECT_EQ(read_file(p), content) << n << " bytes";
  }
}

TEST(CoreFiles, AFileIsReadFromAnOffset) {
  const fs::path p = scratch("offset");
  const std::string content = patterned(10'000);
  write_file_atomic(p, content);
  EXPECT_EQ(read_file_from(p, 0), content);
  EXPECT_EQ(read_file_from(p, 6'000), content.substr(6'000));
  EXPECT_EQ(read_file_from(p, 10'000), "");
}

TEST(CoreFiles, AFileShorterThanWhatWasReadBeforeIsAnErrorSayingSo) {
  const fs::path p = scratch("truncated");
  write_file_atomic(p, "12345");
  try {
    (void)read_file_from(p, 9);
    FAIL() << "read past the end";
  } catch (const abvm::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              p.string() + ": holds 5 bytes, fewer than the 9 read before: it was replaced or truncated");
  }
}

// /proc's files have st_size 0: their bytes come all the same, past the first 4096.
TEST(CoreFiles, AFileWithoutAKnownSizeIsReadToItsEnd) {
  const std::string maps = read_file("/proc/self/maps");
  EXPECT_GT(maps.size(), 4096u) << "a test process maps more than a page of lines";
  EXPECT_EQ(maps.back(), '\n');
  EXPECT_NE(maps.find("[stack]"), std::string::npos);
  EXPECT_EQ(read_file_from("/proc/self/cmdline", 0).find('\0') != std::string::npos, true);
}

TEST(CoreFiles, AMissingFileIsAnErrorNamingIt) {
  const fs::path p = scratch("absent");
  try {
    (void)read_file(p);
    FAIL() << "read a missing file";
  } catch (const abvm::Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": cannot open: No such file or directory");
  }
}
