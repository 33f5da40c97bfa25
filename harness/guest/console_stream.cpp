#include "guest/console_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "core/error.hpp"

namespace abvm {

ConsoleStream::ConsoleStream(std::string name, ConsoleCap& console, const std::filesystem::path& log_copy)
    : name_(std::move(name)), console_(console) {
  if (!log_copy.empty()) {
    log_fd_ = ::open(log_copy.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd_ < 0) {
      throw InfraError(fmt::format("cannot create console log {}: {}", log_copy.native(), std::strerror(errno)));
    }
  }
}

bool ConsoleStream::open(virConnectPtr conn, virDomainPtr dom) {
  // Non-blocking: the watch loop polls it along with the domain's state and the caller's input.
  stream_ = StreamHandle(virStreamNew(conn, VIR_STREAM_NONBLOCK));
  // "serial0" is libvirt's alias of the first serial port, the one the guest's console=ttyS0 is.
  if (stream_ && virDomainOpenConsole(dom, "serial0", stream_.get(), 0) == 0) return true;
  error_ = fmt::format("libvirt: cannot open the serial console of domain {}: {}", name_, libvirt_error());
  ended_ = true;
  return false;
}

ConsoleStream::~ConsoleStream() {
  close();
  if (log_fd_ >= 0) ::close(log_fd_);
}

void ConsoleStream::close() { stream_.reset(); }

void ConsoleStream::keep(std::string_view piece) {
  console_.add(piece);
  // The copy holds what the console keeps whole; once over the limit the caller writes the cut
  // text (guest/console_cap.hpp) and the guest is destroyed.
  if (log_fd_ < 0 || console_.cut()) return;
  while (!piece.empty()) {
    const ssize_t n = ::write(log_fd_, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw InfraError(fmt::format("cannot write the console log of domain {}: {}", name_, std::strerror(errno)));
    }
    piece.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool ConsoleStream::read_more() {
  send_pending();
  bool any = false;
  char buf[65536];
  while (!ended_ && !console_.cut()) {
    const int n = virStreamRecv(stream_.get(), buf, sizeof buf);
    if (n > 0) {
      keep(std::string_view(buf, static_cast<std::size_t>(n)));
      any = true;
    } else if (n == -2) {
      break;  // nothing more for now
    } else {
      // 0: the pty hung up (QEMU exited). -1: the connection or the daemon's end failed. The
      // stream stays open: when to close it is the owner's call (see close()).
      ended_ = true;
      if (n < 0) error_ = libvirt_error();
    }
  }
  return any;
}

void ConsoleStream::replace(std::string_view whole) {
  console_ = ConsoleCap(console_.limit());
  if (log_fd_ >= 0 && ::ftruncate(log_fd_, 0) != 0) {
    throw InfraError(fmt::format("cannot rewrite the console log of domain {}: {}", name_, std::strerror(errno)));
  }
  keep(whole);
}

void ConsoleStream::send_pending() {
  while (!pending_input_.empty() && !ended_) {
    const int n = virStreamSend(stream_.get(), pending_input_.data(), pending_input_.size());
    if (n == -2) return;  // the stream is full: the rest goes at the next call
    if (n < 0) {
      ended_ = true;
      error_ = libvirt_error();
      return;
    }
    pending_input_.erase(0, static_cast<std::size_t>(n));
  }
}

void ConsoleStream::type(std::string_view bytes) {
  pending_input_.append(bytes);
  send_pending();
}

void ConsoleStream::drain(std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!ended_ && !console_.cut() && std::chrono::steady_clock::now() < end) {
    if (!read_more()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace abvm
