// The block scheduler behind Orchestrator::run (run/orchestrator.hpp): runs blocks on every lane at
// once (one lane per guest slot of each host), hands their trials over in plan order, makes the looks
// after each block, and in a pool moves a failed host's block to another host and takes a host that
// keeps failing out of the pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "run/orchestrator.hpp"

namespace abvm {

// One per Orchestrator::run call: run() is the whole session.
class BlockScheduler {
 public:
  BlockScheduler(Orchestrator& o, const ExecutionSpec& spec, TrialSink& sink, std::vector<Trial> trials,
                 const std::set<std::string>& done, const Controls& controls);

  RunSummary run();

 private:
  struct Block {
    int number = 0;
    std::vector<Trial> todo;        // its trials not done yet, in plan order
    bool dispatched = false;
    std::optional<BlockRun> run;
  };
  struct LaneWork {
    std::size_t block = 0;          // index into blocks_
    std::future<BlockRun> future;
    std::chrono::steady_clock::time_point started;
  };
  struct HostState {
    bool in_pool = true;
    int strikes = 0;                // blocks in a row that ended in an infrastructure error
    std::string why;                // why it left the pool
  };

  // Blocks of the trials from `first` on, in order of first appearance.
  void add_blocks(std::size_t first);

  bool stop_asked() const { return controls_.stop_requested && controls_.stop_requested(); }
  bool running() const;

  void loop();

  // Every idle lane of a host in the pool takes the next block not yet dispatched.
  void dispatch();

  // Takes what the lanes have finished; waits a little when none has.
  void collect();

  // Pool: a host that failed, or whose block ended in an infrastructure error, while another host
  // is in the pool: the block goes back to the queue whole, and the host leaves the pool when it is
  // unreachable or has failed kHostInfraStrikes blocks in a row. True when the block was moved.
  bool moved_to_another_host(std::size_t host, const BlockRun& run, Block& block);

  void leave_pool(std::size_t host, const std::string& why);

  std::string no_host_left() const;

  // Hands over the finished blocks that are next in plan order, and makes the looks after them.
  // After an abort (Ctrl-C, a failed host) it hands over what is complete and stops at the first
  // block that is not.
  void commit();

  // Records a block's results; false when some did not end. Trials that run one after the other
  // keep those that ended before; trials that run together are dropped together (they run again,
  // together, on --resume).
  bool hand_over(const BlockRun& run);

  // A finished trial goes to the sink, then to the ledger (only then is it done).
  void record(const TrialResult& result);

  // Tells the caller the trials running now, when they changed.
  void report_running();

  TrialProgress progress(const TrialResult* result, std::vector<Trial> running) const;

  void wait_all();

  Orchestrator& o_;
  const ExecutionSpec& spec_;
  TrialSink& sink_;
  const Controls& controls_;
  std::set<std::string> finished_;
  std::vector<std::optional<LaneWork>> lanes_;
  std::vector<HostState> hosts_;
  std::vector<Block> blocks_;
  std::size_t next_commit_ = 0;
  std::vector<double> block_seconds_;  // wall time of each block run whole in this session
  std::uint64_t live_seen_ = 0;         // o_.live()'s version last reported
  std::atomic<bool> abort_{false};
  std::exception_ptr error_;
  RunSummary summary_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace abvm
