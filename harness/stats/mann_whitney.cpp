#include "stats/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "stats/ranks.hpp"

namespace abvm::stats {

std::vector<double> mann_whitney_null_cdf(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) throw std::invalid_argument("Mann-Whitney null distribution needs n, m >= 1");
  // U's distribution is symmetric in (n, m); keep the table over the smaller size.
  const std::size_t a = std::min(n, m);
  const std::size_t b = std::max(n, m);
  // count[i] = number of orderings with U = u for sizes (i, j), built up over j. The largest of
  // the i + j values is either from the first sample (it beats all j others: U grows by j) or
  // from the second (adds nothing): f(i,j)(u) = f(i-1,j)(u-j) + f(i,j-1)(u).
  // Additions only, so counts stay exact to double rounding even past 2^64.
  std::vector<std::vector<double>> count(a + 1, std::vector<double>(1, 1.0));
  for (std::size_t j = 1; j <= b; ++j) {
    for (std::size_t i = 1; i <= a; ++i) {
      std::vector<double>& cur = count[i];
      const std::vector<double>& prev = count[i - 1];  // already f(i-1, j)
      cur.resize(i * j + 1, 0.0);
      for (std::size_t u = j; u <= i * j; ++u) cur[u] += prev[u - j];
    }
  }
  std::vector<double>& f = count[a];
  double total = 0;
  for (double c : f) total += c;
  double running = 0;
  for (double& c : f) {
    running += c;
    c = running / total;
  }
  f.back() = 1.0;
  return std::move(f);
}

double mann_whitney_max_confidence(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) return 0;
  // C(n+m, n) as a running product over the smaller size; past 1e300 the answer is 1 anyway.
  const std::size_t a = std::min(n, m), b = std::max(n, m);
  double c = 1;
  for (std::size_t i = 1; i <= a && c < 1e300; ++i) c = c * static_cast<double>(b + i) / static_cast<double>(i);
  return std::max(0.0, 1 - 2 / c);
}

namespace {

// The sum of x's midranks in the pooled sample, and the pooled sample's tie sizes (ascending value).
struct RankSum {
  double x = 0;
  std::vector<std::size_t> tie_sizes;
};

// Sides given ascending are merged instead of ranked: each run of equal values holds i..j-1 (0-based)
// of the pooled order, and x's values in it add their count times the mean rank (i+1+j)/2. Ranks are
// multiples of 1/2, so every partial sum below 2^52 is exact and the sum is the one midranks give in
// any order of adding.
RankSum merged_rank_sum(std::span<const double> x, std::span<const double> y) {
  RankSum r;
  std::size_t i = 0, ix = 0, iy = 0;
  while (ix < x.size() || iy < y.size()) {
    const double v = iy == y.size() || (ix < x.size() && x[ix] <= y[iy]) ? x[ix] : y[iy];
    const std::size_t from_x = ix;
    while (ix < x.size() && x[ix] == v) ++ix;
    const std::size_t tied = ix - from_x;
    std::size_t from_y = iy;
    while (iy < y.size() && y[iy] == v) ++iy;
    const std::size_t j = i + tied + (iy - from_y);
    r.x += static_cast<double>(tied) * ((static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0);
    if (j - i > 1) r.tie_sizes.push_back(j - i);
    i = j;
  }
  return r;
}

RankSum rank_sum(std::span<const double> x, std::span<const double> y) {
  const double pooled = static_cast<double>(x.size() + y.size());
  const bool exact = static_cast<double>(x.size()) * pooled < 0x1p52;
  if (exact && std::is_sorted(x.begin(), x.end()) && std::is_sorted(y.begin(), y.end())) return merged_rank_sum(x, y);
  std::vector<double> values(x.begin(), x.end());
  values.insert(values.end(), y.begin(), y.end());
  Ranking ranked = midranks(values);
  RankSum r{.tie_sizes = std::move(ranked.tie_sizes)};
  for (std::size_t i = 0; i < x.size(); ++i) r.x += ranked.ranks[i];
  return r;
}

}  // namespace

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) throw std::invalid_argument("Mann-Whitney needs two non-empty samples");
  require_no_nan(x, "Mann-Whitney sample x");
  require_no_nan(y, "Mann-Whitney sample y");
  const std::size_t n = x.size();
  const std::size_t m = y.size();
  const RankSum r = rank_sum(x, y);
  const double rank_sum_x = r.x;
  const double nd = static_cast<double>(n);
  const double md = static_cast<double>(m);
  MannWhitney result;
  result.u = rank_sum_x - nd * (nd + 1) / 2;
  const double u_max = std::max(result.u, nd * md - result.u);

  if (r.tie_sizes.empty() && static_cast<std::uint64_t>(n) * m <= kMannWhitneyExactMaxProduct) {
    const std::vector<double> cdf = mann_whitney_null_cdf(n, m);
    // Without ties U is an integer; P(U >= u_max) = P(U <= n*m - u_max) by symmetry.
    const auto lower = static_cast<std::size_t>(std::llround(nd * md - u_max));
    result.p = std::min(1.0, 2.0 * cdf[lower]);
    result.exact = true;
    return result;
  }
  const double big_n = nd + md;
  const double variance = nd * md / 12.0 * ((big_n + 1) - tie_term(r.tie_sizes) / (big_n * (big_n - 1)));
  if (!(variance > 0)) {
    result.p = 1.0;  // every value tied: no evidence either way
    return result;
  }
  const double z = (u_max - nd * md / 2.0 - 0.5) / std::sqrt(variance);
  const double smallest_p = 1 - mann_whitney_max_confidence(n, m);
  result.p = std::min(1.0, std::max(smallest_p, 2.0 * normal_sf(z)));
  return result;
}

}  // namespace abvm::stats
