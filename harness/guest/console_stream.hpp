#pragma once
// A guest's serial console as a libvirt stream (virDomainOpenConsole), the same for every
// connection: the embedded driver, a local daemon, qemu+tcp://, qemu+ssh://. Output comes back
// over the connection and input goes in through it; nothing depends on a file the host writes.
//
// The serial is a pty on the host. Open the stream while the domain is still paused
// (VIR_DOMAIN_START_PAUSED) and resume it after: QEMU's pty backend drops what the guest prints
// while no one holds the pty's other end, and checks for a reader at each write, so from the
// first byte on nothing is dropped. At the other end a pty loses bytes: when QEMU exits, Linux
// hangs the pty up and discards what the reader (libvirt) had not read yet, so the last few
// hundred milliseconds of a guest that powers off right after printing can be missing from the
// stream, and the last bytes it did pass on were once seen with one missing. That is why the
// domain also has QEMU write everything the serial printed to a log (domain_xml.hpp,
// HostFiles::console_log), which the driver reads when the stream ended without what the caller
// waits for (measured: the stream alone lost a guest's last lines in 1 boot of 3; with a slow
// reader, in every boot).
#include <libvirt/libvirt.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "guest/console_cap.hpp"
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

  // Opens the first serial console of `dom`; false (and error()) when libvirt refuses.
  bool open(virConnectPtr conn, virDomainPtr dom);

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

 private:
  void keep(std::string_view piece);
  void send_pending();

  StreamHandle stream_;
  std::string name_;
  ConsoleCap& console_;
  int log_fd_ = -1;
  std::string pending_input_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace abvm
