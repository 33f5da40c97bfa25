// Every design's behaviour. A design is registered here alone: its entry point's declaration (the
// function its file defines, called from nowhere else) and its case.
#include "run/designs/design.hpp"

namespace abvm {

const BlockDesign& sequential_blocks_design();  // sequential_blocks.cpp
const BlockDesign& paced_design();              // paced.cpp: co-scheduled and lockstep, told apart by pacing
const BlockDesign& same_guest_design();         // same_guest.cpp

// A switch without a default: a design added to config/design.hpp and missing here does not compile
// quietly (-Wswitch, an error with -Werror).
const BlockDesign& block_design(Design design) {
  switch (design) {
    case Design::sequential_blocks: return sequential_blocks_design();
    case Design::co_scheduled: return paced_design();
    case Design::lockstep: return paced_design();
    case Design::same_guest: return same_guest_design();
  }
  return sequential_blocks_design();  // not reached: every design is a case
}

}  // namespace abvm
