#include "plan/sizing.hpp"

#include <algorithm>
#include <cmath>

namespace abvm {

double sizing_multiplier(double measured_seconds, double min_seconds) {
  // google/benchmark: "if we did more than 10% of the minimum time, use the prediction; else grow 10x".
  const bool significant = measured_seconds / min_seconds > 0.1;
  return significant ? min_seconds * 1.4 / std::max(measured_seconds, 1e-9) : 10.0;
}

std::uint64_t sizing_factor(double measured_seconds, double min_seconds, std::uint64_t max_factor) {
  if (!(min_seconds > 0) || measured_seconds >= min_seconds) return 1;
  const double multiplier = sizing_multiplier(measured_seconds, min_seconds);
  const auto factor = std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::ceil(multiplier)));
  return std::min(factor, std::max<std::uint64_t>(1, max_factor));
}

}  // namespace abvm
