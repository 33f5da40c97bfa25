#pragma once
// Watches one trial's guest while it runs, from the trial's own thread: reads its live console,
// may type into it (a paced block's go, stop and abort) and may give it up (its partner's deadline).
// Every boot has one: the base class keeps the host's view of the console's clock (HostClockLog:
// when each record line arrived, when each word was typed), which run/designs/windows.hpp maps the
// guest's clock with.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "guest/driver.hpp"
#include "run/trial.hpp"

namespace abvm {

class GuestWatch {
 public:
  virtual ~GuestWatch() = default;

  // A boot of the trial begins, its records carrying `nonce`.
  virtual void attempt_started(const std::string& nonce);
  // The whole console so far (called after each new piece).
  void console(std::string_view text);
  // What to type into the guest now ("" for nothing). One word at a time, each noted in the log.
  std::string input();
  // A reason to end the guest now, as a timeout.
  virtual std::optional<std::string> give_up() { return std::nullopt; }
  // That boot is gone.
  virtual void attempt_ended() {}
  // Rung when the watch has something to type, and by the driver when console data arrives.
  const std::shared_ptr<Doorbell>& bell() const { return bell_; }

  // What the host saw of the last boot.
  const HostClockLog& log() const { return log_; }
  // The running boot's statistics (ConsoleHooks::on_running), read just before each go and stop
  // is typed, and as an unpaced run's RUN and RUNEND arrive; the boot's end forgets it.
  void stats_reader(DomainStatsReader reader) { reader_ = std::move(reader); }
  // The running boot's vCPU placer (ConsoleHooks::on_vcpus): a co-scheduled pair swaps CPUs.
  virtual void vcpu_placer(VcpuPlacer) {}

 protected:
  // A whole new record line of this boot (unchecked: the parser decides what the records mean).
  virtual void on_record(std::uint64_t, std::string_view /*type*/, std::string_view /*payload*/) {}
  // The next word to type, "" for none.
  virtual std::string next_word() { return ""; }
  // The pair's vCPU swap, for the log of the boot that just ended.
  void note_vcpu_swap(VcpuSwapRecord record) { log_.vcpu_swap = std::move(record); }

 private:
  std::shared_ptr<Doorbell> bell_ = std::make_shared<Doorbell>();
  std::string prefix_;        // "ABVM2:<nonce>:" of the boot running now
  std::size_t scanned_ = 0;   // console bytes read (whole lines only)
  HostClockLog log_;
  DomainStatsReader reader_;
  bool next_seen_ = false;    // the last NEXT or RUN was a NEXT: its run's start is read already
};

}  // namespace abvm
