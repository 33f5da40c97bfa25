#pragma once
// A writer for the cpio "newc" format (SVR4 without CRC, magic 070701), the format the
// Linux kernel unpacks into its initramfs. Used for the guest's base image, the per-kernel
// modules archive and the per-trial job archive, so a trial never rebuilds an image.
//
// Output is reproducible: mtime 0, uid/gid 0, inode numbers in order of addition. Paths are
// stored without a leading '/'. The kernel accepts several archives concatenated (each
// compressed or not), later entries overriding earlier ones.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

class CpioWriter {
 public:
  void add_directory(std::string_view path, std::uint32_t mode = 0755);
  void add_file(std::string_view path, std::string_view content, std::uint32_t mode = 0644);
  void add_symlink(std::string_view path, std::string_view target);
  // A device node (the initramfs needs dev/console before devtmpfs is mounted).
  void add_char_device(std::string_view path, std::uint32_t mode, std::uint32_t major, std::uint32_t minor);

  // Paths added so far, in order (without a leading '/').
  const std::vector<std::string>& paths() const { return paths_; }

  // The archive: the entries and the "TRAILER!!!" entry, padded to a multiple of 512 bytes.
  // The writer may be used again afterwards (finish() does not consume it).
  std::string finish() const;

 private:
  void add_entry(std::string_view path, std::uint32_t mode, std::string_view data, std::uint32_t rdev_major,
                 std::uint32_t rdev_minor);
  std::string out_;
  std::vector<std::string> paths_;
  std::uint32_t next_inode_ = 1;
};

// Names of the entries of a newc archive (for tests and `abvm guest build`'s listing);
// throws Error on a malformed archive. Stops at the first trailer.
std::vector<std::string> cpio_list(std::string_view archive);

}  // namespace abvm
