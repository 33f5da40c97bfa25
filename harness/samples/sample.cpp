#include "samples/sample.hpp"

namespace abvm {

const char* to_string(Side side) { return side == Side::a ? "A" : "B"; }
const char* to_string(Better better) { return better == Better::higher ? "higher" : "lower"; }

}  // namespace abvm
