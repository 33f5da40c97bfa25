#include "guest/cpio.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace abvm {
namespace {

constexpr std::uint32_t kRegular = 0100000;
constexpr std::uint32_t kDirectory = 0040000;
constexpr std::uint32_t kSymlink = 0120000;
constexpr std::uint32_t kCharDevice = 0020000;

std::string normalise(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) throw Error("cpio: empty entry path");
  return std::string(path);
}

void pad4(std::string& s) {
  while (s.size() % 4 != 0) s.push_back('\0');
}

}  // namespace

void CpioWriter::add_entry(std::string_view path, std::uint32_t mode, std::string_view data,
                           std::uint32_t rdev_major, std::uint32_t rdev_minor) {
  const std::string name = path == "TRAILER!!!" ? std::string(path) : normalise(path);
  const bool is_dir = (mode & 0170000) == kDirectory;
  // newc header: magic + 13 eight-digit hex fields; name (with NUL) and data each padded to 4.
  out_ += fmt::format("070701{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
                      name == "TRAILER!!!" ? 0u : next_inode_++, mode, 0u, 0u, is_dir ? 2u : 1u, 0u,
                      static_cast<std::uint32_t>(data.size()), 0u, 0u, rdev_major, rdev_minor,
                      static_cast<std::uint32_t>(name.size() + 1), 0u);
  out_ += name;
  out_.push_back('\0');
  pad4(out_);
  out_ += data;
  pad4(out_);
  if (name != "TRAILER!!!") paths_.push_back(name);
}

void CpioWriter::add_directory(std::string_view path, std::uint32_t mode) {
  add_entry(path, kDirectory | (mode & 07777), {}, 0, 0);
}

void CpioWriter::add_file(std::string_view path, std::string_view content, std::uint32_t mode) {
  if (content.size() > 0xFFFFFFFFu) throw Error(fmt::format("cpio: {} is larger than 4 GiB", path));
  add_entry(path, kRegular | (mode & 07777), content, 0, 0);
}

void CpioWriter::add_symlink(std::string_view path, std::string_view target) {
  add_entry(path, kSymlink | 0777, target, 0, 0);
}

void CpioWriter::add_char_device(std::string_view path, std::uint32_t mode, std::uint32_t major,
                                 std::uint32_t minor) {
  add_entry(path, kCharDevice | (mode & 07777), {}, major, minor);
}

std::string CpioWriter::finish() const {
  CpioWriter copy = *this;
  copy.add_entry("TRAILER!!!", 0, {}, 0, 0);
  std::string out = std::move(copy.out_);
  while (out.size() % 512 != 0) out.push_back('\0');
  return out;
}

std::vector<std::string> cpio_list(std::string_view archive) {
  std::vector<std::string> names;
  std::size_t pos = 0;
  auto field = [&](std::size_t header, int index) {
    const std::string hex(archive.substr(header + 6 + static_cast<std::size_t>(index) * 8, 8));
    std::size_t used = 0;
    unsigned long value = std::stoul(hex, &used, 16);
    if (used != 8) throw Error("cpio: bad header field at offset " + std::to_string(header));
    return static_cast<std::size_t>(value);
  };
  while (true) {
    if (pos + 110 > archive.size()) throw Error("cpio: truncated archive (no trailer)");
    if (archive.substr(pos, 6) != "070701") throw Error("cpio: bad magic at offset " + std::to_string(pos));
    const std::size_t file_size = field(pos, 6);
    const std::size_t name_size = field(pos, 11);
    if (name_size == 0 || pos + 110 + name_size > archive.size()) throw Error("cpio: truncated entry name");
    std::string name(archive.substr(pos + 110, name_size - 1));
    std::size_t data = (pos + 110 + name_size + 3) & ~std::size_t{3};
    if (name == "TRAILER!!!") break;
    if (data + file_size > archive.size()) throw Error("cpio: truncated data of " + name);
    names.push_back(std::move(name));
    pos = (data + file_size + 3) & ~std::size_t{3};
  }
  return names;
}

}  // namespace abvm
