#include "run/designs/registry.hpp"

namespace abvm {

// A switch without a default: a design added to config/design.hpp and missing here does not compile
// quietly (-Wswitch, an error with -Werror).
const BlockDesign& block_design(Design design) {
  switch (design) {
    case Design::sequential_blocks: return sequential_blocks_design();
    case Design::co_scheduled: return co_scheduled_design();
    case Design::lockstep: return lockstep_design();
    case Design::same_guest: return same_guest_design();
  }
  return sequential_blocks_design();  // not reached: every design is a case
}

}  // namespace abvm
