#pragma once
// Outlier flags for one side's samples. Flags only: the analysis keeps every sample (criterion.rs
// style); the report lists the flagged indices so a reader can look at those runs.
//   tukey       outside the fences [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (type-7 quartiles); a value on a fence
//               is not flagged
//   modified_z  |0.6745 (x - median) / MAD| > 3.5 (Iglewicz & Hoaglin), MAD raw and unscaled
//   any         sorted union of both
// Indices are 0-based positions in the input order, each list ascending.
// Throws std::invalid_argument on empty input or a non-finite value.
#include <cstddef>
#include <span>
#include <vector>

#include "stats/descriptive.hpp"

namespace abvm::stats {

struct Outliers {
  std::vector<std::size_t> tukey, modified_z, any;
  double tukey_low = 0, tukey_high = 0;
};

Outliers find_outliers(std::span<const double> v);
// The same from v's ascending copy and its summary (stats/descriptive.hpp summarize(v, sorted)),
// for a caller that has both already.
Outliers find_outliers(std::span<const double> v, std::span<const double> sorted, const Summary& summary);

}  // namespace abvm::stats
