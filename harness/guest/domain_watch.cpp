#include "guest/domain_watch.hpp"

#include <libvirt/virterror.h>

#include <algorithm>
#include <fmt/format.h>
#include <string_view>
#include <thread>

#include "guest/libvirt_connection.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/records.hpp"

namespace abvm {
namespace {

using Clock = std::chrono::steady_clock;

// The caller has what it waits for, or the guest printed more than its limit (hostile or
// broken: it is stopped now).
bool satisfied(const WatchedGuest& g) { return g.console.cut() || g.hooks.done(g.console.so_far()); }

// The most a pty holds for its reader, and so the most of a stream's end its hangup can spoil
// (a 64 KiB tty buffer and the line discipline's 4 KiB, with room to spare).
constexpr std::size_t kPtyHoldsAtMost = std::size_t{256} << 10;

// The guest has stopped (QEMU exited). The stream ends once libvirt has passed on what it read
// of the pty, but a pty that hangs up discards what it still held, and here it was even seen to
// hand over the end of a burst with a byte missing (console_stream.hpp). QEMU's copy has every
// byte QEMU sent: when the console so far does not satisfy the caller, the copy replaces it,
// provided the two agree on all but the last bytes a pty can hold (a copy that differs earlier
// is not this console: a log its writer rotated).
void complete_console(WatchedGuest& g) {
  g.stream.drain(std::chrono::milliseconds(2000));
  if (satisfied(g)) return;
  const auto copy = g.console_copy();
  if (!copy) return;
  const std::string_view seen = g.console.so_far(), full = *copy;
  const auto agree = static_cast<std::size_t>(std::mismatch(seen.begin(), seen.end(), full.begin(), full.end()).first -
                                              seen.begin());
  if (full.size() > agree && seen.size() - agree <= kPtyHoldsAtMost) g.stream.replace(full);
}

// The domain is no longer active (`active` from virDomainIsActive, just now): says why in
// outcome.end and outcome.detail.
void record_stop(WatchedGuest& g, int active, GuestOutcome& outcome) {
  // A transient domain disappears when its QEMU exits: "no domain" is the normal way to end.
  if (active < 0 && libvirt_error_code() != VIR_ERR_NO_DOMAIN) {
    const std::string why = libvirt_error();
    outcome.end = GuestOutcome::End::infra_error;
    if (virConnectIsAlive(g.conn) != 1) {
      // Its QEMU may run on under a daemon that comes back: the next trial destroys it.
      g.lost_domains.push_back(g.spec.name);
      outcome.detail = fmt::format("the connection to libvirt ('{}') was lost while domain {} ran: {}",
                                   g.uri, g.spec.name, why);
    } else {
      outcome.detail = fmt::format("libvirt lost track of domain {}: {}", g.spec.name, why);
    }
    return;
  }
  complete_console(g);
  if (satisfied(g)) {
    outcome.end = GuestOutcome::End::finished;
  } else if (find_kernel_panic(g.console.so_far()) != std::string_view::npos) {
    outcome.end = GuestOutcome::End::crashed;
    outcome.detail = "kernel panic (see the console log)";
  } else if (g.events.stop_detail(std::chrono::milliseconds(1000)) == VIR_DOMAIN_EVENT_STOPPED_FAILED) {
    // Not the kernel's doing: a fresh boot is a fair replacement (bounded by infra_retries).
    outcome.end = GuestOutcome::End::infra_error;
    outcome.detail = fmt::format(
        "QEMU of domain {} ended unexpectedly (killed, or it crashed) while the guest ran; see {}", g.spec.name,
        is_embedded(g.uri) ? (LibvirtDriver::embedded_root() / "log" / "qemu" / (g.spec.name + ".log")).native()
                           : std::string("libvirt's QEMU log of the domain on that host"));
  } else {
    outcome.end = GuestOutcome::End::powered_off;
    outcome.detail = "the guest ended before its work was seen complete";
  }
}

}  // namespace

void watch_guest(WatchedGuest& g, Clock::time_point deadline, std::chrono::milliseconds timeout,
                 GuestOutcome& outcome) {
  for (;;) {
    if (g.stream.read_more() && satisfied(g)) {
      outcome.end = GuestOutcome::End::finished;
      return;
    }
    if (g.hooks.input) {
      if (const std::string in = g.hooks.input(); !in.empty()) g.stream.type(in);
    }
    if (g.hooks.give_up) {
      if (auto why = g.hooks.give_up()) {
        outcome.end = GuestOutcome::End::timeout;
        outcome.detail = std::move(*why);
        return;
      }
    }
    const int active = virDomainIsActive(g.dom);
    if (active != 1) {
      record_stop(g, active, outcome);
      return;
    }
    if (g.stream.ended() && !g.stream.error().empty()) {
      // A QEMU that dies closes its console up to ~0.2 s before libvirt marks the domain stopped
      // (HostFaultsE2ETest.QemuKilledOnEveryAttempt... met it once in 8 runs): give the stop
      // event its moment, so that a killed QEMU is named as what it was.
      if (g.events.stop_detail(std::chrono::milliseconds(2000)) >= 0) {
        if (const int now = virDomainIsActive(g.dom); now != 1) {
          record_stop(g, now, outcome);
          return;
        }
      }
      outcome.end = GuestOutcome::End::infra_error;
      outcome.detail = fmt::format("the console of domain {} on '{}' failed while the guest ran: {}", g.spec.name,
                                   g.uri, g.stream.error());
      return;
    }
    if (Clock::now() >= deadline) {
      outcome.end = GuestOutcome::End::timeout;
      outcome.detail = fmt::format("no end within {:.1f} s", std::chrono::duration<double>(timeout).count());
      return;
    }
    if (g.hooks.bell) {
      g.hooks.bell->wait(std::chrono::milliseconds(25));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
}

}  // namespace abvm
