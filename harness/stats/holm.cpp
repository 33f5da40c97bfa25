#include "stats/holm.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace abvm::stats {

std::vector<double> holm_adjust(std::span<const double> p) {
  for (double v : p) {
    if (!(v >= 0 && v <= 1)) throw std::invalid_argument("Holm adjustment: p-values must lie in [0, 1]");
  }
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t j = 0; j < m; ++j) {
    const double scaled = std::min(1.0, static_cast<double>(m - j) * p[order[j]]);
    running = std::max(running, scaled);
    adjusted[order[j]] = running;
  }
  return adjusted;
}

}  // namespace abvm::stats
