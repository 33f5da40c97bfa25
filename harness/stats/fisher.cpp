#include "stats/fisher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace abvm::stats {

namespace {

double lfact(std::uint64_t k) { return std::lgamma(static_cast<double>(k) + 1.0); }

// log C(n, k), written so that C(n, k) and C(n, n-k) round identically: a symmetric table must
// give bit-identical probabilities to mirrored outcomes for the tie rule to see them as equal.
double log_choose(std::uint64_t n, std::uint64_t k) { return lfact(n) - (lfact(k) + lfact(n - k)); }

}  // namespace

FisherResult fisher_exact(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  constexpr std::uint64_t limit = std::uint64_t{1} << 52;  // counts stay exact as doubles
  if (a > limit || b > limit || c > limit || d > limit) {
    throw std::invalid_argument("fisher_exact: counts too large");
  }
  FisherResult r;
  if (a + b == 0 || c + d == 0 || a + c == 0 || b + d == 0) {
    r.odds_ratio = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  const double ad = static_cast<double>(a) * static_cast<double>(d);
  const double bc = static_cast<double>(b) * static_cast<double>(c);
  r.odds_ratio = (b > 0 && c > 0) ? ad / bc : std::numeric_limits<double>::infinity();

  const std::uint64_t row1 = a + b, row2 = c + d, col1 = a + c;
  const std::uint64_t lo = col1 > row2 ? col1 - row2 : 0;
  const std::uint64_t hi = std::min(row1, col1);
  std::vector<double> logw(hi - lo + 1);
  for (std::uint64_t x = lo; x <= hi; ++x) {
    logw[x - lo] = log_choose(row1, x) + log_choose(row2, col1 - x);
  }
  // Normalise by the sum of the terms rather than by log C(N, a + c): the lgamma rounding then cancels,
  // a sum over every term is exactly 1, and a table at the mode gets p = 1 as in SciPy.
  const double log_peak = *std::max_element(logw.begin(), logw.end());
  const double log_observed = logw[a - lo];
  constexpr double relative_tolerance = 1e-14;
  const double log_cutoff = log_observed + std::log1p(relative_tolerance);
  double total = 0, less = 0, greater = 0, two = 0;
  for (std::uint64_t x = lo; x <= hi; ++x) {
    const double lw = logw[x - lo];
    const double w = std::exp(lw - log_peak);
    total += w;
    if (x <= a) less += w;
    if (x >= a) greater += w;
    if (lw <= log_cutoff) two += w;
  }
  less /= total;
  greater /= total;
  two /= total;
  r.p_less = std::min(less, 1.0);
  r.p_greater = std::min(greater, 1.0);
  r.p_two_sided = std::min(two, 1.0);
  return r;
}

}  // namespace abvm::stats
