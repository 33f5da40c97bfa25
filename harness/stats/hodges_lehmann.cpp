#include "stats/hodges_lehmann.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/ranks.hpp"
#include "stats/wilcoxon.hpp"

namespace abvm::stats {
namespace {

// splitmix64: a tiny fixed-seed generator. The pivots only steer the running time; the selected
// value is the same whatever they are, so the results are deterministic anyway.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// An implicit matrix with `rows` rows and `cols` columns whose value(r, c) is nondecreasing in r and
// in c, restricted to the columns [start(r), cols) of each row. Cell (r, c) stands for
// weight(r) x (col(c + 1) - col(c)) equal elements (col: the columns' cumulative weights, col(0) = 0):
// repeated values are one row or column each, with their count as weight.
template <class Start, class Value, class Weight, class Col>
struct Matrix {
  std::size_t rows, cols;
  Start start;
  Value value;
  Weight weight;
  Col col;
  // The elements of row r's columns [from, to).
  std::uint64_t in_row(std::size_t r, std::size_t from, std::size_t to) const {
    return weight(r) * (col(to) - col(from));
  }
  // The column of row r's cells [from, to) that holds the element `at` elements after col(from).
  std::size_t column_of(std::size_t from, std::size_t to, std::uint64_t at) const {
    const std::uint64_t target = col(from) + at;
    while (to - from > 1) {  // col(from) <= target < col(to)
      const std::size_t mid = from + (to - from) / 2;
      (col(mid) <= target ? from : to) = mid;
    }
    return from;
  }
};

// Spelled out for compilers without C++20's deduction for aggregates (clang 14, the fuzz build's).
template <class Start, class Value, class Weight, class Col>
Matrix(std::size_t, std::size_t, Start, Value, Weight, Col) -> Matrix<Start, Value, Weight, Col>;

constexpr auto one_each = [](std::size_t) { return std::uint64_t{1}; };
constexpr auto counted_columns = [](std::size_t c) { return std::uint64_t{c}; };

// The k-th smallest element (0-based) in the cells [lo[r], hi[r]) of each row, gathered: selected
// directly when each cell is one element, else by a weighted selection.
template <class M>
double kth_of_cells(const M& m, const std::vector<std::size_t>& lo, const std::vector<std::size_t>& hi,
                    std::uint64_t k) {
  bool single = true;
  for (std::size_t r = 0; r < m.rows && single; ++r) {
    for (std::size_t c = lo[r]; c < hi[r] && single; ++c) single = m.in_row(r, c, c + 1) == 1;
  }
  if (single) {
    std::vector<double> rest;
    for (std::size_t r = 0; r < m.rows; ++r) {
      for (std::size_t c = lo[r]; c < hi[r]; ++c) rest.push_back(m.value(r, c));
    }
    const auto at = rest.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(rest.begin(), at, rest.end());
    return *at;
  }
  std::vector<std::pair<double, std::uint64_t>> rest;  // value, elements
  for (std::size_t r = 0; r < m.rows; ++r) {
    for (std::size_t c = lo[r]; c < hi[r]; ++c) rest.emplace_back(m.value(r, c), m.in_row(r, c, c + 1));
  }
  // A weighted quickselect: split at the middle cell, keep the half whose elements hold rank k.
  // Linear where a sort of up to rows + cols cells was 5 % of `abvm analyze` at 2 x 1M.
  auto first = rest.begin(), last = rest.end();
  while (last - first > 1) {
    const auto mid = first + (last - first) / 2;
    std::nth_element(first, mid, last);
    std::uint64_t left = 0;
    for (auto it = first; it != mid; ++it) left += it->second;
    if (k < left) {
      last = mid;
    } else {
      k -= left;
      first = mid;
    }
  }
  if (first == last || k >= first->second) {
    throw std::logic_error("Hodges-Lehmann selection: rank beyond the candidates");
  }
  return first->first;
}

// The k-th smallest (0-based) element of the matrix. Candidates are kept as one column range per
// row. Each round samples up to 4096 candidates, takes two sample values that bracket the target
// rank with high probability (Floyd-Rivest style), counts the elements below / up to each pivot
// with a staircase walk (O(rows + cols), valid because the whole matrix is sorted both ways) and
// discards what lies outside. A round keeps about 3/sqrt(sample size) of the candidates, so a
// handful of rounds reach the last <= rows + cols cells, which are gathered and selected directly. A
// pivot outside the target is always discarded, so every round makes progress even when the bracket
// misses.
template <class M>
double select_kth(const M& m, std::uint64_t k) {
  const std::size_t rows = m.rows, cols = m.cols;
  std::vector<std::size_t> lo(rows), hi(rows, cols), lt(rows), le(rows);
  std::vector<std::uint64_t> prefix(rows);  // the candidates of rows 0..r
  std::vector<double> sample;
  std::uint64_t below = 0, candidates = 0, cells = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    lo[r] = m.start(r);
    prefix[r] = candidates += m.in_row(r, lo[r], cols);
    cells += cols - lo[r];
  }
  SplitMix rng{0x5EEDABADCAFEULL};
  const std::uint64_t small = static_cast<std::uint64_t>(rows) + cols;

  // lt[r] / le[r] = max(start(r), first column whose value is >= p / > p); returns how many
  // elements are < p and <= p.
  auto staircase = [&](double p) {
    std::uint64_t count_lt = 0, count_le = 0;
    std::size_t c_lt = cols, c_le = cols;
    for (std::size_t r = 0; r < rows; ++r) {
      while (c_lt > 0 && m.value(r, c_lt - 1) >= p) --c_lt;
      while (c_le > 0 && m.value(r, c_le - 1) > p) --c_le;
      lt[r] = std::max(c_lt, m.start(r));
      le[r] = std::max(c_le, m.start(r));
      count_lt += m.in_row(r, m.start(r), lt[r]);
      count_le += m.in_row(r, m.start(r), le[r]);
    }
    return std::pair{count_lt, count_le};
  };

  while (cells > small) {
    // Sampling costs s log(rows) against 2 passes of rows + cols: keep s well below the latter.
    sample.resize(static_cast<std::size_t>(std::min(cells, std::clamp<std::uint64_t>(small / 8, 64, 4096))));
    for (double& v : sample) {
      const std::uint64_t t = rng() % candidates;
      const auto r = static_cast<std::size_t>(std::upper_bound(prefix.begin(), prefix.end(), t) - prefix.begin());
      const std::uint64_t before = r == 0 ? 0 : prefix[r - 1];
      v = m.value(r, m.column_of(lo[r], hi[r], (t - before) / m.weight(r)));
    }
    std::sort(sample.begin(), sample.end());
    const double s = static_cast<double>(sample.size());
    const double centre = static_cast<double>(k - below) / static_cast<double>(candidates) * s;
    const double spread = 1.5 * std::sqrt(s) + 1;  // ~3 standard deviations of the sample rank
    const auto sample_at = [&](double i) { return sample[static_cast<std::size_t>(std::clamp(i, 0.0, s - 1))]; };
    for (const double p : {sample_at(std::floor(centre - spread)), sample_at(std::ceil(centre + spread))}) {
      const auto [count_lt, count_le] = staircase(p);
      if (k < count_lt) {
        for (std::size_t r = 0; r < rows; ++r) hi[r] = std::max(lo[r], std::min(hi[r], lt[r]));
      } else if (k >= count_le) {
        for (std::size_t r = 0; r < rows; ++r) lo[r] = std::min(hi[r], std::max(lo[r], le[r]));
      } else {
        return p;
      }
    }
    below = candidates = cells = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      below += m.in_row(r, m.start(r), lo[r]);
      prefix[r] = candidates += m.in_row(r, lo[r], hi[r]);
      cells += hi[r] - lo[r];
    }
  }
  return kth_of_cells(m, lo, hi, k - below);
}

void require_sorted(std::span<const double> v, const char* what) {
  if (!std::is_sorted(v.begin(), v.end())) throw std::invalid_argument(std::string(what) + " is not sorted");
}

std::uint64_t checked_product(std::size_t n, std::size_t m) {
  if (m != 0 && n > std::numeric_limits<std::uint64_t>::max() / m) {
    throw std::invalid_argument("Hodges-Lehmann: too many pairs to count");
  }
  return static_cast<std::uint64_t>(n) * m;
}

void require_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("confidence must be strictly between 0 and 1");
  }
}

// The lower interval rank k (1-based) and its coverage.
struct IntervalRank {
  std::uint64_t k = 1;
  double achieved = 0;
};

// Largest k with coverage 1 - 2 P(S <= k-1) >= confidence, for a statistic S whose null
// distribution is `cdf` over 0..total. The tolerance keeps a coverage that equals the target
// up to rounding (e.g. a tail of exactly 0.025) on the accepted side.
IntervalRank exact_rank(const std::vector<double>& cdf, double confidence, std::uint64_t total) {
  const double alpha = 1 - confidence;
  const std::uint64_t k_max = std::max<std::uint64_t>(1, (total + 1) / 2);
  std::uint64_t k = 1;
  while (k < k_max && 2 * cdf[k] <= alpha + 1e-12) ++k;
  return {k, std::max(0.0, 1 - 2 * cdf[k - 1])};
}

// Same from the normal approximation of S (mean mu, standard deviation sigma) with continuity
// correction: P(S <= k-1) ~ Phi((k - 1/2 - mu) / sigma).
IntervalRank normal_rank(double mu, double sigma, double confidence, std::uint64_t total) {
  const double z = normal_upper_quantile((1 - confidence) / 2);
  const double k_max = std::max(1.0, std::floor((static_cast<double>(total) + 1) / 2));
  const double k = std::clamp(std::floor(mu + 0.5 - z * sigma), 1.0, k_max);
  const double achieved = 1 - 2 * normal_sf((mu - (k - 0.5)) / sigma);
  return {static_cast<std::uint64_t>(k), std::max(0.0, achieved)};
}

// No rank interval covers more than the widest one can (`ceiling`, see mann_whitney_max_confidence):
// an approximation that claims more is cut down to it, and when even the widest falls short of
// `confidence` the widest is the answer (rank 1), as the exact tables give.
IntervalRank capped(IntervalRank rank, double ceiling, double confidence) {
  if (ceiling + 1e-12 < confidence) return {1, ceiling};
  rank.achieved = std::min(rank.achieved, ceiling);
  return rank;
}

// How many elements of the matrix are <= p, and the smallest one above p (infinity when none is):
// one staircase walk.
template <class M>
std::pair<std::uint64_t, double> count_up_to(const M& m, double p) {
  std::uint64_t count = 0;
  double above = std::numeric_limits<double>::infinity();
  std::size_t c = m.cols;  // the first column of row r whose value is > p (it moves left as r grows)
  for (std::size_t r = 0; r < m.rows; ++r) {
    while (c > 0 && m.value(r, c - 1) > p) --c;
    const std::size_t first = std::max(c, m.start(r));
    count += m.in_row(r, m.start(r), first);
    if (first < m.cols) above = std::min(above, m.value(r, first));
  }
  return {count, above};
}

// Median of the matrix's `total` elements: the mean of the two middle ones for an even count, the
// upper one found from the lower with one staircase walk instead of a selection.
template <class M>
double median_by_selection(const M& m, std::uint64_t total) {
  if (total % 2 == 1) return select_kth(m, total / 2);
  const double lower = select_kth(m, total / 2 - 1);
  const auto [up_to_lower, above] = count_up_to(m, lower);
  const double upper = up_to_lower > total / 2 ? lower : above;
  return (lower + upper) / 2;
}

// The first column each row keeps: every one, or those from the diagonal on.
constexpr auto every_column = [](std::size_t) { return std::size_t{0}; };
constexpr auto upper_triangle = [](std::size_t r) { return r; };

// Row r of the pairwise differences holds x in descending order, so y[c] - x[n-1-r] grows along rows
// and columns.
auto pairwise_differences(std::span<const double> x, std::span<const double> y) {
  return [x, y](std::size_t r, std::size_t c) { return y[c] - x[x.size() - 1 - r]; };
}

auto pairwise_matrix(std::span<const double> x, std::span<const double> y) {
  return Matrix{x.size(), y.size(), every_column, pairwise_differences(x, y), one_each, counted_columns};
}

// The full symmetric matrix (d_r + d_c)/2 is sorted both ways; row r keeps its columns c >= r.
auto walsh_matrix(std::span<const double> d) {
  return Matrix{d.size(), d.size(), upper_triangle, [d](std::size_t r, std::size_t c) { return (d[r] + d[c]) / 2; },
                one_each, counted_columns};
}

// Sorted values without repeats, each with how many times it occurs: `before[i]` values come before
// the i-th distinct one (before.back(): all of them).
struct Distinct {
  std::vector<double> values;
  std::vector<std::uint64_t> before;
};

Distinct distinct(std::span<const double> sorted) {
  Distinct d;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i] == sorted[i - 1]) continue;
    d.values.push_back(sorted[i]);
    d.before.push_back(i);
  }
  d.before.push_back(sorted.size());
  return d;
}

// The pairwise differences y - x over the distinct values of each side, weighted by their counts: the
// same elements in fewer rows and columns when values repeat (2 x 1M values printed to 6 digits hold
// about 210,000 distinct ones a side, and every staircase walk is that much shorter).
auto distinct_pairwise_matrix(const Distinct& x, const Distinct& y) {
  const std::size_t n = x.values.size();
  return Matrix{n, y.values.size(), every_column, pairwise_differences(x.values, y.values),
                [&x, n](std::size_t r) { return x.before[n - r] - x.before[n - 1 - r]; },
                [&y](std::size_t c) { return y.before[c]; }};
}

}  // namespace

double kth_pairwise_difference(std::span<const double> x_sorted, std::span<const double> y_sorted, std::uint64_t k) {
  if (x_sorted.empty() || y_sorted.empty()) throw std::invalid_argument("pairwise differences of an empty sample");
  require_finite(x_sorted, "pairwise differences: x");
  require_finite(y_sorted, "pairwise differences: y");
  require_sorted(x_sorted, "pairwise differences: x");
  require_sorted(y_sorted, "pairwise differences: y");
  const std::uint64_t total = checked_product(x_sorted.size(), y_sorted.size());
  if (k >= total) throw std::invalid_argument("pairwise differences: rank out of range");
  return select_kth(pairwise_matrix(x_sorted, y_sorted), k);
}

double kth_walsh_average(std::span<const double> d_sorted, std::uint64_t k) {
  if (d_sorted.empty()) throw std::invalid_argument("Walsh averages of an empty sample");
  require_finite(d_sorted, "Walsh averages");
  require_sorted(d_sorted, "Walsh averages");
  const std::size_t n = d_sorted.size();
  const std::uint64_t total = checked_product(n, n + 1) / 2;
  if (k >= total) throw std::invalid_argument("Walsh averages: rank out of range");
  return select_kth(walsh_matrix(d_sorted), k);
}

ShiftEstimate hodges_lehmann_shift(std::span<const double> x, std::span<const double> y, double confidence) {
  if (x.empty() || y.empty()) throw std::invalid_argument("Hodges-Lehmann shift needs two non-empty samples");
  require_finite(x, "Hodges-Lehmann sample x");
  require_finite(y, "Hodges-Lehmann sample y");
  require_confidence(confidence);
  std::vector<double> x_store, y_store;
  const std::span<const double> xs = ascending(x, x_store), ys = ascending(y, y_store);
  const std::uint64_t total = checked_product(xs.size(), ys.size());
  const Distinct dx = distinct(xs), dy = distinct(ys);
  const auto differences = distinct_pairwise_matrix(dx, dy);
  auto kth = [&](std::uint64_t k) { return select_kth(differences, k); };

  ShiftEstimate out;
  out.confidence = confidence;
  out.estimate = median_by_selection(differences, total);
  std::vector<std::size_t> ties = tie_sizes_of_sorted(xs);
  const std::vector<std::size_t> ties_y = tie_sizes_of_sorted(ys);
  ties.insert(ties.end(), ties_y.begin(), ties_y.end());
  IntervalRank rank;
  if (ties.empty() && total <= kMannWhitneyExactMaxProduct) {
    rank = exact_rank(mann_whitney_null_cdf(xs.size(), ys.size()), confidence, total);
    out.exact = true;
    out.method = kShiftExactMethod;
  } else {
    const double nm = static_cast<double>(total);
    const double big_n = static_cast<double>(xs.size() + ys.size());
    const double sigma = std::sqrt(nm / 12 * ((big_n + 1) - tie_term(ties) / (big_n * (big_n - 1))));
    rank = capped(normal_rank(nm / 2, sigma, confidence, total), mann_whitney_max_confidence(xs.size(), ys.size()),
                  confidence);
    out.method = kShiftNormalMethod;
  }
  out.low = kth(rank.k - 1);
  out.high = kth(total - rank.k);
  out.achieved_confidence = rank.achieved;
  return out;
}

ShiftEstimate hodges_lehmann_paired(std::span<const double> d, double confidence) {
  if (d.empty()) throw std::invalid_argument("paired Hodges-Lehmann needs at least one difference");
  require_finite(d, "paired Hodges-Lehmann input");
  require_confidence(confidence);
  std::vector<double> store;
  const std::span<const double> ds = ascending(d, store);
  const std::size_t n = ds.size();
  const std::uint64_t total = checked_product(n, n + 1) / 2;
  auto kth = [&](std::uint64_t k) { return kth_walsh_average(ds, k); };

  ShiftEstimate out;
  out.confidence = confidence;
  out.estimate = median_by_selection(walsh_matrix(ds), total);
  const std::vector<std::size_t> ties = tie_sizes_of_sorted(ds);
  IntervalRank rank;
  if (ties.empty() && n <= kWilcoxonExactMaxN) {
    rank = exact_rank(wilcoxon_null_cdf(n), confidence, total);
    out.exact = true;
    out.method = kPairedExactMethod;
  } else {
    const double nd = static_cast<double>(n);
    const double sigma = std::sqrt(nd * (nd + 1) * (2 * nd + 1) / 24 - tie_term(ties) / 48);
    rank = capped(normal_rank(static_cast<double>(total) / 2, sigma, confidence, total), wilcoxon_max_confidence(n),
                  confidence);
    out.method = kPairedNormalMethod;
  }
  out.low = kth(rank.k - 1);
  out.high = kth(total - rank.k);
  out.achieved_confidence = rank.achieved;
  return out;
}

}  // namespace abvm::stats
