#pragma once
// How much longer a run must be to take a minimum time, as google/benchmark sizes its iterations
// (src/benchmark_runner.cc, PredictNumItersNeeded): the multiplier is 1.4 x the minimum over the
// time observed, and a run that took no more than a tenth of the minimum grows 10x at most (its
// time is too short to predict from). abvm sizes once, from the first block, and by a whole
// factor, so that both sides and every later block run the same size (run/sizing.hpp). Pure.
#include <cstdint>

namespace abvm {

// google/benchmark's multiplier for a run of `measured_seconds` to take `min_seconds`.
double sizing_multiplier(double measured_seconds, double min_seconds);

// The whole factor a run's size grows by: 1 when it took at least the minimum (or the minimum is
// 0), else the multiplier rounded up (at least 2), and never above `max_factor` (>= 1; the scratch
// disk's room).
std::uint64_t sizing_factor(double measured_seconds, double min_seconds, std::uint64_t max_factor);

}  // namespace abvm
