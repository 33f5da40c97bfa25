#pragma once
// Descriptive statistics of one side's samples. Pure functions; conventions follow NumPy/SciPy so
// the reference values in the tests come straight from them:
//   sd     sample standard deviation (divisor n-1, numpy.std(ddof=1)); 0 for n = 1
//   mad    raw median absolute deviation, unscaled (scipy.stats.median_abs_deviation default)
//   iqr    Q3 - Q1 with quantiles by linear interpolation (numpy.percentile default, Hyndman-Fan type 7)
//   cv     sd / mean; 0 when the mean is 0
// Every function throws std::invalid_argument on empty input or on a non-finite value (NaN, inf):
// a silent NaN here would turn into a confident-looking verdict later. Finite values anywhere in
// double's range (1e308, denormals) give finite results: the middle pair's mean, the sum and the
// squares are formed without overflow.
#include <cstddef>
#include <span>
#include <vector>

namespace abvm::stats {

struct Summary {
  std::size_t n = 0;
  double median = 0, mean = 0, sd = 0, mad = 0, iqr = 0, min = 0, max = 0, cv = 0;
};

Summary summarize(std::span<const double> v);
// The same from the values and their ascending copy (`sorted`, of the same size), for a caller that
// sorts them once for several statistics; the mean and sd are summed in v's order, as above.
Summary summarize(std::span<const double> v, std::span<const double> sorted);

// Type-7 quantile of ascending data: with h = (n-1) q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
// q must lie in [0, 1]; `sorted` must be ascending (checked: throws std::invalid_argument).
double quantile(std::span<const double> sorted, double q);

double median(std::span<const double> v);
// The same of ascending values (not checked: the caller sorted them), without median()'s copy.
double median_of_sorted(std::span<const double> sorted);

// Raw (unscaled) median absolute deviation from the median.
double mad(std::span<const double> v);
// The same about a median already known (v's own median, in any order of v).
double mad_about(std::span<const double> v, double median);

// `v` ascending: itself when it already is (no copy: the analysis sorts each side's units once for
// every statistic), else a sorted copy kept in `store`.
std::span<const double> ascending(std::span<const double> v, std::vector<double>& store);

// Throws std::invalid_argument naming `what` when v is empty or holds a non-finite value.
void require_nonempty_finite(std::span<const double> v, const char* what);

}  // namespace abvm::stats
