#pragma once
// A guest's serial console as a libvirt stream (virDomainOpenConsole), the same for every
// connection: the embedded driver, a local daemon, qemu+tcp://, qemu+ssh://. Output comes back
// over the connection and input goes in through it; nothing depends on a file the host writes.
//
// The serial is a pty on the host, and a pty has three ways to lose bytes, each handled here:
//   - QEMU's pty backend drops what the guest prints while no one holds the pty's other end. The
//     stream is opened while the domain is still paused (VIR_DOMAIN_START_PAUSED) and the domain
//     resumed after, and QEMU looks for a reader at each write: from the first byte on, nothing.
//   - QEMU's 16550 model, when the pty does not take a byte, waits for it to become writable a
//     few times (MAX_XMIT_RETRY, 4) and then drops the byte, silently, from its own log too
//     (measured here: a reader that paused 400 ms between reads lost a byte of a 25 KB burst in
//     3 boots of 6). So the pty is drained the moment data arrives, by a stream callback in
//     libvirt's event loop, into an inbox the watch loop empties; the caller's `done` predicate,
//     which reads the whole console, never holds the reading up.
//   - When QEMU exits, Linux hangs the pty up and discards what the reader had not read yet, so
//     the last lines of a guest that powers off right after printing them can be missing from
//     the stream (measured: in 1 boot of 3), and the last bytes it did pass on were once seen
//     with one missing. So QEMU also writes everything the serial printed to a log
//     (domain_xml.hpp, HostFiles::console_log), and the driver reads that copy when the stream
//     ended without what the caller waits for (replace()).
#include <libvirt/libvirt.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "guest/console_cap.hpp"
#include "guest/driver.hpp"
#include "guest/libvirt_handles.hpp"

namespace abvm {

class ConsoleStream {
 public:
  // A console for domain `name` kept in `console`. With a `log_copy`, what arrives is also
  // appended there while the console is within its limit (the console log of a guest whose host
  // cannot write abvm's files; created empty now, InfraError when it cannot be).
  ConsoleStream(std::string name, ConsoleCap& console, const std::filesystem::path& log_copy = {});
  ~ConsoleStream();
  ConsoleStream(const ConsoleStream&) = delete;
  ConsoleStream& operator=(const ConsoleStream&) = delete;

  // Opens the first serial console of `dom` and starts draining it, ringing `bell` (may be null)
  // whenever data arrives; false (and error()) when libvirt refuses.
  bool open(virConnectPtr conn, virDomainPtr dom, std::shared_ptr<Doorbell> bell = nullptr);
  // Hands what arrived since the last call to the console; true when anything did. Stops early
  // once the console is over its limit.
  bool read_more();
  // Queues `bytes` for the guest and sends what the stream takes now (the rest at later calls).
  void type(std::string_view bytes);
  // After the guest stopped: reads until the stream ends or `limit` passes.
  void drain(std::chrono::milliseconds limit);
  // The whole console as it reached us another way (QEMU's copy, when the pty lost its end):
  // it replaces what the stream gave, in the console and in the log copy.
  void replace(std::string_view whole);
  // Closes the stream (aborts it: a console has nothing to finish). Only while the domain runs,
  // or once libvirt is done with it: closing a console stream takes the stream's lock and then
  // the domain's console table lock, and libvirt, freeing a domain that stopped, takes them in
  // the other order (libvirt 9.0 virchrdev.c and virfdstream.c; seen here as a hang of the
  // embedded driver, and it would hang a remote daemon just the same). The destructor closes.
  void close();
  // The stream has ended (the guest's pty hung up, or an error: see error()).
  bool ended() const { return ended_; }
  const std::string& error() const { return error_; }

  struct Inbox;  // what the event loop drained and the watch loop has not taken yet

 private:
  void keep(std::string_view piece);
  void send_pending();

  StreamHandle stream_;
  std::shared_ptr<Inbox> inbox_;
  bool watching_ = false;  // the drain callback is registered
  std::string name_;
  ConsoleCap& console_;
  int log_fd_ = -1;
  std::string pending_input_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace abvm
