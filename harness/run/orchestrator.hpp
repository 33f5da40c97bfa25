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
#include <set>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "guest/driver.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "run/trial.hpp"

namespace abvm {

// What one side boots, prepared once before the first trial.
struct SideBoot {
  std::string label;
  std::filesystem::path kernel;
  std::string cmdline;                  // the whole kernel command line
  std::string modules_archive;          // guest/modules archive; empty when virtio is built in
  MachineOptions machine;
  VirtioBlkOptions disk;
  SideExpectation expect;               // what its guests must report (run/trial.hpp check_side)
};

// Where blocks run, one at a time (see the header).
struct Lane {
  std::string name;                     // "cpu 0": in notes and in each trial's result.json
  std::size_t host = 0;                 // index of its host (Orchestrator's hosts)
  std::string host_cpus;                // every guest's host CPU set (DomainSpec::host_cpus), "" unpinned
  Accelerator accelerator = Accelerator::tcg;  // its host's (each host is probed on its own)
  // The lane's scratch images: [0] for the block's first trial (or first side), [1] for the
  // second guest (co-scheduled, lockstep) or the second side's disk (same-guest). The plan draws
  // each block's order, so which side gets which image is random per block. Empty: no disk.
  std::vector<std::filesystem::path> scratch;
};

// A host blocks run on: its name (the journal's "host") and its driver.
struct HostDriver {
  std::string name;
  GuestDriver* driver = nullptr;
};

struct ExecutionSpec {
  std::filesystem::path results_dir;
  std::filesystem::path base_image;     // the guest image (gzip cpio), see guest/image.hpp
  SideBoot a, b;
  std::vector<Workload> workloads;
  std::vector<Lane> lanes{Lane{}};      // at least one
  // co_scheduled, lockstep: the trials of one block run at the same time (one thread each);
  // same_guest: a block is one trial measuring both sides.
  Design design = Design::sequential_blocks;
  std::chrono::milliseconds boot_timeout{60000};
  std::chrono::milliseconds run_timeout{120000};  // per run, warm-ups included
  int infra_retries = 1;                // extra boots after an infra-error, per trial
  std::uint64_t console_limit = std::uint64_t{64} << 20;  // console bytes kept per trial (DomainSpec)
  bool keep_initrd = false;             // debugging: keep trials/<id>/initrd.img

  const SideBoot& side(Side id) const { return id == Side::a ? a : b; }
};

// What a trial boots on `lane`: the domain of its side (both sides' disks in same-guest), its
// files in the results directory (results/directory.hpp TrialFiles). --dry-run shows the XML of
// the very same spec.
DomainSpec trial_domain(const ExecutionSpec& spec, const Trial& trial, const Lane& lane);

// What a trial's guest measures: each workload once for the trial's side, or once per side in
// same-guest (named side_workload_name(), the first side's disk vda).
std::vector<TrialWorkload> trial_workloads(const ExecutionSpec& spec, const Trial& trial);

// The job a trial's guest runs (guest/job.hpp): its workloads on their disks, in the design's
// order (same-guest alternates the sides run by run: first, other, other, first, ...), in lockstep
// for the lockstep design.
GuestJob trial_job(const ExecutionSpec& spec, const Trial& trial, std::string nonce);

// The time one trial may take: the boot timeout plus the run timeout for every run it makes.
std::chrono::milliseconds trial_timeout(const ExecutionSpec& spec);

// What the caller is told after each trial (for progress lines).
struct TrialProgress {
  const TrialResult* result = nullptr;
  std::size_t done = 0;                 // trials done, including earlier sessions (resume)
  std::size_t total = 0;                // trials known now (grows when the plan is extended)
  double session_seconds = 0;           // wall time of this session so far
  double mean_trial_seconds = 0;        // over this session's trials (host wall clock)
};

enum class BlockDecision { go_on, stop };

struct Controls {
  // Polled before each trial and while a guest runs: true destroys the running guest, drops
  // that unfinished trial (it is run again on --resume) and returns.
  std::function<bool()> stop_requested;
  // Called when the trial is about to start (side, id).
  std::function<void(const Trial&, std::size_t done, std::size_t total)> on_trial_start;
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
};

// Watches one trial's guest while it runs and may type into its console (the lockstep design's
// turns). Called from the trial's own thread.
class GuestWatch {
 public:
  virtual ~GuestWatch() = default;
  virtual void attempt_started(const std::string& nonce) = 0;  // a boot of the trial begins
  virtual void console(std::string_view text) = 0;            // the whole console so far
  virtual std::string input() = 0;                            // bytes to type now, "" for none
  virtual void attempt_ended() = 0;                           // that boot is gone
  // What the host saw of the last boot's runs (lockstep: each go and the run's end), kept in
  // the trial's result.json.
  virtual std::vector<LockstepTurn> turns() { return {}; }
};

class Orchestrator {
 public:
  // Every lane on one host.
  Orchestrator(GuestDriver& driver, ExecutionSpec spec, TrialSink& sink);
  Orchestrator(std::vector<HostDriver> hosts, ExecutionSpec spec, TrialSink& sink);

  // Runs `trials` block by block on the lanes, skipping ids in `done`. Writes trials/<id>/ and
  // the ledger (results_dir/trials.jsonl) as each block is handed over, in plan order.
  // Exceptions from the driver (an unusable connection) and from the sink propagate once every
  // lane has stopped; the trials not yet handed over then are not in the ledger.
  RunSummary run(std::vector<Trial> trials, const std::set<std::string>& done, const Controls& controls);

  // One trial on `lane`, with the bounded infra-error retry; does not touch the ledger or the
  // sink. Returns nullopt when stop_requested() interrupted it. `watch` (may be null) follows
  // every boot of it.
  std::optional<TrialResult> run_trial(const Trial& trial, const Lane& lane, const std::function<bool()>& stop_requested,
                                       GuestWatch* watch = nullptr);

  // How a block's trials ended: results in the trials' order, nullopt for one that did not end
  // (stop_requested() interrupted it, or an exception came first); `error` is the first
  // exception (an unusable driver), taken so that the trials done before it are not lost.
  struct BlockRun {
    std::vector<std::optional<TrialResult>> results;
    std::exception_ptr error;
  };

  std::size_t hosts() const { return hosts_.size(); }
  const std::string& host_name(std::size_t host) const { return hosts_[host].name; }

  // The trials of one block on `lane`, as the design says: one after the other, or at the same
  // time (one thread each, in lockstep when the design asks).
  BlockRun run_block(const std::vector<Trial>& trials, const Lane& lane, const std::function<bool()>& stop_requested);

 private:
  BlockRun run_together(const std::vector<Trial>& batch, const Lane& lane, const std::function<bool()>& stop_requested);

  std::vector<HostDriver> hosts_;
  ExecutionSpec spec_;
  TrialSink& sink_;
};

}  // namespace abvm
