#pragma once
// Executes trials through a GuestDriver: per trial, build the job archive and the initrd, boot,
// wait for the end record or the timeout, classify, save the artifacts, hand the result to the
// sink, and only then mark the trial done in the ledger (results/directory.hpp).
//
// The orchestrator knows nothing of kernel builds, dd or fio output, or statistics: the runner
// (run/runner.hpp) prepares what each side boots (SideBoot), turns results into journal lines
// (TrialSink), and decides about sequential stopping (Controls::at_block_end / extend).
//
// Blocks run on lanes: a lane is a host's driver, the host CPUs its guests are pinned to and its
// own scratch images, and it runs one block at a time; the lanes run their blocks at the same
// time. Whatever order blocks finish in, their trials reach the sink and the ledger in plan
// order, from the calling thread, so a look after block k sees exactly blocks 0..k.
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "guest/driver.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "run/designs/design.hpp"
#include "run/execution.hpp"
#include "run/trial.hpp"

namespace abvm {

// What the caller is told when a trial is handed over and when the trials running change (for
// progress lines).
struct TrialProgress {
  const TrialResult* result = nullptr;  // the trial handed over; null when only `running` changed
  std::vector<Trial> running;           // the trials whose guests run now, in the order they started
  std::size_t done = 0;                 // trials done, including earlier sessions (resume)
  std::size_t total = 0;                // trials known now (grows when the plan is extended)
  double session_seconds = 0;           // wall time of this session so far
  // From this session's measured block times (run/progress.hpp estimate_remaining); unknown
  // until a block has ended.
  std::optional<double> remaining_seconds;
};

// The trials whose guests run now: told by the threads that run them (Orchestrator::run_trial),
// read by the thread that shows them.
class LiveTrials {
 public:
  void begin(const Trial& trial);
  void end(const std::string& id);
  std::vector<Trial> now() const;
  // The trials running now when they changed since `seen` (which it updates); nullopt if not.
  std::optional<std::vector<Trial>> changed(std::uint64_t& seen) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Trial> live_;
  std::uint64_t version_ = 0;
};

enum class BlockDecision { go_on, stop };

struct Controls {
  // Polled before each trial and while a guest runs: true destroys the running guest, drops
  // that unfinished trial (it is run again on --resume) and returns.
  std::function<bool()> stop_requested;
  // Called when the trials running change: a guest's trial starts or ends (seen within a poll of
  // the lanes, about 20 ms), from the calling thread. Never for a trial that has not started: a
  // sequential block's second trial is running only once its first has ended.
  std::function<void(const TrialProgress&)> on_running;
  // Called when a trial is handed over (to the sink and the ledger: done), in plan order.
  std::function<void(const TrialProgress&)> on_trial_end;
  // Called after the last trial of block `block` is done (the block is complete). `stop` ends
  // the run early (a sequential-stopping decision).
  std::function<BlockDecision(int block)> at_block_end;
  // Called when every trial is done: more trials to run (a plan extended deterministically), or
  // none to finish.
  std::function<std::vector<Trial>()> extend;
  // A line the user must see: a host taken out of the pool, a block moved to another host.
  std::function<void(const std::string&)> note;
};

// A pool of hosts: a host whose driver fails (unreachable: InfraError) is taken out of the pool at
// once, and one whose blocks end in infrastructure errors this many times in a row too; its block
// goes to another host, whole (a block's A and B stay on one host), and counts once.
inline constexpr int kHostInfraStrikes = 2;

struct RunSummary {
  std::size_t ran = 0;                  // trials run in this session
  std::size_t skipped = 0;              // already done (resume)
  bool interrupted = false;             // stop_requested() ended the run
  bool stopped_early = false;           // at_block_end said stop
  std::vector<Trial> trials;       // every trial known at the end (extensions included)
  std::vector<double> trial_seconds;  // what each trial run in this session took, in the ledger's order
};

class Orchestrator final : public TrialBooter {
 public:
  // Every lane on one host.
  Orchestrator(GuestDriver& driver, ExecutionSpec spec, TrialSink& sink);
  Orchestrator(std::vector<HostDriver> hosts, ExecutionSpec spec, TrialSink& sink);

  // Runs `trials` block by block on the lanes, skipping ids in `done`. Writes trials/<id>/ and
  // the ledger (results_dir/trials.jsonl) as each block is handed over, in plan order.
  // Exceptions from the driver (an unusable connection) and from the sink propagate once every
  // lane has stopped; the trials not yet handed over then are not in the ledger.
  RunSummary run(std::vector<Trial> trials, const std::set<std::string>& done, const Controls& controls);

  // One trial on `lane`, with the bounded infra-error retry (or the boots `boot` allows), its runs
  // timed on the host's clock (run/designs/windows.hpp); does not touch the ledger, the sink or
  // result.json. Returns nullopt when `stop` interrupted it.
  std::optional<TrialResult> run_trial(const Trial& trial, const Lane& lane, const StopRequest& stop,
                                       const TrialBoot& boot = {}) override;
  void set_aside(const Trial& trial, int attempt, const std::string& why) override;

  std::size_t hosts() const { return hosts_.size(); }
  const std::string& host_name(std::size_t host) const { return hosts_[host].name; }
  const LiveTrials& live() const { return live_; }

  // The trials of one block on `lane`, as the design says (run/designs/), then each run paired
  // with its partner run and each trial's result.json and run outputs saved.
  BlockRun run_block(const std::vector<Trial>& trials, const Lane& lane, const StopRequest& stop);

 private:
  std::vector<std::string> take_set_aside(const std::string& trial);
  void save(const TrialResult& result);

  std::vector<HostDriver> hosts_;
  ExecutionSpec spec_;
  TrialSink& sink_;
  std::mutex set_aside_mutex_;
  std::map<std::string, std::vector<std::string>> set_aside_;  // trial -> why its earlier boots are void
  LiveTrials live_;
};

}  // namespace abvm
