#include "kernels/cache_entry.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <iostream>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/process.hpp"

namespace fs = std::filesystem;

namespace abvm::kernel_build {

void say(const KernelBuildOptions& options, std::string_view line) {
  if (options.progress) {
    options.progress(line);
  } else {
    std::cerr << "abvm: kernel: " << line << '\n';
  }
}

fs::path cache_root(const KernelBuildOptions& options) {
  return options.cache_dir ? *options.cache_dir : abvm_cache_dir() / "kernels";
}

std::string first_word(const std::string& s) { return s.substr(0, s.find_first_of(" \t\n")); }

std::string sha256_text(const std::string& text) {
  return first_word(run_checked({"sha256sum"}, {.stdin_data = text}));
}

std::string sha256_file(const fs::path& path) { return first_word(run_checked({"sha256sum", path.string()})); }

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string tail_lines(const std::string& text, std::size_t n) {
  std::size_t pos = text.size();
  while (pos > 0 && text[pos - 1] == '\n') --pos;
  std::size_t end = pos;
  for (std::size_t i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  std::string out = text.substr(pos, end - pos);
  if (!out.empty() && out[0] == '\n') out.erase(0, 1);
  return out;
}

FileLock::FileLock(const fs::path& path) {
  fs::create_directories(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(fmt::format("{}: cannot open lock file: {}", path.string(), std::strerror(errno)));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) throw InfraError(fmt::format("{}: flock: {}", path.string(), std::strerror(errno)));
  }
}

FileLock::~FileLock() { ::close(fd_); }

// The version string a bzImage carries in its setup header (Documentation/x86/boot.rst:
// kernel_version at 0x20e is an offset from 0x200 to a NUL-terminated string), e.g.
// "6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian ...".
std::string bzimage_version(const fs::path& image) {
  std::string data = read_file(image);
  if (data.size() < 0x210 || data.compare(0x202, 4, "HdrS") != 0) {
    throw Error(fmt::format("{}: not an x86 bzImage (no HdrS setup header)", image.string()));
  }
  auto offset = static_cast<std::size_t>(static_cast<unsigned char>(data[0x20e]) |
                                         (static_cast<unsigned char>(data[0x20f]) << 8)) + 0x200;
  if (offset >= data.size()) throw Error(fmt::format("{}: bzImage version offset out of range", image.string()));
  return std::string(data.c_str() + offset);
}

KernelArtifact cached_artifact(const JsonField& id, const fs::path& entry) {
  KernelArtifact a;
  a.image = entry / id.required<std::string>("image");
  if (const auto modules = id.optional<std::string>("modules_dir")) a.modules_dir = entry / *modules;
  a.release = id.required<std::string>("release");
  a.recipe = id.required<std::string>("recipe");
  a.identity = id.json();
  a.cache_hit = true;
  return a;
}

std::optional<KernelArtifact> load_cached(const fs::path& entry) {
  fs::path identity_file = entry / "identity.json";
  if (!fs::exists(identity_file)) return std::nullopt;
  const JsonDocument doc = JsonDocument::read(
      identity_file, fmt::format("the kernel cache entry is damaged: remove {} and abvm builds it again", entry.string()));
  return cached_artifact(doc.root(), entry);
}

}  // namespace abvm::kernel_build
