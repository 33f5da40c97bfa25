#include "run/designs/design.hpp"

#include <algorithm>

namespace abvm {

std::vector<TrialWorkload> BlockDesign::workloads(const ExecutionSpec& spec, const Trial& trial) const {
  std::vector<TrialWorkload> out;
  for (const auto& w : spec.workloads) {
    out.push_back({.workload = w.name, .report_name = w.name, .side = trial.side, .disk_serial = "abvm-scratch",
                   .repetitions = w.repetitions});
  }
  return out;
}

std::vector<ScratchDisk> BlockDesign::disks(const ExecutionSpec& spec, const Trial& trial, const Lane& lane) const {
  if (lane.scratch.empty()) return {};
  // Two guests at once each write to an image of their own: the block's second trial (its
  // position within the block) takes the second.
  const bool second_of_block = traits(spec.design).guests_at_once && trial.position % 2 == 1;
  const std::size_t k = std::min<std::size_t>(second_of_block ? 1 : 0, lane.scratch.size() - 1);
  return {ScratchDisk{.path = lane.scratch[k], .options = spec.side(trial.side).disk}};
}

GuestJob BlockDesign::job(const ExecutionSpec& spec, const Trial& trial, std::string nonce) const {
  const DesignTraits& t = traits(spec.design);
  GuestJob job{.trial_id = trial.id, .nonce = std::move(nonce), .pace = t.pacing, .fill = t.filler};
  // A paced guest waits for its partner's boot and a whole run of it between two words of the
  // host; a dead abvm leaves it waiting no longer than that.
  job.wait_seconds = static_cast<int>(
      std::chrono::ceil<std::chrono::seconds>(spec.boot_timeout + 2 * spec.run_timeout).count());
  for (const auto& w : spec.workloads) job.workloads.push_back({.workload = w});
  if (!trial.workload_order.empty()) {
    for (const int w : trial.workload_order) {
      const Workload& work = spec.workloads.at(static_cast<std::size_t>(w));
      for (int k = 0; k < work.warmup; ++k) job.steps.push_back({.workload = static_cast<std::size_t>(w), .warmup = true, .index = k});
      for (int k = 0; k < work.repetitions; ++k) job.steps.push_back({.workload = static_cast<std::size_t>(w), .index = k});
    }
  }
  return job;
}

BlockRun run_one_after_another(TrialBooter& booter, const std::vector<Trial>& trials, const Lane& lane,
                               const StopRequest& stop) {
  BlockRun out;
  for (const Trial& t : trials) {
    if (out.error || (!out.results.empty() && !out.results.back())) {
      out.results.push_back(std::nullopt);
      continue;
    }
    try {
      out.results.push_back(booter.run_trial(t, lane, stop, {}));
    } catch (...) {
      out.results.push_back(std::nullopt);
      out.error = std::current_exception();
    }
  }
  return out;
}

}  // namespace abvm
