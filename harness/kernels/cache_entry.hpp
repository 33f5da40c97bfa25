// What the two ways of getting a kernel (kernels/debian_kernel.cpp, kernels/build.cpp) share: the
// cache entry (its root, lock, temporary directory and identity.json), the hashes its key is made
// of, and the progress lines and tool-output tails they print. Internal to kernels/.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "kernels/kernel.hpp"

namespace abvm {
class JsonField;
}  // namespace abvm

namespace abvm::kernel_build {

void say(const KernelBuildOptions& options, std::string_view line);
std::filesystem::path cache_root(const KernelBuildOptions& options);
std::string first_word(const std::string& s);
std::string sha256_text(const std::string& text);
std::string sha256_file(const std::filesystem::path& path);
std::string utc_now();
// The last `n` lines of a tool's output, for an error message.
std::string tail_lines(const std::string& text, std::size_t n);

// Serialises concurrent abvm processes building the same cache entry (flock: released by
// the kernel when the process dies, so a killed build never leaves a stale lock).
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// A directory removed on scope exit unless released (failed builds leave nothing behind).
class TempDir {
 public:
  explicit TempDir(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    if (!released_) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  std::filesystem::path path_;
  bool released_ = false;
};

// The version string a bzImage carries in its setup header (Documentation/x86/boot.rst).
std::string bzimage_version(const std::filesystem::path& image);

// The kernel of the cache entry `entry`, when its identity.json says it is complete. A damaged
// identity.json is an Error naming the file and the field, and saying to remove the entry.
std::optional<KernelArtifact> load_cached(const std::filesystem::path& entry);
// The kernel an entry's identity.json describes (core/json_read.hpp), its files under `entry`.
KernelArtifact cached_artifact(const JsonField& identity, const std::filesystem::path& entry);

// The cache key of a Debian packaged kernel (kernels/debian_kernel.cpp).
std::string debian_kernel_cache_key(const std::string& package);

}  // namespace abvm::kernel_build
