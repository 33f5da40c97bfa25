#pragma once
// Executes trials through a GuestDriver: per trial, build the job archive and the initrd, boot,
// wait for the end record or the timeout, classify, save the artifacts, hand the result to the
// sink, and only then mark the trial done in the ledger (results/directory.hpp).
//
// The orchestrator knows nothing of kernel builds, dd or fio output, or statistics: the runner
// (run/runner.hpp) prepares what each side boots (SideBoot), turns results into journal lines
// (TrialSink), and decides about sequential stopping (Controls::at_block_end / extend).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "guest/driver.hpp"
#include "guest/image.hpp"
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

struct ExecutionSpec {
  std::filesystem::path results_dir;
  std::filesystem::path base_image;     // the guest image (gzip cpio), see guest/image.hpp
  SideBoot a, b;
  std::vector<Workload> workloads;
  std::filesystem::path scratch_disk;   // empty: no disk
  // co_scheduled: the disk of the second trial of each block (its first is on scratch_disk).
  // The plan draws each block's order, so which side gets which image is random per block.
  std::filesystem::path second_scratch_disk;
  Accelerator accelerator = Accelerator::tcg;
  // co_scheduled: the trials of one block run at the same time (one thread each), and only when
  // the whole block has ended are they handed to the sink and the ledger, in plan order.
  Design design = Design::sequential_blocks;
  std::string host_cpus;                // every guest's host CPU set (DomainSpec::host_cpus)
  std::chrono::milliseconds boot_timeout{60000};
  std::chrono::milliseconds run_timeout{120000};  // per run, warm-ups included
  int infra_retries = 1;                // extra boots after an infra-error, per trial
  std::uint64_t console_limit = std::uint64_t{64} << 20;  // console bytes kept per trial (DomainSpec)
  bool keep_initrd = false;             // debugging: keep trials/<id>/initrd.img

  const SideBoot& side(Side id) const { return id == Side::a ? a : b; }
};

// What a trial boots: the domain of its side, its files in the results directory
// (results/directory.hpp TrialFiles). --dry-run shows the XML of the very same spec.
DomainSpec trial_domain(const ExecutionSpec& spec, const Trial& trial);

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
};

struct RunSummary {
  std::size_t ran = 0;                  // trials run in this session
  std::size_t skipped = 0;              // already done (resume)
  bool interrupted = false;             // stop_requested() ended the run
  bool stopped_early = false;           // at_block_end said stop
  std::vector<Trial> trials;       // every trial known at the end (extensions included)
};

class Orchestrator {
 public:
  Orchestrator(GuestDriver& driver, ExecutionSpec spec, TrialSink& sink);

  // Runs `trials` in order, skipping ids in `done`. Writes trials/<id>/ and the ledger
  // (results_dir/trials.jsonl) as each trial ends. Exceptions from the driver (an unusable
  // connection) and from the sink propagate; the trial then is not in the ledger.
  RunSummary run(std::vector<Trial> trials, const std::set<std::string>& done, const Controls& controls);

  // One trial, with the bounded infra-error retry; does not touch the ledger or the sink.
  // Returns nullopt when stop_requested() interrupted it.
  std::optional<TrialResult> run_trial(const Trial& trial, const std::function<bool()>& stop_requested);

  // The trials of `batch` at the same time (co-scheduled blocks), results in batch order; the
  // driver must take concurrent run_guest calls.
  std::vector<std::optional<TrialResult>> run_together(const std::vector<Trial>& batch,
                                                       const std::function<bool()>& stop_requested);

 private:
  GuestDriver& driver_;
  ExecutionSpec spec_;
  TrialSink& sink_;
};

}  // namespace abvm
