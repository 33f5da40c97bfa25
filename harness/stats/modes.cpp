#include "stats/modes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "stats/descriptive.hpp"

namespace abvm::stats {

namespace {

constexpr double shallow_ratio = 0.5;
constexpr double min_separation = 5.0;
constexpr std::size_t max_grid = std::size_t{1} << 18;

struct Antimode {
  double cut = 0;     // log scale
  double depth = 0;   // density at the cut
};

// Density estimate on an even grid by linear binning and a truncated Gaussian kernel:
// O(n + grid x kernel width) instead of O(n x grid), so 2 x 100,000 runs cost milliseconds.
struct Density {
  double lo = 0, step = 0;
  std::vector<double> d;
};

Density estimate(const std::vector<double>& x, double h) {
  Density k;
  k.lo = x.front() - 3 * h;
  const double range = (x.back() + 3 * h) - k.lo;
  const auto wanted = static_cast<std::size_t>(std::ceil(range / (h / 4))) + 1;
  const std::size_t m = std::clamp<std::size_t>(wanted, 64, max_grid);
  k.step = range / static_cast<double>(m - 1);
  std::vector<double> w(m, 0.0);
  for (double v : x) {
    const double pos = (v - k.lo) / k.step;
    const auto j = std::min(static_cast<std::size_t>(pos), m - 2);
    const double frac = pos - static_cast<double>(j);
    w[j] += 1 - frac;
    w[j + 1] += frac;
  }
  const auto half = std::min<std::size_t>(m - 1, static_cast<std::size_t>(std::ceil(5 * h / k.step)));
  std::vector<double> kernel(half + 1);
  for (std::size_t t = 0; t <= half; ++t) {
    const double z = static_cast<double>(t) * k.step / h;
    kernel[t] = std::exp(-0.5 * z * z);
  }
  k.d.assign(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    if (w[i] == 0) continue;
    const std::size_t from = i >= half ? i - half : 0;
    const std::size_t to = std::min(m - 1, i + half);
    for (std::size_t j = from; j <= to; ++j) k.d[j] += w[i] * kernel[j > i ? j - i : i - j];
  }
  return k;
}

// Pooled within-group standard deviation of two adjacent runs of sorted values and the distance
// of their means in units of it.
double separation(std::span<const double> lower, std::span<const double> upper) {
  auto mean = [](std::span<const double> s) {
    double sum = 0;
    for (double v : s) sum += v;
    return sum / static_cast<double>(s.size());
  };
  const double m1 = mean(lower), m2 = mean(upper);
  double ss = 0;
  for (double v : lower) ss += (v - m1) * (v - m1);
  for (double v : upper) ss += (v - m2) * (v - m2);
  const double df = static_cast<double>(lower.size() + upper.size()) - 2;
  const double sd = df > 0 ? std::sqrt(ss / df) : 0;
  if (sd == 0) return m1 == m2 ? 0 : std::numeric_limits<double>::infinity();
  return std::abs(m2 - m1) / sd;
}

// Cut points in log scale for sorted log values x.
std::vector<double> log_cuts(const std::vector<double>& x) {
  const std::size_t n = x.size();
  const std::size_t min_count = std::max<std::size_t>(3, (n + 9) / 10);
  if (n < 2 * min_count) return {};
  const Summary s = summarize(x, x);
  double scale = s.sd;
  for (double c : {s.iqr / 1.349, 1.4826 * s.mad}) {
    if (c > 0 && c < scale) scale = c;
  }
  if (scale <= 0) return {};
  const double h = 0.9 * scale * std::pow(static_cast<double>(n), -0.2);
  const Density k = estimate(x, h);

  std::vector<double> peaks;
  std::vector<Antimode> antimodes;
  std::size_t last_peak = 0;
  for (std::size_t i = 1; i + 1 < k.d.size(); ++i) {
    if (!(k.d[i] > k.d[i - 1] && k.d[i] >= k.d[i + 1])) continue;
    if (!peaks.empty()) {
      const auto first = k.d.begin() + static_cast<std::ptrdiff_t>(last_peak);
      const auto end = k.d.begin() + static_cast<std::ptrdiff_t>(i) + 1;
      const auto lowest = std::min_element(first, end);
      // The last index of the lowest flat stretch, to put the cut in its middle.
      auto last = lowest;
      while (last + 1 != end && *(last + 1) == *lowest) ++last;
      const double mid = (static_cast<double>(lowest - k.d.begin()) + static_cast<double>(last - k.d.begin())) / 2;
      antimodes.push_back({k.lo + mid * k.step, *lowest});
    }
    peaks.push_back(k.d[i]);
    last_peak = i;
  }

  auto merge = [&](std::size_t j) {  // remove antimode j, joining modes j and j + 1
    peaks[j] = std::max(peaks[j], peaks[j + 1]);
    peaks.erase(peaks.begin() + static_cast<std::ptrdiff_t>(j) + 1);
    antimodes.erase(antimodes.begin() + static_cast<std::ptrdiff_t>(j));
  };
  // Mode i holds x[bounds[i], bounds[i + 1]).
  auto bounds = [&] {
    std::vector<std::size_t> b{0};
    for (const Antimode& am : antimodes) {
      b.push_back(static_cast<std::size_t>(std::lower_bound(x.begin(), x.end(), am.cut) - x.begin()));
    }
    b.push_back(n);
    return b;
  };

  while (!antimodes.empty()) {  // a. too small
    const auto b = bounds();
    std::size_t k_small = 0;
    for (std::size_t i = 1; i + 1 < b.size(); ++i) {
      if (b[i + 1] - b[i] < b[k_small + 1] - b[k_small]) k_small = i;
    }
    if (b[k_small + 1] - b[k_small] >= min_count) break;
    std::size_t j = 0;
    if (k_small == antimodes.size()) {
      j = k_small - 1;
    } else if (k_small > 0) {
      j = antimodes[k_small - 1].depth >= antimodes[k_small].depth ? k_small - 1 : k_small;
    }
    merge(j);
  }
  while (!antimodes.empty()) {  // b. too shallow
    std::size_t worst = 0;
    double worst_ratio = -1;
    for (std::size_t j = 0; j < antimodes.size(); ++j) {
      const double ratio = antimodes[j].depth / std::min(peaks[j], peaks[j + 1]);
      if (ratio > worst_ratio) worst = j, worst_ratio = ratio;
    }
    if (worst_ratio <= shallow_ratio) break;
    merge(worst);
  }
  const double needed = min_separation * std::max(1.0, std::sqrt(20.0 / static_cast<double>(n)));
  while (!antimodes.empty()) {  // c. too close
    const auto b = bounds();
    const std::span<const double> all(x);
    std::size_t worst = 0;
    double worst_sep = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < antimodes.size(); ++j) {
      const double sep = separation(all.subspan(b[j], b[j + 1] - b[j]), all.subspan(b[j + 1], b[j + 2] - b[j + 1]));
      if (sep < worst_sep) worst = j, worst_sep = sep;
    }
    if (worst_sep >= needed) break;
    merge(worst);
  }
  std::vector<double> cuts;
  for (const Antimode& am : antimodes) cuts.push_back(am.cut);
  return cuts;
}

// ModeSplit::dominant: the largest share of both sides, each weighing alike; on a tie the mode both
// sides share most, then the narrower.
std::size_t dominant_mode(const std::vector<Mode>& modes) {
  auto held = [](const Mode& m) { return m.a_fraction + m.b_fraction; };
  auto shared = [](const Mode& m) { return std::min(m.a_fraction, m.b_fraction); };
  auto width = [](const Mode& m) { return m.low > 0 ? m.high / m.low : 1.0; };
  std::size_t best = 0;
  for (std::size_t i = 1; i < modes.size(); ++i) {
    const Mode &m = modes[i], &d = modes[best];
    if (held(m) != held(d)) {
      if (held(m) > held(d)) best = i;
    } else if (shared(m) != shared(d)) {
      if (shared(m) > shared(d)) best = i;
    } else if (width(m) < width(d)) {
      best = i;
    }
  }
  return best;
}

}  // namespace

std::size_t mode_of(const ModeSplit& split, double value) {
  return static_cast<std::size_t>(std::upper_bound(split.cuts.begin(), split.cuts.end(), value) - split.cuts.begin());
}

namespace {

void require_positive(std::span<const double> v) {
  for (double x : v) {
    if (!(std::isfinite(x) && x > 0)) throw std::invalid_argument("find_modes: values must be finite and positive (log scale)");
  }
}

// Two ascending sides walked as one: `each(v)` for each value in ascending order, until it returns false.
template <class Each>
void merged(std::span<const double> a, std::span<const double> b, Each each) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (!each(j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i++] : b[j++])) return;
  }
}

// Both sides' logs, ascending: the merge of the sides' logs (logs of ascending values ascend too;
// sorted should a log ever break that).
std::vector<double> pooled_logs(std::span<const double> a, std::span<const double> b) {
  std::vector<double> x;
  x.reserve(a.size() + b.size());
  merged(a, b, [&](double v) {
    x.push_back(std::log(v));
    return true;
  });
  if (!std::is_sorted(x.begin(), x.end())) std::sort(x.begin(), x.end());
  return x;
}

// The median of two ascending sides together, as median() of their values: the middle one, or
// the mean of the middle pair. Without gathering them: at 2 x 1M units a mode's members took 22 MB.
double median_of_both(std::span<const double> a, std::span<const double> b) {
  const std::size_t n = a.size() + b.size();
  double before = 0, at = 0;  // the values of ranks n/2 - 1 and n/2 (0-based) once the walk is there
  std::size_t rank = 0;
  merged(a, b, [&](double v) {
    before = at;
    at = v;
    return rank++ < n / 2;
  });
  return n % 2 == 1 ? at : std::midpoint(before, at);
}

// The values of ascending `v` in mode i: from the first at or above cut i - 1 to the first at or
// above cut i (mode_of).
std::span<const double> in_mode(const ModeSplit& split, std::span<const double> v, std::size_t i) {
  const auto from = i == 0 ? v.begin() : std::lower_bound(v.begin(), v.end(), split.cuts[i - 1]);
  const auto to = i == split.cuts.size() ? v.end() : std::lower_bound(from, v.end(), split.cuts[i]);
  return {from, to};
}

}  // namespace

// Both sides ascending (sorted copies when they are not given so): each mode is then a range of
// each side.
ModeSplit find_modes(std::span<const double> a_given, std::span<const double> b_given) {
  require_positive(a_given);
  require_positive(b_given);
  std::vector<double> a_store, b_store;
  const std::span<const double> a = ascending(a_given, a_store), b = ascending(b_given, b_store);
  const std::vector<double> x = pooled_logs(a, b);
  if (x.empty()) throw std::invalid_argument("find_modes: no values");

  ModeSplit split;
  for (double c : log_cuts(x)) split.cuts.push_back(std::exp(c));
  split.modes.resize(split.cuts.size() + 1);
  for (std::size_t i = 0; i < split.modes.size(); ++i) {
    Mode& m = split.modes[i];
    const std::span<const double> ma = in_mode(split, a, i), mb = in_mode(split, b, i);
    m.a_count = ma.size();
    m.b_count = mb.size();
    m.a_fraction = a.empty() ? 0 : static_cast<double>(m.a_count) / static_cast<double>(a.size());
    m.b_fraction = b.empty() ? 0 : static_cast<double>(m.b_count) / static_cast<double>(b.size());
    if (ma.empty() && mb.empty()) continue;
    m.low = ma.empty() ? mb.front() : mb.empty() ? ma.front() : std::min(ma.front(), mb.front());
    m.high = ma.empty() ? mb.back() : mb.empty() ? ma.back() : std::max(ma.back(), mb.back());
    m.median = median_of_both(ma, mb);
  }
  split.dominant = dominant_mode(split.modes);
  return split;
}

}  // namespace abvm::stats
