#include "plan/group_sequential.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace abvm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Cells per grid (even: the density is quadratic over each pair of cells). The interpolation
// error is O(h^3): with 400 cells over at most +-10 standard deviations the boundaries agree
// with those computed on 4000 cells to 1e-6 (the published ones have 3 decimals).
constexpr int kCells = 400;
// Beyond 10 standard deviations a normal density or tail is below 1e-23: nothing to carry.
constexpr double kSpan = 10;

double cdf(double w) { return 0.5 * std::erfc(-w / std::numbers::sqrt2); }
double pdf(double w) { return std::exp(-0.5 * w * w) / std::sqrt(2 * std::numbers::pi); }

// The sub-density of S_k on "no boundary crossed up to look k" at the points x0 + i h, quadratic
// through the three points of each pair of cells.
struct Grid {
  double x0 = 0;
  double h = 0;
  std::vector<double> f;
  double x(std::size_t i) const { return x0 + h * static_cast<double>(i); }
  std::size_t pairs() const { return (f.size() - 1) / 2; }
};

// Pair j's quadratic at u = y + s w, as A + B w + C w^2 (Newton's form from its first point).
struct Quadratic {
  double a, b, c;
};
Quadratic pair_at(const Grid& g, std::size_t j, double y, double s) {
  const std::size_t i = 2 * j;
  const double d1 = (g.f[i + 1] - g.f[i]) / g.h;
  const double d2 = (g.f[i + 2] - 2 * g.f[i + 1] + g.f[i]) / (2 * g.h * g.h);
  const double p0 = y - g.x(i);
  const double p1 = y - g.x(i + 1);
  return {g.f[i] + d1 * p0 + d2 * p0 * p1, s * (d1 + d2 * (p0 + p1)), d2 * s * s};
}

// P(no crossing before look k, S_k >= b), from the grid of look k-1 and the increment's sd s:
// the integral of the quadratics times Phi((u - b) / s), exactly. With w = (u - b) / s, the
// antiderivatives of Phi, w Phi and w^2 Phi are w Phi + phi, ((w^2 - 1) Phi + w phi) / 2 and
// (w^3 Phi + (w^2 + 2) phi) / 3. Where Phi is 1 over a whole pair, Simpson's rule is exact.
double upward_crossing(const Grid& g, double b, double s) {
  double p = 0;
  for (std::size_t j = 0; j < g.pairs(); ++j) {
    const double w0 = (g.x(2 * j) - b) / s;
    const double w2 = (g.x(2 * j + 2) - b) / s;
    if (w2 < -kSpan) continue;
    if (w0 > kSpan) {
      p += g.h / 3 * (g.f[2 * j] + 4 * g.f[2 * j + 1] + g.f[2 * j + 2]);
      continue;
    }
    const Quadratic q = pair_at(g, j, b, s);
    const auto antiderivative = [&](double w) {
      const double cw = cdf(w);
      const double pw = pdf(w);
      return q.a * (w * cw + pw) + q.b * ((w * w - 1) * cw + w * pw) / 2 + q.c * (w * w * w * cw + (w * w + 2) * pw) / 3;
    };
    p += s * (antiderivative(w2) - antiderivative(w0));
  }
  return p;
}

// The density of S_k at x on "no crossing before k": the grid of look k-1 convolved with the
// increment's N(0, s^2), exactly for the quadratics, over the pairs within kSpan s of x. With
// u = x + s w: the integral of (A + B w + C w^2) phi(w) is A Phi - B phi + C (Phi - w phi).
double carried_density(const Grid& g, double x, double s) {
  const double n = static_cast<double>(g.pairs());
  const double width = 2 * g.h;
  const auto first = static_cast<std::size_t>(std::clamp(std::floor((x - kSpan * s - g.x0) / width), 0.0, n));
  const auto last = static_cast<std::size_t>(std::clamp(std::ceil((x + kSpan * s - g.x0) / width), 0.0, n));
  double d = 0;
  double w0 = (g.x(2 * first) - x) / s;
  double c0 = cdf(w0);
  double p0 = pdf(w0);
  for (std::size_t j = first; j < last; ++j) {
    const Quadratic q = pair_at(g, j, x, s);
    const double w2 = (g.x(2 * j + 2) - x) / s;
    const double c2 = cdf(w2);
    const double p2 = pdf(w2);
    d += q.a * (c2 - c0) - q.b * (p2 - p0) + q.c * ((c2 - c0) - (w2 * p2 - w0 * p0));
    w0 = w2;
    c0 = c2;
    p0 = p2;
  }
  return d;
}

// The looks one after the other: the crossing probability of a candidate boundary at the next
// look, then the step to it once its boundary is fixed.
class Recursion {
 public:
  explicit Recursion(std::span<const double> t) : t_(t) {}

  double crossing_at_next(double c) const {
    if (std::isinf(c)) return 0;
    if (k_ == 0) return 2 * normal_upper_tail(c);
    // The density is symmetric: crossing downward is as likely as crossing upward.
    return 2 * upward_crossing(grid_, c * std::sqrt(t_[k_]), std::sqrt(t_[k_] - t_[k_ - 1]));
  }

  // The density of Z_k at c plus at -c on "no crossing before k" (minus the derivative of
  // crossing_at_next).
  double density_at_next(double c) const {
    const double sd = std::sqrt(t_[k_]);
    const double s = std::sqrt(t_[k_] - t_[k_ - 1]);
    return sd * (carried_density(grid_, c * sd, s) + carried_density(grid_, -c * sd, s));
  }

  void advance(double c) {
    const double sd = std::sqrt(t_[k_]);
    const double half = std::min(c * sd, kSpan * sd);
    Grid next{.x0 = -half, .h = 2 * half / kCells, .f = std::vector<double>(kCells + 1)};
    // The boundaries are symmetric, so is the density: half of the grid, mirrored.
    for (std::size_t i = 0; i <= kCells / 2; ++i) {
      const double x = next.x(i);
      next.f[i] = k_ == 0 ? pdf(x / sd) / sd : carried_density(grid_, x, std::sqrt(t_[k_] - t_[k_ - 1]));
      next.f[kCells - i] = next.f[i];
    }
    grid_ = std::move(next);
    ++k_;
  }

 private:
  std::span<const double> t_;
  std::size_t k_ = 0;
  Grid grid_;
};

void require_fractions(std::span<const double> t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] > 0 && t[i] <= 1) || (i > 0 && !(t[i] > t[i - 1]))) {
      throw std::invalid_argument("group-sequential looks need information fractions increasing in (0, 1]");
    }
  }
}

// The c with crossing probability `target` at the next look: Newton steps on c (the derivative is
// minus the density of Z_k at +-c on the continuation region), kept inside a bisection bracket
// (the probability falls as c grows). Far beyond any real boundary, 40 stands for "cannot stop".
double solve_boundary(const Recursion& r, double target, double start) {
  if (target <= 0) return kInf;
  double lo = 0;
  double hi = 40;
  if (r.crossing_at_next(hi) >= target) return hi;
  double c = std::clamp(start, 0.5, 39.0);
  for (int i = 0; i < 100 && hi - lo > 1e-9; ++i) {
    const double excess = r.crossing_at_next(c) - target;
    if (std::abs(excess) <= 1e-15 + 1e-10 * target) return c;
    (excess > 0 ? lo : hi) = c;
    const double next = c + excess / r.density_at_next(c);
    c = next > lo && next < hi ? next : (lo + hi) / 2;
  }
  return c;
}

}  // namespace

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

double normal_upper_quantile_of(double upper) {
  if (!(upper > 0 && upper < 1)) throw std::invalid_argument("normal quantile needs 0 < p < 1");
  return std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * upper);
}

double alpha_spent(SpendingFunction f, double alpha, double t) {
  if (!(alpha > 0 && alpha < 1) || !(t >= 0)) throw std::invalid_argument("alpha_spent: need 0 < alpha < 1, t >= 0");
  if (t >= 1) return alpha;
  if (t == 0) return 0;
  if (f == SpendingFunction::pocock) return alpha * std::log(1 + (std::numbers::e - 1) * t);
  // Each side spends alpha / 2 by the one-sided O'Brien-Fleming-type function, as in Lan & DeMets
  // (1983), DeMets & Lan (1994), ldbounds and gsDesign; the published boundaries are these.
  return 4 * normal_upper_tail(normal_upper_quantile_of(alpha / 4) / std::sqrt(t));
}

std::vector<double> crossing_probabilities(std::span<const double> t, std::span<const double> c) {
  require_fractions(t);
  if (c.size() != t.size() || std::any_of(c.begin(), c.end(), [](double v) { return !(v > 0); })) {
    throw std::invalid_argument("crossing_probabilities: one positive boundary per look");
  }
  Recursion r(t);
  std::vector<double> p;
  for (double ck : c) {
    p.push_back(r.crossing_at_next(ck));
    r.advance(ck);
  }
  return p;
}

std::vector<double> boundaries_for_increments(std::span<const double> t, std::span<const double> increments) {
  require_fractions(t);
  double total = 0;
  for (double a : increments) {
    if (!(a >= 0)) throw std::invalid_argument("boundaries_for_increments: negative increment");
    total += a;
  }
  if (increments.size() != t.size() || !(total < 1)) {
    throw std::invalid_argument("boundaries_for_increments: one increment per look, summing to less than 1");
  }
  Recursion r(t);
  std::vector<double> c;
  for (std::size_t k = 0; k < t.size(); ++k) {
    // The first look is a plain normal tail: no grid, no bisection.
    c.push_back(k == 0 ? (increments[0] > 0 ? normal_upper_quantile_of(increments[0] / 2) : kInf)
                       : solve_boundary(r, increments[k], c.back()));
    r.advance(c.back());
  }
  return c;
}

std::vector<double> lan_demets_boundaries(SpendingFunction f, double alpha, std::span<const double> t) {
  std::vector<double> increments;
  double before = 0;
  for (double tk : t) {
    const double now = alpha_spent(f, alpha, tk);
    increments.push_back(std::max(0.0, now - before));
    before = now;
  }
  return boundaries_for_increments(t, increments);
}

}  // namespace abvm
