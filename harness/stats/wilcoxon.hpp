#pragma once
// Wilcoxon signed-rank test (one sample / paired differences) and the exact null distribution of
// its statistic (also used by the paired Hodges-Lehmann interval, which inverts this test).
#include <cstddef>
#include <span>
#include <vector>

namespace abvm::stats {

// Exact p-values when n <= kWilcoxonExactMaxN and there are no zeros and no ties among |d|
// (SciPy's 'auto' uses the same size bound; it keeps 'exact' with non-zero ties, which is wrong,
// so abvm switches to the tie-corrected normal approximation there).
inline constexpr std::size_t kWilcoxonExactMaxN = 50;

struct SignedRank {
  double w = 0;        // min(R+, R-), as SciPy's wilcoxon(d).statistic (two-sided)
  double p = 1;        // two-sided p-value
  bool exact = false;  // true: exact distribution; false: normal approximation
};

// Two-sided test of "d is symmetric about 0". Exact: as SciPy's wilcoxon(d, method='exact').
// Otherwise: SciPy's wilcoxon(d, method='approx') with its defaults (zero_method='wilcox': zeros
// are dropped before ranking; tie-corrected variance; no continuity correction). When every d is
// zero, w = 0 and p = 1 (SciPy raises instead). Throws std::invalid_argument on empty input or NaN.
SignedRank wilcoxon_signed_rank(std::span<const double> d);

// The highest two-sided confidence any signed-rank interval can have for n differences:
// 1 - 2 / 2^n, the coverage of the widest interval [min, max] of the Walsh averages (excluded only
// when every sign is the same, 2 of 2^n sign patterns). Ties do not raise it. 0 for n = 0.
double wilcoxon_max_confidence(std::size_t n);

// Null distribution of the signed-rank statistic T+ for n non-zero, untied values: element t is
// P(T+ <= t), t = 0 .. n(n+1)/2. O(n^3) time, O(n^2) memory.
// Throws std::invalid_argument unless 1 <= n <= 1000.
std::vector<double> wilcoxon_null_cdf(std::size_t n);

}  // namespace abvm::stats
