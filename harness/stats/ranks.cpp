#include "stats/ranks.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
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

namespace {

// A double's bits as an unsigned key that orders as the doubles do, -0 below +0: the values come
// back bit for bit from their keys (sorted_ascending).
std::uint64_t bits_key(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  return bits >> 63 ? ~bits : bits | (std::uint64_t{1} << 63);
}

// The same with equal keys for equal values (NaN aside; -0 is +0), for ranks.
std::uint64_t order_key(double v) { return bits_key(v == 0 ? 0.0 : v); }

// Sorts `items` ascending by `key(item)` (an unsigned 64-bit key): a radix sort a byte at a time
// from the lowest, skipping the bytes all keys share. It is stable. The counts of every byte are
// taken in one pass first: they do not depend on the order the passes leave.
template <class T, class Key>
void radix_sort(std::vector<T>& items, Key key) {
  const std::size_t n = items.size();
  // start[b][d + 1]: how many keys have d as byte b, then where byte b's d's go.
  std::array<std::array<std::size_t, 257>, 8> start{};
  for (const T& e : items) {
    const std::uint64_t k = key(e);
    for (int b = 0; b < 8; ++b) ++start[b][((k >> (8 * b)) & 0xFF) + 1];
  }
  std::vector<T> next;
  for (int b = 0; b < 8; ++b) {
    auto& at = start[b];
    if (std::find(at.begin(), at.end(), n) != at.end()) continue;  // one byte for all keys
    if (next.empty()) next.resize(n);
    std::partial_sum(at.begin(), at.end(), at.begin());
    for (const T& e : items) next[at[(key(e) >> (8 * b)) & 0xFF]++] = e;
    items.swap(next);
  }
}

// (key, position) of every value, ascending by key. Being stable, the radix sort keeps equal values
// in the order of their positions: the order of a stable sort of positions by value, at about a
// third of the time of sorting the pairs by comparison (the Spearman trend ranks 2 x 1M values).
std::vector<std::pair<std::uint64_t, std::size_t>> by_value(std::span<const double> values) {
  const std::size_t n = values.size();
  std::vector<std::pair<std::uint64_t, std::size_t>> sorted(n);
  for (std::size_t i = 0; i < n; ++i) sorted[i] = {order_key(values[i]), i};
  radix_sort(sorted, [](const std::pair<std::uint64_t, std::size_t>& e) { return e.first; });
  return sorted;
}

}  // namespace

Ranking midranks(std::span<const double> pooled) {
  require_no_nan(pooled, "rank input");
  const std::size_t n = pooled.size();
  const auto sorted = by_value(pooled);
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

std::vector<double> sorted_ascending(std::span<const double> values) {
  require_no_nan(values, "sort input");
  std::vector<std::uint64_t> keys(values.size());
  std::transform(values.begin(), values.end(), keys.begin(), bits_key);
  radix_sort(keys, [](std::uint64_t k) { return k; });
  std::vector<double> out(keys.size());
  std::transform(keys.begin(), keys.end(), out.begin(), [](std::uint64_t k) {
    return std::bit_cast<double>(k >> 63 ? k & ~(std::uint64_t{1} << 63) : ~k);
  });
  return out;
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
