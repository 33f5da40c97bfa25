#pragma once
// `abvm bisect CONFIG`: which patch of side B's series makes it slower than side A, its base.
//   abvm bisect CONFIG               confirm the whole series regresses, then bisect it; every step
//                                    an abvm run of its own (bisect/bisection.hpp)
//   abvm bisect --dry-run CONFIG     the series, the error budget, the first step's looks; boots nothing
//   abvm bisect --resume DIR         continue an interrupted bisection without rerunning finished steps
// Exit codes: 1 when the series is slower (a culprit, or the range holding it, is named), 0 when it
// is not slower by more than the margin, 4 when that could not be settled, 2 usage or input, 3
// infrastructure, 130 interrupted.
#include <CLI/CLI.hpp>

#include "cli/analyze.hpp"

namespace abvm::cli {

Command add_bisect(CLI::App& app);

}  // namespace abvm::cli
