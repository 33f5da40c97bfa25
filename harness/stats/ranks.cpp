#include "stats/ranks.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace abvm::stats {

void require_no_nan(std::span<const double> values, const char* what) {
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    throw std::invalid_argument(std::string(what) + " contains NaN");
  }
}

void require_finite(std::span<const double> values, const char* what) {
  if (std::any_of(values.begin(), values.end(), [](double v) { return !std::isfinite(v); })) {
    throw std::invalid_argument(std::string(what) + " contains a non-finite value");
  }
}

Ranking midranks(std::span<const double> pooled) {
  require_no_nan(pooled, "rank input");
  const std::size_t n = pooled.size();
  // (value, position) pairs sorted directly: the same order as a stable sort of positions by value,
  // without its indirect compares and merge buffer (the Spearman trend ranks 2 x 1M values).
  std::vector<std::pair<double, std::size_t>> sorted(n);
  for (std::size_t i = 0; i < n; ++i) sorted[i] = {pooled[i], i};
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second < b.second);
  });
  Ranking r;
  r.ranks.resize(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && sorted[j].first == sorted[i].first) ++j;
    // Positions i..j-1 (0-based) share the mean of the 1-based ranks i+1..j.
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) r.ranks[sorted[k].second] = mid;
    if (j - i > 1) r.tie_sizes.push_back(j - i);
    i = j;
  }
  return r;
}

std::vector<std::size_t> tie_sizes_of_sorted(std::span<const double> sorted) {
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (j - i > 1) sizes.push_back(j - i);
    i = j;
  }
  return sizes;
}

double tie_term(std::span<const std::size_t> tie_sizes) {
  double sum = 0;
  for (std::size_t t : tie_sizes) {
    const double d = static_cast<double>(t);
    sum += d * d * d - d;
  }
  return sum;
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

double normal_upper_quantile(double upper) {
  if (!(upper > 0 && upper < 1)) throw std::invalid_argument("normal quantile needs 0 < p < 1");
  // P(Z > z) = erfc(z / sqrt2) / 2  =>  z = sqrt2 * erfc_inv(2 p).
  return std::sqrt(2.0) * boost::math::erfc_inv(2.0 * upper);
}

}  // namespace abvm::stats
