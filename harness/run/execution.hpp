#pragma once
// What an experiment's execution is made of, for the orchestrator (run/orchestrator.hpp) and the
// designs' behaviour (run/designs/): what each side boots, the lanes blocks run on, the spec of the
// whole execution, and how one block's trials ended.
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "guest/driver.hpp"
#include "guest/job.hpp"
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
  Design design = Design::sequential_blocks;  // its behaviour: run/designs/
  std::chrono::milliseconds boot_timeout{60000};
  std::chrono::milliseconds run_timeout{120000};  // per run, warm-ups included
  // A co-scheduled pair on two CPUs trades them this often (run/designs/vcpu_swap.hpp); 0: never.
  std::chrono::milliseconds vcpu_swap{10};
  int infra_retries = 1;                // extra boots after an infra-error, per trial (per block when paced)
  std::uint64_t console_limit = std::uint64_t{64} << 20;  // console bytes kept per trial (DomainSpec)
  bool keep_initrd = false;             // debugging: keep trials/<id>/initrd.img

  const SideBoot& side(Side id) const { return id == Side::a ? a : b; }
};

// How a block's trials ended: results in the trials' order, nullopt for one that did not end
// (stop_requested() interrupted it, or an exception came first); `error` is the first exception
// (an unusable driver), taken so that the trials done before it are not lost.
struct BlockRun {
  std::vector<std::optional<TrialResult>> results;
  std::exception_ptr error;
};

// Polled before each trial and while a guest runs: true destroys the running guest.
using StopRequest = std::function<bool()>;

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


}  // namespace abvm
