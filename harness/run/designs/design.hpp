#pragma once
// A design's behaviour when it runs; its facts (what config, plan and verdict ask of it) are
// config/design.hpp's table. Each design is one file of this folder, registered in registry.cpp:
//   - how a block's trials meet (run_block: one after the other, at once, paced);
//   - what each guest is told (its workloads, its disks, its job: the order of the runs, the pace);
//   - which watch follows each boot.
// How a block's runs are paired and timed is the same for every design (windows.hpp, applied by
// the orchestrator once the block has run); whether a pair that did not overlap counts is the
// design's `overlap_by_intent` fact, applied by the verdict.
#include <optional>
#include <string>
#include <vector>

#include "config/design.hpp"
#include "guest/driver.hpp"
#include "guest/job.hpp"
#include "run/execution.hpp"

namespace abvm {

class GuestWatch;

// How one trial is booted.
struct TrialBoot {
  GuestWatch* watch = nullptr;   // null: a watch of its own (the clock log only)
  int first_attempt = 1;         // the number of its first boot (a paced block's later attempts)
  int attempts = 0;              // boots it may take after infrastructure errors; 0: 1 + infra_retries
};

// What a design asks of the orchestrator.
class TrialBooter {
 public:
  virtual ~TrialBooter() = default;
  // One trial on `lane`; nullopt when `stop` interrupted it. Does not touch the ledger or the sink.
  virtual std::optional<TrialResult> run_trial(const Trial& trial, const Lane& lane, const StopRequest& stop,
                                               const TrialBoot& boot) = 0;
  // The trial's boot `attempt` is void (`why`): its console is kept as that attempt's, and the
  // reason goes with the trial's next result.
  virtual void set_aside(const Trial& trial, int attempt, const std::string& why) = 0;
};

class BlockDesign {
 public:
  virtual ~BlockDesign() = default;

  // What a trial's guest measures. By default: each workload once, for the trial's side.
  virtual std::vector<TrialWorkload> workloads(const ExecutionSpec& spec, const Trial& trial) const;
  // The trial's scratch disks on `lane`. By default one, the side's: the lane's first image, or
  // its second for the block's second guest when two are alive at once.
  virtual std::vector<ScratchDisk> disks(const ExecutionSpec& spec, const Trial& trial, const Lane& lane) const;
  // The trial's job: its workloads on their disks in the default order, paced as the design's
  // facts say.
  virtual GuestJob job(const ExecutionSpec& spec, const Trial& trial, std::string nonce) const;
  // Runs the block's trials not done yet (`trials`, in plan order) on `lane`.
  virtual BlockRun run_block(TrialBooter& booter, const ExecutionSpec& spec, const std::vector<Trial>& trials,
                             const Lane& lane, const StopRequest& stop) const = 0;
};

// Every design's behaviour (registry.cpp).
const BlockDesign& block_design(Design design);

// The sequential run of a block's trials, for the designs whose trials do not meet: each trial
// once the one before has ended; after an interruption or an exception the rest do not run.
BlockRun run_one_after_another(TrialBooter& booter, const std::vector<Trial>& trials, const Lane& lane,
                               const StopRequest& stop);

}  // namespace abvm
