#include "stats/random.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace abvm::stats {

std::uint64_t Random::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Random::below: n must be positive");
  // (0 - n) % n == 2^64 mod n in unsigned arithmetic.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % n;
  }
}

double Random::normal() {
  if (spare_) {
    const double z = *spare_;
    spare_.reset();
    return z;
  }
  // 1 - uniform() lies in (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(theta);
  return r * std::cos(theta);
}

}  // namespace abvm::stats
