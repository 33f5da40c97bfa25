#include "stats/bootstrap.hpp"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/random.hpp"

namespace abvm::stats {

namespace {

std::vector<double> sorted_positive(std::span<const double> v, const char* side) {
  if (v.empty()) throw std::invalid_argument(std::string("bootstrap_median_ratio: no values in ") + side);
  for (double x : v) {
    if (!(std::isfinite(x) && x > 0)) {
      throw std::invalid_argument(std::string("bootstrap_median_ratio: values in ") + side +
                                  " must be finite and positive");
    }
  }
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s;
}

// Median of a with-replacement resample of `sorted`, drawn through the order statistics of uniforms
// (see the header).
class ResampleMedian {
 public:
  explicit ResampleMedian(const std::vector<double>& sorted)
      : x_(sorted), n_(sorted.size()), k_((sorted.size() + 1) / 2) {}

  double draw(Random& rng) const {
    const double u_k = boost::math::ibeta_inv(static_cast<double>(k_), static_cast<double>(n_ - k_ + 1), rng.uniform());
    const double lower = at(u_k);
    if (n_ % 2 == 1) return lower;
    const double v = 1.0 - rng.uniform();  // (0, 1]
    const double u_next = u_k + (1.0 - u_k) * (1.0 - std::pow(v, 1.0 / static_cast<double>(n_ - k_)));
    return (lower + at(u_next)) / 2.0;
  }

 private:
  double at(double u) const {
    const auto i = static_cast<std::size_t>(std::floor(u * static_cast<double>(n_)));
    return x_[std::min(i, n_ - 1)];
  }
  const std::vector<double>& x_;
  std::size_t n_, k_;
};

}  // namespace

Interval bootstrap_median_ratio(std::span<const double> x, std::span<const double> y, double confidence,
                                std::uint64_t seed, std::size_t resamples) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("bootstrap_median_ratio: confidence must lie in (0, 1)");
  }
  if (resamples < 2) throw std::invalid_argument("bootstrap_median_ratio: need at least 2 resamples");
  const std::vector<double> sx = sorted_positive(x, "x");
  const std::vector<double> sy = sorted_positive(y, "y");
  Interval r;
  r.confidence = confidence;
  r.estimate = median(sy) / median(sx);
  const ResampleMedian mx(sx), my(sy);
  Random rng(seed);
  std::vector<double> ratios(resamples);
  for (double& ratio : ratios) {
    const double denominator = mx.draw(rng);  // fixed draw order: x first, then y
    ratio = my.draw(rng) / denominator;
  }
  std::sort(ratios.begin(), ratios.end());
  r.low = quantile(ratios, (1 - confidence) / 2);
  r.high = quantile(ratios, (1 + confidence) / 2);
  return r;
}

}  // namespace abvm::stats
