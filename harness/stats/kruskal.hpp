#pragma once
// The Kruskal-Wallis test: do k groups of values come from one distribution? Rank-based, so a few
// wild values cannot decide it. abvm uses it to ask whether the hosts of a pool agree on the
// per-block effect (verdict/analysis.hpp HostAgreement). Pure: plain numbers in, numbers out.
#include <span>
#include <vector>

namespace abvm::stats {

struct KruskalResult {
  double h = 0;        // the tie-corrected H statistic
  double df = 0;       // groups - 1
  double p = 1;        // P(chi-square(df) >= h), the large-sample approximation (as scipy.stats.kruskal)
};

// Groups with no value are left out; fewer than two non-empty groups, or all values equal, give
// h = 0 and p = 1. Throws std::invalid_argument on NaN.
KruskalResult kruskal_wallis(std::span<const std::vector<double>> groups);

}  // namespace abvm::stats
