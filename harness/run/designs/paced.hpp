#pragma once
// The host's side of a paced block (config/design.hpp Pacing::together and ::turns): the block's
// guests run each step of their jobs in a window the host opens with "go <step>" and closes with
// "stop <step>" (guests/agent/init.sh run_paced_step).
//
//   together: the go goes to every guest once all of them have said READY for the step, typed into
//     both consoles the moment the last READY arrives (the doorbell wakes both watch loops); the
//     stop once all of them have said DONE. The faster guest keeps its load going meanwhile (its
//     filler), so neither measures alone.
//   turns: the same window for one guest at a time, in the block's order, and only while every
//     other guest is quiet (waiting at its READY, or finished): no guest prints or measures while
//     another measures.
//
// Faults: a guest that does not say READY within the ready deadline of the window's opening (the
// boot timeout for the first step, the run timeout later), or not DONE within the run timeout of
// its go (it hangs, or the go was lost on the way), is given up (its boot ends as a timeout with
// that reason); a guest whose boot ends before its END record (a crash, a power-off, QEMU killed)
// is gone. Every other guest still running is then told "abort": it stops its filler, prints what
// it has, and ends. Its runs have no partner: the design makes it partner-failed and runs the
// block again (run/designs/paced.cpp, the two paced designs' one BlockDesign).
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/design.hpp"
#include "run/designs/vcpu_swap.hpp"
#include "run/designs/watch.hpp"
#include "run/execution.hpp"

namespace abvm {

class TrialBooter;

class PacedBlock {
 public:
  struct Deadlines {
    std::chrono::milliseconds first_ready;   // the first READY, from the block's start
    std::chrono::milliseconds ready;         // a later READY, from the window's opening
    std::chrono::milliseconds window;        // DONE, from the go
  };
  // `swap`: the pair's vCPU swap (together, on a lane of two CPUs), or none.
  PacedBlock(Pacing pacing, std::size_t guests, Deadlines deadlines, std::unique_ptr<VcpuSwap> swap = nullptr);
  ~PacedBlock();

  GuestWatch& guest(std::size_t k);
  // Guest k was told to abort: its partner failed.
  bool aborted(std::size_t k) const;
  // Why the block gave guest k up, if it did.
  std::optional<std::string> failure(std::size_t k) const;

 private:
  class Watch;
  struct Guest {
    long ready = -1;          // the last step it said READY for
    long done = -1;           // the last step it said DONE for
    long go = -1;             // the last step it was told to go
    bool ended = false;       // its END record came: it has nothing more to measure
    bool gone = false;        // its boot ended
    bool aborted = false;
    std::optional<std::string> failure;  // given up: why
    bool failure_taken = false;          // its watch has passed the failure on
    std::deque<std::string> words;       // to type
    std::shared_ptr<Doorbell> bell;
  };
  using Clock = std::chrono::steady_clock;

  void on_record(std::size_t k, std::string_view type, std::string_view payload);
  void on_gone(std::size_t k);
  std::string next_word(std::size_t k);
  std::optional<std::string> give_up(std::size_t k);

  // Moves the block on (under the lock): opens or closes windows, applies deadlines, aborts.
  void advance();
  bool abort_survivors();
  void open_window(const std::vector<std::size_t>& who);
  void close_window(const std::vector<std::size_t>& who);
  bool quiet(const Guest& g) const { return g.ended || g.ready > g.go; }
  void fail(std::size_t k, std::string why);
  void advance_together();
  void advance_turns();
  double waited() const { return std::chrono::duration<double>(Clock::now() - since_).count(); }
  double limit(std::chrono::milliseconds d) const { return std::chrono::duration<double>(d).count(); }

  const Pacing pacing_;
  const Deadlines deadlines_;
  const std::unique_ptr<VcpuSwap> swap_;  // before the watches: they stop it as their guests go
  mutable std::mutex mutex_;
  std::vector<Guest> guests_;
  std::vector<std::unique_ptr<Watch>> watches_;
  long step_ = 0;             // the window now
  std::size_t turn_ = 0;      // turns: the guest whose window it is
  bool open_ = false;         // the window is open (its go was given)
  Clock::time_point since_ = Clock::now();  // when the current wait began
};


}  // namespace abvm
