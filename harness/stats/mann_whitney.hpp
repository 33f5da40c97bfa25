#pragma once
// Two-sided Mann-Whitney U test and the exact null distribution of U (also used by the
// Hodges-Lehmann interval, which inverts this test).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace abvm::stats {

// Exact p-values (and exact interval ranks) are used when the data have no ties and
// n * m <= kMannWhitneyExactMaxProduct. This covers every run count abvm asks for in practice
// (up to 50 x 50, or 8 x 312) -- wider than SciPy's 'auto' (exact only when min(n, m) <= 8),
// because the normal approximation is visibly off at 10 x 10, the size of the seed data.
// Beyond it the normal approximation is accurate and the exact table would cost O(n^2 m^2).
inline constexpr std::uint64_t kMannWhitneyExactMaxProduct = 2500;

struct MannWhitney {
  double u = 0;       // U of sample x, exactly SciPy's mannwhitneyu(x, y).statistic
  double p = 1;       // two-sided p-value
  bool exact = false; // true: exact distribution; false: normal approximation
};

// The highest two-sided confidence any Mann-Whitney interval can have for sample sizes n and m:
// 1 - 2 / C(n+m, n), the coverage of the widest interval [min, max] of the differences (excluded
// only when every x lies below every y or above it, one arrangement each out of C(n+m, n)).
// Repeated values within a sample do not raise it (the extreme arrangement stays one arrangement)
// and ties between the samples only make the permutation distribution coarser, so no rank
// interval or test, exact or approximate, may claim more. 1 when C(n+m, n) is beyond double range.
// Equivalently, 1 - this is the smallest two-sided p-value the test can give.
double mann_whitney_max_confidence(std::size_t n, std::size_t m);

// Two-sided test. Exact (SciPy method='exact') when there are no ties in the pooled data and
// n * m <= kMannWhitneyExactMaxProduct; otherwise the normal approximation with tie and
// continuity correction (SciPy method='asymptotic', use_continuity=True), but never below the
// smallest p-value the permutation distribution allows (1 - mann_whitney_max_confidence): with ties
// in tiny samples the approximation would claim more than any arrangement can show. When every
// value is tied the variance is zero and p = 1.
// Throws std::invalid_argument when x or y is empty or contains NaN.
MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y);

// Null distribution of U for sample sizes n and m without ties: element u is P(U <= u),
// u = 0 .. n*m. Lower tails keep full relative accuracy (the upper tail is the mirror image:
// P(U >= u) = P(U <= n*m - u)). Costs about n^2 m^2 / 4 additions and min(n,m) * n*m doubles:
// call it only for small samples. Throws std::invalid_argument when n or m is 0.
std::vector<double> mann_whitney_null_cdf(std::size_t n, std::size_t m);

}  // namespace abvm::stats
