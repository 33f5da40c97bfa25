#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace abvm::stats {

void require_nonempty_finite(std::span<const double> v, const char* what) {
  if (v.empty()) throw std::invalid_argument(std::string(what) + ": no values");
  for (double x : v) {
    if (!std::isfinite(x)) throw std::invalid_argument(std::string(what) + ": non-finite value");
  }
}

double quantile(std::span<const double> sorted, double q) {
  require_nonempty_finite(sorted, "quantile");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile: q must lie in [0, 1]");
  if (!std::is_sorted(sorted.begin(), sorted.end())) {
    throw std::invalid_argument("quantile: data must be sorted ascending");
  }
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted[sorted.size() - 1];
  const double t = h - static_cast<double>(lo);
  const double a = sorted[lo], b = sorted[lo + 1];
  // NumPy's lerp: interpolating from the nearer end keeps the result monotone in q and exact at t = 1.
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1.0 - t);
}

namespace {

// Median of data that nth_element may reorder.
double median_in_place(std::vector<double>& w) {
  const std::size_t n = w.size();
  const auto mid = w.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(w.begin(), mid, w.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(w.begin(), mid);
  return std::midpoint(lower, upper);  // as numpy.median (the mean of the middle pair), without overflow
}

// The plain sum, unless values near 1e308 overflow it: then the sum of the values scaled down by
// the largest magnitude, scaled back (same result wherever the plain sum is finite).
double mean_without_overflow(std::span<const double> v) {
  const double n = static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  if (std::isfinite(sum)) return sum / n;
  double scale = 0;
  for (double x : v) scale = std::max(scale, std::abs(x));
  double scaled = 0;
  for (double x : v) scaled += x / scale;
  return scaled / n * scale;
}

// Two passes: the textbook one-pass formula loses all digits for large values with small spread
// (bandwidths near 4e9 B/s varying by a few percent). The squares are scaled like the sum above
// when they overflow.
double sd_without_overflow(std::span<const double> v, double mean) {
  const double n1 = static_cast<double>(v.size() - 1);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  if (std::isfinite(ss)) return std::sqrt(ss / n1);
  double scale = 0;
  for (double x : v) scale = std::max(scale, std::abs(x / 2 - mean / 2));
  double scaled = 0;
  for (double x : v) scaled += ((x / 2 - mean / 2) / scale) * ((x / 2 - mean / 2) / scale);
  return std::sqrt(scaled / n1) * scale * 2;
}

}  // namespace

double median(std::span<const double> v) {
  require_nonempty_finite(v, "median");
  std::vector<double> w(v.begin(), v.end());
  return median_in_place(w);
}

double median_of_sorted(std::span<const double> sorted) {
  require_nonempty_finite(sorted, "median");
  const std::size_t n = sorted.size(), mid = n / 2;
  return n % 2 == 1 ? sorted[mid] : std::midpoint(sorted[mid - 1], sorted[mid]);
}

std::span<const double> ascending(std::span<const double> v, std::vector<double>& store) {
  if (std::is_sorted(v.begin(), v.end())) return v;
  store.assign(v.begin(), v.end());
  std::sort(store.begin(), store.end());
  return store;
}

double mad(std::span<const double> v) { return mad_about(v, median(v)); }

double mad_about(std::span<const double> v, double median) {
  std::vector<double> dev(v.size());
  std::transform(v.begin(), v.end(), dev.begin(), [median](double x) { return std::abs(x - median); });
  return median_in_place(dev);
}

namespace {

// mad_about of ascending values without the deviations' copy (1M values: 8 MB, and a selection
// over them): the deviations are two ascending runs, from the first value at or above `about` up
// and from the one before it down, and their merge reaches the middle ranks that median() takes.
double mad_of_sorted(std::span<const double> sorted, double about) {
  const std::size_t n = sorted.size();
  std::size_t up = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), about) - sorted.begin());
  std::size_t down = up;  // the next deviation downwards is sorted[down - 1]'s
  double before = 0, at = 0;  // the deviations of ranks n/2 - 1 and n/2 (0-based) once there
  for (std::size_t rank = 0; rank <= n / 2; ++rank) {
    const bool lower = down > 0 && (up == n || std::abs(sorted[down - 1] - about) <= std::abs(sorted[up] - about));
    before = at;
    at = lower ? std::abs(sorted[--down] - about) : std::abs(sorted[up++] - about);
  }
  return n % 2 == 1 ? at : std::midpoint(before, at);
}

}  // namespace

Summary summarize(std::span<const double> v) {
  require_nonempty_finite(v, "summarize");
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  return summarize(v, sorted);
}

Summary summarize(std::span<const double> v, std::span<const double> sorted) {
  require_nonempty_finite(v, "summarize");
  if (sorted.size() != v.size()) throw std::invalid_argument("summarize: the sorted copy is not of the values");
  Summary s;
  s.n = v.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  s.mean = mean_without_overflow(v);
  if (s.n > 1) s.sd = sd_without_overflow(v, s.mean);
  s.mad = mad_of_sorted(sorted, s.median);  // the median of v is s.median: the same middle values
  s.iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
  s.cv = s.mean == 0 ? 0 : s.sd / s.mean;
  return s;
}

}  // namespace abvm::stats
