#pragma once
// Seeded percentile bootstrap of the ratio median(y) / median(x): a secondary figure next to the
// Hodges-Lehmann interval, easy to explain ("B's median over A's median, resampled").
//
// Each replicate resamples x and y independently with replacement (each side keeps its size) and
// takes the ratio of the resample medians; [low, high] are the type-7 quantiles (1 - confidence)/2
// and (1 + confidence)/2 of the `resamples` replicates, estimate is median(y) / median(x) of the data.
// The data are taken as given: to resample whole boots, pass one aggregated value per boot.
//
// How a replicate's median is drawn, in O(1) instead of O(n): with x sorted, a resample's j-th
// smallest value is x[floor(n U_(j))] where U_(j) is the j-th order statistic of n independent
// uniforms, and U_(j) ~ Beta(j, n - j + 1). So the median of an odd-sized resample is
// x[floor(n U)] with U = Beta(k, n - k + 1) quantile of a uniform draw, k = (n + 1) / 2; for even n
// the next order statistic follows as U_(k+1) = U_(k) + (1 - U_(k)) (1 - V^(1/(n-k))), V uniform
// (the smallest of the n - k uniforms above U_(k)). This is the same distribution as drawing n
// indices, and keeps 2 x 100,000 runs with 2000 resamples in milliseconds.
// Reproducibility: uniforms come from stats::Random (std::mt19937_64, fixed by the standard) and the
// Beta quantile from Boost.Math's ibeta_inv; the same seed gives the same interval wherever the
// same Boost.Math and a correctly rounding libm are used.
//
// Throws std::invalid_argument when a side is empty, a value is not finite and positive (a ratio of
// medians needs positive quantities), confidence is outside (0, 1) or resamples < 2.
#include <cstddef>
#include <cstdint>
#include <span>

#include "stats/random.hpp"

namespace abvm::stats {

struct Interval {
  double estimate = 0, low = 0, high = 0, confidence = 0.95;
};

// One bootstrap replicate of the median: the median of a with-replacement resample of `sorted`
// (ascending, non-empty, same size), drawn in O(1) as described above. Consumes one uniform from
// rng for odd sizes, two for even sizes.
double resample_median(std::span<const double> sorted, Random& rng);

Interval bootstrap_median_ratio(std::span<const double> x, std::span<const double> y, double confidence,
                                std::uint64_t seed, std::size_t resamples = 2000);

}  // namespace abvm::stats
