#include "core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace abvm {
namespace {

void write_all(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InfraError(path.string() + ": cannot write: " + std::strerror(errno));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The bytes of `path` from `offset` on, read into a string sized from fstat at once (a 1M-line
// input grew a stringstream by doubling, and copied it out: 14 % of a 2 x 1M analyze's CPU). A file
// whose size the kernel does not know (/proc's, pipes) grows the string as it is read.
std::string read_from(const std::filesystem::path& path, std::uintmax_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const auto size = sized ? static_cast<std::uintmax_t>(st.st_size) : 0;
  if (sized && size < offset) {
    throw Error(path.string() + ": holds " + std::to_string(size) + " bytes, fewer than the " +
                std::to_string(offset) + " read before: it was replaced or truncated");
  }
  if (offset > 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    throw Error(path.string() + ": cannot seek to byte " + std::to_string(offset) + ": " + std::strerror(errno));
  }
  std::string out(sized ? size - offset + 1 : 4096, '\0');  // +1: EOF is seen without a second allocation
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) out.resize(out.size() * 2);
    const ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return out;
}

}  // namespace

std::string read_file(const std::filesystem::path& path) { return read_from(path, 0); }

std::string read_file_from(const std::filesystem::path& path, std::uintmax_t offset) {
  return read_from(path, offset);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  // Every message names `path`, the file the caller asked for, not only its temporary file.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    throw InfraError(path.string() + ": cannot write (its temporary file " + tmp.filename().string() +
                     " cannot be created): " + std::strerror(err));
  }
  try {
    write_all(fd, content, path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw InfraError(path.string() + ": cannot rename into place: " + std::strerror(err));
  }
}

void append_line_durable(const std::filesystem::path& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw InfraError(path.string() + ": cannot open for append: " + std::strerror(errno));
  std::string buf(line);
  buf.push_back('\n');
  try {
    write_all(fd, buf, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    throw InfraError(path.string() + ": cannot flush: " + std::strerror(err));
  }
  ::close(fd);
}

}  // namespace abvm
