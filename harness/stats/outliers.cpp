#include "stats/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "stats/descriptive.hpp"

namespace abvm::stats {

Outliers find_outliers(std::span<const double> v) {
  require_nonempty_finite(v, "find_outliers");
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  return find_outliers(v, sorted, summarize(v, sorted));
}

Outliers find_outliers(std::span<const double> v, std::span<const double> sorted, const Summary& summary) {
  require_nonempty_finite(v, "find_outliers");
  const double q1 = quantile(sorted, 0.25);
  const double q3 = quantile(sorted, 0.75);
  Outliers out;
  out.tukey_low = q1 - 1.5 * (q3 - q1);
  out.tukey_high = q3 + 1.5 * (q3 - q1);
  const double med = summary.median;
  const double m = summary.mad;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < out.tukey_low || v[i] > out.tukey_high) out.tukey.push_back(i);
    // With MAD == 0 more than half the values are identical: the score is infinite for every other
    // value, which would flag ordinary variation as outlying. Tukey's fences still cover that case.
    if (m > 0 && std::abs(0.6745 * (v[i] - med) / m) > 3.5) out.modified_z.push_back(i);
  }
  std::set_union(out.tukey.begin(), out.tukey.end(), out.modified_z.begin(), out.modified_z.end(),
                 std::back_inserter(out.any));
  return out;
}

}  // namespace abvm::stats
