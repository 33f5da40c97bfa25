#include "guest/console_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
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

namespace {

constexpr int kReadEvents = VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP;
// The most the inbox holds before draining waits for the watch loop: a flooding guest fills no
// more memory than this beyond its console cap, and is destroyed at the cap anyway.
constexpr std::size_t kInboxLimit = std::size_t{4} << 20;

}  // namespace

struct ConsoleStream::Inbox {
  std::shared_ptr<Doorbell> bell;  // rung when data arrives (set before the callback is)
  std::mutex mutex;
  std::string data;
  bool ended = false;
  std::string error;
  bool paused = false;  // full: events are off until the watch loop has taken the data
};

namespace {

// Reads what the stream has now into `in`. 0 from the stream: the pty hung up (QEMU exited);
// -1: the connection or the daemon's end failed.
void pull(virStreamPtr st, ConsoleStream::Inbox& in) {
  char buf[65536];
  while (!in.ended && in.data.size() < kInboxLimit) {
    const int n = virStreamRecv(st, buf, sizeof buf);
    if (n == -2) return;
    if (n > 0) {
      in.data.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    in.ended = true;
    if (n < 0) in.error = libvirt_error();
  }
}

// Runs in libvirt's event loop whenever the stream has data (or ended).
void on_console_event(virStreamPtr st, int, void* opaque) {
  auto& in = **static_cast<std::shared_ptr<ConsoleStream::Inbox>*>(opaque);
  {
    std::lock_guard lock(in.mutex);
    pull(st, in);
    // An ended stream would report itself again and again (a hung-up pty stays readable).
    if (in.ended || in.data.size() >= kInboxLimit) {
      in.paused = !in.ended;
      virStreamEventUpdateCallback(st, 0);
    }
  }
  if (in.bell) in.bell->ring();
}

}  // namespace

bool ConsoleStream::open(virConnectPtr conn, virDomainPtr dom, std::shared_ptr<Doorbell> bell) {
  // Non-blocking: drained by the event loop, typed into by the watch loop.
  stream_ = StreamHandle(virStreamNew(conn, VIR_STREAM_NONBLOCK));
  // "serial0" is libvirt's alias of the first serial port, the one the guest's console=ttyS0 is.
  if (!stream_ || virDomainOpenConsole(dom, "serial0", stream_.get(), 0) < 0) {
    error_ = fmt::format("libvirt: cannot open the serial console of domain {}: {}", name_, libvirt_error());
    ended_ = true;
    return false;
  }
  inbox_ = std::make_shared<Inbox>();
  inbox_->bell = std::move(bell);
  // libvirt frees its copy of the inbox's owner when the callback is gone (maybe later, from
  // the event loop); a stream that takes no callback is polled by read_more() instead.
  auto* opaque = new std::shared_ptr<Inbox>(inbox_);
  watching_ = virStreamEventAddCallback(stream_.get(), kReadEvents, on_console_event, opaque,
                                        [](void* p) { delete static_cast<std::shared_ptr<Inbox>*>(p); }) == 0;
  if (!watching_) delete opaque;
  return true;
}

ConsoleStream::~ConsoleStream() {
  close();
  if (log_fd_ >= 0) ::close(log_fd_);
}

void ConsoleStream::close() {
  if (watching_ && stream_) virStreamEventRemoveCallback(stream_.get());
  watching_ = false;
  stream_.reset();
}

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
  if (!stream_ || !inbox_) return false;
  std::string got;
  bool resume = false;
  {
    std::lock_guard lock(inbox_->mutex);
    if (!watching_) pull(stream_.get(), *inbox_);
    got.swap(inbox_->data);
    if (inbox_->ended && !ended_) {
      ended_ = true;
      error_ = inbox_->error;
    }
    resume = inbox_->paused;
    inbox_->paused = false;
  }
  if (resume) virStreamEventUpdateCallback(stream_.get(), kReadEvents);
  if (got.empty() || console_.cut()) return false;
  keep(got);
  return true;
}

void ConsoleStream::replace(std::string_view whole) {
  console_ = ConsoleCap(console_.limit());
  if (log_fd_ >= 0 && ::ftruncate(log_fd_, 0) != 0) {
    throw InfraError(fmt::format("cannot rewrite the console log of domain {}: {}", name_, std::strerror(errno)));
  }
  keep(whole);
}

void ConsoleStream::send_pending() {
  if (!stream_) return;
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
