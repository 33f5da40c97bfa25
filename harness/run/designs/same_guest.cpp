// same-guest: one guest per block holds both sides' scratch disks (vda for the block's first side,
// which the plan draws) and alternates its runs between them, run by run; each run carries its side.
#include "run/designs/design.hpp"

namespace abvm {

namespace {

Side other(Side s) { return s == Side::a ? Side::b : Side::a; }

// The serial of the disk a side's runs go to.
std::string side_disk_serial(Side side) { return side == Side::a ? "abvm-scratch-a" : "abvm-scratch-b"; }

// Each workload's runs alternate between the two sides, the first side starting every other run
// (first, other, other, first, ...): a side gains nothing from its place.
// Workloads in the trial's order (as listed when it has none).
std::vector<JobStep> alternating_steps(const std::vector<Workload>& workloads, const std::vector<int>& order) {
  std::vector<std::size_t> each;
  for (const int w : order) each.push_back(static_cast<std::size_t>(w));
  for (std::size_t w = 0; order.empty() && w < workloads.size(); ++w) each.push_back(w);
  std::vector<JobStep> out;
  for (const std::size_t w : each) {
    const std::size_t first = 2 * w, second = 2 * w + 1;  // the job's two workloads of it
    for (const bool warm : {true, false}) {
      const int n = warm ? workloads[w].warmup : workloads[w].repetitions;
      for (int k = 0; k < n; ++k) {
        const bool swap = k % 2 == 1;
        out.push_back({.workload = swap ? second : first, .warmup = warm, .index = k});
        out.push_back({.workload = swap ? first : second, .warmup = warm, .index = k});
      }
    }
  }
  return out;
}

class SameGuest final : public BlockDesign {
 public:
  std::vector<TrialWorkload> workloads(const ExecutionSpec& spec, const Trial& trial) const override {
    std::vector<TrialWorkload> out;
    for (const auto& w : spec.workloads) {
      for (const Side s : {trial.side, other(trial.side)}) {
        out.push_back({.workload = w.name, .report_name = side_workload_name(w.name, s), .side = s,
                       .disk_serial = side_disk_serial(s), .repetitions = w.repetitions});
      }
    }
    return out;
  }

  std::vector<ScratchDisk> disks(const ExecutionSpec& spec, const Trial& trial, const Lane& lane) const override {
    std::vector<ScratchDisk> out;
    if (lane.scratch.empty()) return out;
    // The block's first side gets vda and the lane's first image; the plan draws which it is.
    for (std::size_t k = 0; k < 2; ++k) {
      const Side s = k == 0 ? trial.side : other(trial.side);
      out.push_back({.path = lane.scratch[std::min(k, lane.scratch.size() - 1)], .options = spec.side(s).disk,
                     .serial = side_disk_serial(s)});
    }
    return out;
  }

  GuestJob job(const ExecutionSpec& spec, const Trial& trial, std::string nonce) const override {
    GuestJob job = BlockDesign::job(spec, trial, std::move(nonce));
    job.workloads.clear();
    const auto measured = workloads(spec, trial);
    for (std::size_t i = 0; i < measured.size(); ++i) {
      job.workloads.push_back({.workload = spec.workloads[i / 2], .report_name = measured[i].report_name,
                               .disk_serial = measured[i].disk_serial});
    }
    job.steps = alternating_steps(spec.workloads, trial.workload_order);
    return job;
  }

  BlockRun run_block(TrialBooter& booter, const ExecutionSpec&, const std::vector<Trial>& trials, const Lane& lane,
                     const StopRequest& stop) const override {
    return run_one_after_another(booter, trials, lane, stop);
  }
};

}  // namespace

const BlockDesign& same_guest_design() {
  static const SameGuest design;
  return design;
}

}  // namespace abvm
