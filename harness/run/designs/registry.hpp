#pragma once
// Each design file's one entry point; block_design() (design.hpp) is the only caller.
#include "run/designs/design.hpp"

namespace abvm {

const BlockDesign& sequential_blocks_design();
const BlockDesign& co_scheduled_design();
const BlockDesign& lockstep_design();
const BlockDesign& same_guest_design();

}  // namespace abvm
