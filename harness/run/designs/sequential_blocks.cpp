// sequential-blocks: one guest at a time, the block's A and B boots one after the other. The
// isolation reference: no guest ever shares the host with another.
#include "run/designs/design.hpp"

namespace abvm {

namespace {

class SequentialBlocks final : public BlockDesign {
 public:
  BlockRun run_block(TrialBooter& booter, const ExecutionSpec&, const std::vector<Trial>& trials, const Lane& lane,
                     const StopRequest& stop) const override {
    return run_one_after_another(booter, trials, lane, stop);
  }
};

}  // namespace

const BlockDesign& sequential_blocks_design() {
  static const SequentialBlocks design;
  return design;
}

}  // namespace abvm
