// The scratch disk: abvm's own image, or the user's file re-checked right before use.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "environment_skip.hpp"
#include "core/files.hpp"
#include "run/scratch.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

class ScratchDiskTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("abvm-rd-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(ScratchDiskTest, OwnScratchDiskIsCreatedSparseAtTheConfiguredSize) {
  DiskSettings disk;
  disk.size_bytes = 64ULL << 20;
  const fs::path p = prepare_scratch_disk(disk, dir, true);
  EXPECT_EQ(p, dir / "scratch.raw");
  EXPECT_EQ(fs::file_size(p), 64ULL << 20);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_LT(st.st_blocks * 512, 1 << 20) << "not sparse";
  disk.preallocate = true;
  disk.size_bytes = 8ULL << 20;
  prepare_scratch_disk(disk, dir, true);
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_GE(st.st_blocks * 512, 8 << 20) << "not preallocated";
}

// A sparse image whose filesystem cannot hold the rest of it is named, with what is free; one that fits is not.
TEST_F(ScratchDiskTest, ASparseImageItsFilesystemCannotHoldIsNamedAsTheCauseOfWriteErrors) {
  DiskSettings disk;
  disk.size_bytes = 1ULL << 20;
  const fs::path p = prepare_scratch_disk(disk, dir, true);
  EXPECT_EQ(scratch_space_shortfall(disk, dir), std::nullopt);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(dir.c_str(), &vfs), 0);
  // The same image, said to be 1 GiB more than the filesystem has free (the file's length does not matter).
  disk.size_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize + (1ULL << 30);
  const auto note = scratch_space_shortfall(disk, dir);
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("the filesystem holding the scratch disk " + p.string() + " has "), std::string::npos) << *note;
  EXPECT_NE(note->find("may be this host's disk filling up, not the workload"), std::string::npos) << *note;
  EXPECT_NE(note->find("disk.preallocate = true"), std::string::npos) << *note;
  // A named image is the one checked; none at all (a remote host's volume) says nothing.
  disk.path = dir / "user.img";
  EXPECT_EQ(scratch_space_shortfall(disk, dir), std::nullopt);
  write_file_atomic(disk.path, "");
  EXPECT_NE(scratch_space_shortfall(disk, dir), std::nullopt);
}

TEST_F(ScratchDiskTest, NamedScratchDiskIsRecheckedBeforeUse) {
  DiskSettings disk;
  disk.size_bytes = 1 << 20;
  disk.path = dir / "user.img";
  write_file_atomic(disk.path, "precious data");
  try {
    prepare_scratch_disk(disk, dir, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "disk.path " + disk.path.string() +
                                         " is an existing non-empty file (13 bytes): the experiment would destroy its "
                                         "contents; set disk.overwrite = true if that is intended, or name a new file");
  }
  EXPECT_EQ(read_file(disk.path), "precious data");
  // On --resume the content is the experiment's own.
  EXPECT_EQ(prepare_scratch_disk(disk, dir, false), disk.path);
  disk.overwrite = true;
  EXPECT_EQ(prepare_scratch_disk(disk, dir, true), disk.path);
  EXPECT_EQ(fs::file_size(disk.path), 1u << 20);

  disk.path = dir;
  EXPECT_THROW(prepare_scratch_disk(disk, dir, true), Error);
}

TEST_F(ScratchDiskTest, BlockDeviceIsRefusedAlsoThroughASymlink) {
  fs::path dev;
  for (const char* c : {"/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1"}) {
    if (fs::is_block_file(c)) dev = c;
  }
  if (dev.empty()) ABVM_SKIP_WITHOUT("no block device on this host to test against");
  DiskSettings disk;
  disk.overwrite = true;  // even then
  disk.path = dir / "disk.img";
  fs::create_symlink(dev, disk.path);
  try {
    prepare_scratch_disk(disk, dir, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "disk.path " + disk.path.string() + " is a block device (through a symlink to " + dev.string() +
                  "): abvm writes only to image files; name a file, or leave disk.path empty for a scratch image in "
                  "the results directory");
  }
}
}  // namespace
}  // namespace abvm
