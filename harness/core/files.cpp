#include "core/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

}  // namespace

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  return out.str();
}

std::string read_file_from(const std::filesystem::path& path, std::uintmax_t offset) {
  if (offset == 0) return read_file(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  const auto size = static_cast<std::uintmax_t>(static_cast<std::streamoff>(in.tellg()));
  if (size < offset) {
    throw Error(path.string() + ": holds " + std::to_string(size) + " bytes, fewer than the " +
                std::to_string(offset) + " read before: it was replaced or truncated");
  }
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  return out.str();
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
