#pragma once
// Hodges-Lehmann shift estimates with distribution-free confidence intervals, and the selection
// algorithms that make them O((n+m) log(n+m)) instead of enumerating all pairs.
//
// abvm calls these on log-transformed values (x = log A, y = log B), so an estimate d on the log
// scale is the ratio exp(d) = B/A; nothing here knows that.
#include <cstdint>
#include <span>
#include <string>

namespace abvm::stats {

// Method names written into ShiftEstimate::method (stable: reports print them).
inline constexpr const char* kShiftExactMethod = "hodges-lehmann, exact Mann-Whitney inversion";
inline constexpr const char* kShiftNormalMethod = "hodges-lehmann, normal-approximation Mann-Whitney inversion";
inline constexpr const char* kPairedExactMethod = "hodges-lehmann paired, exact signed-rank inversion";
inline constexpr const char* kPairedNormalMethod = "hodges-lehmann paired, normal-approximation signed-rank inversion";

struct ShiftEstimate {
  double estimate = 0;             // median of the differences (or Walsh averages)
  double low = 0;                  // interval [low, high] around it
  double high = 0;
  double confidence = 0.95;        // what was asked for
  double achieved_confidence = 0;  // what [low, high] actually covers (>= confidence unless the
                                   // samples are too small, then it is the widest interval's)
  bool exact = false;              // interval ranks from the exact null distribution
  std::string method;              // one of the k*Method names above
};

// Two-sample shift of y relative to x: the median of all n*m differences y_j - x_i (the mean of the
// two middle ones for an even count) with the interval [D_(k), D_(nm+1-k)] of the ordered
// differences, whose coverage is 1 - 2 P(U <= k-1) for the Mann-Whitney U. k is the largest rank
// whose coverage is still >= `confidence`:
//  - exact: from mann_whitney_null_cdf, when neither sample has repeated values and
//    n*m <= kMannWhitneyExactMaxProduct;
//  - otherwise from the normal approximation with continuity correction,
//    k = floor(nm/2 + 1/2 - z sigma), sigma^2 = nm/12 ((N+1) - sum(t^3-t)/(N(N-1))), N = n+m.
// Ties here are repeats *within* x or within y: those stay tied at every shift the interval
// inverts the test at, whereas an x equal to a y only ties at the one shift 0.
// If no k reaches `confidence` (tiny samples) the result is the widest interval [min, max] of the
// differences, with achieved_confidence set to its true coverage (0 for n = m = 1). That holds with
// ties too: achieved_confidence never exceeds mann_whitney_max_confidence(n, m) = 1 - 2/C(n+m, n),
// however small the tie-corrected normal approximation makes sigma (1000 vs 900 x 10: 81.8 %, not
// the 97.3 % the approximation claims).
// Throws std::invalid_argument for an empty sample, a non-finite value, or confidence not in (0, 1).
ShiftEstimate hodges_lehmann_shift(std::span<const double> x, std::span<const double> y, double confidence);

// One-sample / paired: the pseudo-median of d (median of the n(n+1)/2 Walsh averages
// (d_i + d_j)/2, i <= j) with the Wilcoxon signed-rank interval [W_(k), W_(N+1-k)], coverage
// 1 - 2 P(T+ <= k-1). Exact (wilcoxon_null_cdf) when n <= kWilcoxonExactMaxN and no value of d is
// repeated; otherwise the normal approximation, k = floor(N/2 + 1/2 - z sigma),
// sigma^2 = n(n+1)(2n+1)/24 - sum(t^3-t)/48 with t the sizes of groups of equal d. Same tiny-sample
// and error rules as hodges_lehmann_shift, with the ceiling wilcoxon_max_confidence(n) = 1 - 2/2^n.
ShiftEstimate hodges_lehmann_paired(std::span<const double> d, double confidence);

// The k-th smallest (0-based) of the n*m differences y_j - x_i, both inputs sorted ascending,
// without enumerating them: randomized selection over the implicitly sorted difference matrix
// (Monahan / Johnson-Mizoguchi style, with Floyd-Rivest sampled pivot pairs), each step a linear
// staircase count. O((n+m) log(n+m)) expected time, O(n+m) memory. The result is bit-identical to sorting all differences computed
// as y[j] - x[i]. Throws std::invalid_argument for empty or unsorted input, a non-finite value,
// or k >= n*m.
double kth_pairwise_difference(std::span<const double> x_sorted, std::span<const double> y_sorted, std::uint64_t k);

// The k-th smallest (0-based) of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j, of a sorted
// sample, by the same selection. Same complexity, exactness and errors.
double kth_walsh_average(std::span<const double> d_sorted, std::uint64_t k);

}  // namespace abvm::stats
