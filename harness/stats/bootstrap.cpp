#include "stats/bootstrap.hpp"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/random.hpp"

namespace abvm::stats {

namespace {

std::span<const double> sorted_positive(std::span<const double> v, const char* side, std::vector<double>& store) {
  if (v.empty()) throw std::invalid_argument(std::string("bootstrap_median_ratio: no values in ") + side);
  for (double x : v) {
    if (!(std::isfinite(x) && x > 0)) {
      throw std::invalid_argument(std::string("bootstrap_median_ratio: values in ") + side +
                                  " must be finite and positive");
    }
  }
  return ascending(v, store);
}

}  // namespace

double resample_median(std::span<const double> sorted, Random& rng) {
  const std::size_t n = sorted.size();
  if (n == 0) throw std::invalid_argument("resample_median: no values");
  const std::size_t k = (n + 1) / 2;  // 1-based rank of the (lower) median
  auto at = [&](double u) {
    const auto i = static_cast<std::size_t>(std::floor(u * static_cast<double>(n)));
    return sorted[std::min(i, n - 1)];
  };
  const double u_k = boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), rng.uniform());
  const double lower = at(u_k);
  if (n % 2 == 1) return lower;
  const double v = 1.0 - rng.uniform();  // (0, 1]
  const double u_next = u_k + (1.0 - u_k) * (1.0 - std::pow(v, 1.0 / static_cast<double>(n - k)));
  return std::midpoint(lower, at(u_next));  // (a + b) / 2 unless that would overflow (values near 1e308)
}

Interval bootstrap_median_ratio(std::span<const double> x, std::span<const double> y, double confidence,
                                std::uint64_t seed, std::size_t resamples) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("bootstrap_median_ratio: confidence must lie in (0, 1)");
  }
  if (resamples < 2) throw std::invalid_argument("bootstrap_median_ratio: need at least 2 resamples");
  std::vector<double> x_store, y_store;
  const std::span<const double> sx = sorted_positive(x, "x", x_store);
  const std::span<const double> sy = sorted_positive(y, "y", y_store);
  Interval r;
  r.confidence = confidence;
  r.estimate = median_of_sorted(sy) / median_of_sorted(sx);
  Random rng(seed);
  std::vector<double> ratios(resamples);
  for (double& ratio : ratios) {
    const double denominator = resample_median(sx, rng);  // fixed draw order: x first, then y
    ratio = resample_median(sy, rng) / denominator;
  }
  std::sort(ratios.begin(), ratios.end());
  r.low = quantile(ratios, (1 - confidence) / 2);
  r.high = quantile(ratios, (1 + confidence) / 2);
  return r;
}

}  // namespace abvm::stats
