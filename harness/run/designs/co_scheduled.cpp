// co-scheduled: the block's A and B guests alive at once on the lane's CPUs, each run of A and its
// partner run of B in one window: one go for both, and the faster guest's filler until both are
// done (paced.hpp, Pacing::together), so the two runs meet the same moments of the host.
#include "run/designs/design.hpp"
#include "run/designs/paced.hpp"
#include "run/designs/registry.hpp"

namespace abvm {

namespace {

class CoScheduled final : public BlockDesign {
 public:
  BlockRun run_block(TrialBooter& booter, const ExecutionSpec& spec, const std::vector<Trial>& trials,
                     const Lane& lane, const StopRequest& stop) const override {
    return run_paced_block(booter, spec, trials, lane, stop, Pacing::together);
  }
};

}  // namespace

const BlockDesign& co_scheduled_design() {
  static const CoScheduled design;
  return design;
}

}  // namespace abvm
