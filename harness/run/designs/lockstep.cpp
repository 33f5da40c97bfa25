// lockstep: the block's two guests alive at once, their runs taking turns: A's run k, then B's
// run k, each in a window of its own that opens only while the other guest is quiet (paced.hpp,
// Pacing::turns), so the two never compete for the CPU while they measure.
#include "run/designs/design.hpp"
#include "run/designs/paced.hpp"
#include "run/designs/registry.hpp"

namespace abvm {

namespace {

class Lockstep final : public BlockDesign {
 public:
  BlockRun run_block(TrialBooter& booter, const ExecutionSpec& spec, const std::vector<Trial>& trials,
                     const Lane& lane, const StopRequest& stop) const override {
    return run_paced_block(booter, spec, trials, lane, stop, Pacing::turns);
  }
};

}  // namespace

const BlockDesign& lockstep_design() {
  static const Lockstep design;
  return design;
}

}  // namespace abvm
