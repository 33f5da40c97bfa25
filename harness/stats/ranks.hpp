#pragma once
// Ranks and tie bookkeeping shared by the rank tests (Mann-Whitney, Wilcoxon signed-rank) and the
// Hodges-Lehmann intervals, plus the two normal-distribution helpers their approximations need.
// Pure functions over plain numbers: no knowledge of sides, files or guests.
#include <cstddef>
#include <span>
#include <vector>

namespace abvm::stats {

// Midranks of the pooled data and the tie groups (for tie corrections).
struct Ranking {
  std::vector<double> ranks;           // 1-based midranks, in input order
  std::vector<std::size_t> tie_sizes;  // size of every group of >= 2 equal values, by ascending value
};

// Throws std::invalid_argument on NaN (NaN has no rank). Infinities rank like any other value.
Ranking midranks(std::span<const double> pooled);

// The values ascending, as std::sort leaves them (of -0 and +0, which compare equal, -0 first), by
// a radix sort: at 1M values a fraction of std::sort's time (harness/bench/analyze_size.sh sorts
// each side's runs once). Throws std::invalid_argument on NaN (NaN has no place in the order).
std::vector<double> sorted_ascending(std::span<const double> values);

// Tie groups (sizes >= 2) of an already sorted sample.
std::vector<std::size_t> tie_sizes_of_sorted(std::span<const double> sorted);

// The tie term sum(t^3 - t) over tie groups, as in the tie-corrected rank-test variances.
double tie_term(std::span<const std::size_t> tie_sizes);

// P(Z > z) for a standard normal Z, via erfc so that the far tail keeps its relative accuracy.
double normal_sf(double z);

// The z with P(Z > z) = upper, for 0 < upper < 1 (throws std::invalid_argument otherwise).
double normal_upper_quantile(double upper);

// Throw std::invalid_argument("<what> contains NaN") / ("... a non-finite value").
void require_no_nan(std::span<const double> values, const char* what);
void require_finite(std::span<const double> values, const char* what);

}  // namespace abvm::stats
