#include "stats/wilcoxon.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "stats/ranks.hpp"

namespace abvm::stats {

std::vector<double> wilcoxon_null_cdf(std::size_t n) {
  // Counts reach 2^n: beyond n = 1000 they would overflow a double.
  if (n == 0 || n > 1000) throw std::invalid_argument("signed-rank null distribution needs 1 <= n <= 1000");
  const std::size_t top = n * (n + 1) / 2;
  // count[t] = number of subsets of the ranks {1..n} summing to t (the ranks carrying a plus sign).
  std::vector<double> count(top + 1, 0.0);
  count[0] = 1;
  std::size_t reach = 0;
  for (std::size_t r = 1; r <= n; ++r) {
    reach += r;
    for (std::size_t t = reach; t >= r; --t) count[t] += count[t - r];
  }
  const double total = std::ldexp(1.0, static_cast<int>(n));
  double running = 0;
  for (double& c : count) {
    running += c;
    c = running / total;
  }
  count.back() = 1.0;
  return count;
}

double wilcoxon_max_confidence(std::size_t n) {
  return n == 0 ? 0.0 : std::max(0.0, 1 - std::ldexp(2.0, -static_cast<int>(std::min<std::size_t>(n, 2000))));
}

SignedRank wilcoxon_signed_rank(std::span<const double> d) {
  if (d.empty()) throw std::invalid_argument("signed-rank test needs at least one value");
  require_no_nan(d, "signed-rank input");
  std::vector<double> nonzero;
  nonzero.reserve(d.size());
  for (double v : d) {
    if (v != 0) nonzero.push_back(v);
  }
  SignedRank result;
  if (nonzero.empty()) return result;  // all zero: no sign to test

  std::vector<double> magnitude(nonzero.size());
  std::transform(nonzero.begin(), nonzero.end(), magnitude.begin(), [](double v) { return std::fabs(v); });
  const Ranking r = midranks(magnitude);
  double r_plus = 0;
  double r_minus = 0;
  for (std::size_t i = 0; i < nonzero.size(); ++i) (nonzero[i] > 0 ? r_plus : r_minus) += r.ranks[i];
  result.w = std::min(r_plus, r_minus);

  const std::size_t count = nonzero.size();
  const bool zeros = count != d.size();
  if (d.size() <= kWilcoxonExactMaxN && !zeros && r.tie_sizes.empty()) {
    const std::vector<double> cdf = wilcoxon_null_cdf(count);
    const std::size_t top = cdf.size() - 1;
    const auto t = static_cast<std::size_t>(std::llround(r_plus));
    if (t == top / 2) {
      result.p = 1.0;  // the centre (as SciPy): both tails hold at least half the mass
    } else {
      const double p_less = cdf[t];
      const double p_greater = cdf[top - t];  // P(T >= t) = P(T <= top - t) by symmetry
      result.p = std::min(1.0, 2.0 * std::min(p_less, p_greater));
    }
    result.exact = true;
    return result;
  }
  const double c = static_cast<double>(count);
  const double mean = c * (c + 1) / 4;
  const double variance = (c * (c + 1) * (2 * c + 1) - 0.5 * tie_term(r.tie_sizes)) / 24;
  const double z = (result.w - mean) / std::sqrt(variance);
  result.p = std::min(1.0, 2.0 * normal_sf(std::fabs(z)));
  return result;
}

}  // namespace abvm::stats
