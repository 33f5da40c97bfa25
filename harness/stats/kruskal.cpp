#include "stats/kruskal.hpp"

#include <boost/math/distributions/chi_squared.hpp>

#include "stats/ranks.hpp"

namespace abvm::stats {

KruskalResult kruskal_wallis(std::span<const std::vector<double>> groups) {
  std::vector<double> pooled;
  std::vector<std::size_t> sizes;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    require_no_nan(g, "Kruskal-Wallis input");
    pooled.insert(pooled.end(), g.begin(), g.end());
    sizes.push_back(g.size());
  }
  KruskalResult r;
  if (sizes.size() < 2) return r;
  const Ranking ranking = midranks(pooled);
  const double n = static_cast<double>(pooled.size());
  double sum = 0;
  std::size_t at = 0;
  for (std::size_t size : sizes) {
    double rank_sum = 0;
    for (std::size_t i = 0; i < size; ++i) rank_sum += ranking.ranks[at + i];
    at += size;
    sum += rank_sum * rank_sum / static_cast<double>(size);
  }
  // Ties shrink the variance of the ranks: H is divided by 1 - sum(t^3 - t) / (n^3 - n).
  const double correction = 1 - tie_term(ranking.tie_sizes) / (n * n * n - n);
  r.df = static_cast<double>(sizes.size() - 1);
  if (correction <= 0) return r;  // every value the same: nothing to tell the groups apart
  r.h = (12 / (n * (n + 1)) * sum - 3 * (n + 1)) / correction;
  if (r.h < 0) r.h = 0;
  r.p = boost::math::cdf(boost::math::complement(boost::math::chi_squared(r.df), r.h));
  return r;
}

}  // namespace abvm::stats
