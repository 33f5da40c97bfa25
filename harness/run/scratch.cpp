#include "run/scratch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"
#include "results/directory.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

void create_raw(const fs::path& path, std::uint64_t size, bool preallocate) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw InfraError(fmt::format("cannot create scratch disk {}: {}", path.string(), std::strerror(errno)));
  int rc = 0;
  if (preallocate) {
    rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (rc != 0) errno = rc;
  } else {
    rc = ::ftruncate(fd, static_cast<off_t>(size));
  }
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    // A half-allocated image of ours would keep the filesystem full for everyone else.
    if (created) ::unlink(path.c_str());
    throw InfraError(fmt::format("cannot size scratch disk {} to {}: {}; free some space or lower disk.size",
                                 path.string(), format_size(size), std::strerror(err)));
  }
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

fs::path prepare_scratch_disk(const DiskSettings& disk, const fs::path& results_dir, bool first_use, int slot) {
  if (disk.path.empty()) {
    const fs::path path = ResultsDir(results_dir).scratch_disk(slot);
    std::error_code ec;
    if (!fs::exists(path, ec) || fs::file_size(path, ec) != disk.size_bytes) {
      create_raw(path, disk.size_bytes, disk.preallocate);
    }
    return path;
  }
  const fs::path& path = disk.path;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  const std::string via = fs::is_symlink(fs::symlink_status(path, ec))
                              ? fmt::format(" (through a symlink to {})", fs::canonical(path, ec).string())
                              : "";
  switch (st.type()) {
    case fs::file_type::not_found:
      // A dangling link would be followed by O_CREAT to make a file wherever it points.
      if (fs::is_symlink(fs::symlink_status(path, ec))) {
        throw Error(fmt::format("disk.path {} is a symlink to a missing file ({}): name the image file itself",
                                path.string(), fs::read_symlink(path, ec).string()));
      }
      create_raw(path, disk.size_bytes, disk.preallocate);
      return path;
    case fs::file_type::block:
      throw Error(fmt::format("disk.path {} is a block device{}: abvm writes only to image files; name a file, "
                              "or leave disk.path empty for a scratch image in the results directory",
                              path.string(), via));
    case fs::file_type::regular: {
      const auto size = fs::file_size(path, ec);
      if (first_use && !ec && size > 0 && !disk.overwrite) {
        throw Error(fmt::format("disk.path {} is an existing non-empty file ({} bytes): the experiment would "
                                "destroy its contents; set disk.overwrite = true if that is intended, or name a "
                                "new file",
                                path.string(), size));
      }
      if (!ec && size < disk.size_bytes) create_raw(path, disk.size_bytes, disk.preallocate);
      return path;
    }
    default:
      throw Error(fmt::format("disk.path {} is not a regular file{}: name an image file", path.string(), via));
  }
}

std::optional<std::string> scratch_space_shortfall(const DiskSettings& disk, const fs::path& results_dir) {
  std::vector<fs::path> images;
  if (!disk.path.empty()) {
    images.push_back(disk.path);
  } else {
    for (int slot = 0; fs::exists(ResultsDir(results_dir).scratch_disk(slot)); ++slot) {
      images.push_back(ResultsDir(results_dir).scratch_disk(slot));
    }
  }
  for (const fs::path& image : images) {
    struct stat st{};
    struct statvfs vfs{};
    if (::stat(image.c_str(), &st) != 0 || ::statvfs(image.c_str(), &vfs) != 0) continue;
    const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
    const std::uint64_t lacking = disk.size_bytes > allocated ? disk.size_bytes - allocated : 0;
    const std::uint64_t available = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (available >= lacking) continue;
    return fmt::format("the filesystem holding the scratch disk {} has {} available, less than the {} the sparse "
                       "image still needs to reach its {}: the guests' write errors may be this host's disk filling "
                       "up, not the workload. Free space there (or set disk.preallocate = true, so that abvm refuses "
                       "before booting when the image does not fit)",
                       image.string(), mib(available), mib(lacking), mib(disk.size_bytes));
  }
  return std::nullopt;
}

}  // namespace abvm
