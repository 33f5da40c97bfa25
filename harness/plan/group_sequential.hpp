#pragma once
// Group-sequential boundaries: pure numerics, no config.
//
// The canonical joint distribution (Jennison & Turnbull 2000, ch. 3): at looks with information
// fractions 0 < t_1 < ... < t_K <= 1, the standardised statistics Z_k = S_k / sqrt(t_k) come from a
// score process S with independent normal increments, S_k - S_{k-1} ~ N(0, t_k - t_{k-1}) under H0,
// so Cov(Z_j, Z_k) = sqrt(t_j / t_k). The two-sided boundary c_k of look k is the one with
//   P(|Z_j| < c_j for j < k, |Z_k| >= c_k) = alpha(t_k) - alpha(t_{k-1}),
// so that the chance of crossing at any look is alpha(t_K) (= alpha when t_K = 1). Because the looks
// are positively correlated, c_k is smaller than the Bonferroni boundary of that increment: each
// look may use a wider nominal level 2 (1 - Phi(c_k)) at the same overall error rate.
//
// abvm's verdicts come from rank statistics (Mann-Whitney, Wilcoxon signed-rank, Hodges-Lehmann
// intervals), not from normal data. The boundaries rest on the asymptotic normal joint distribution
// of those statistics computed on growing samples (they are U-statistics, whose sequence has the
// canonical covariance with information proportional to the sample size), the standard
// justification for group-sequential rank tests. harness/bench/sequential_tool.cpp checks the
// error rate by simulation with the real analysis on seed-like bimodal data.
//
// Computation: the recursive numerical integration of Armitage, McPherson and Rowe (1969), as in
// Jennison & Turnbull ch. 19 and R's ldbounds/gsDesign: the sub-density of S_k on the continuation
// region is carried from look to look on a grid. Here that density is linear between grid points
// and the normal kernel of the increment is integrated exactly over each cell, so the grid need
// not be finer than the increment's standard deviation (looks may be close together).
#include <span>
#include <vector>

namespace abvm {

// Lan-DeMets spending functions: the two-sided error rate spent by information fraction t, each
// side spending half of it by the one-sided function (as ldbounds and gsDesign do for two-sided
// symmetric boundaries, and as the published tables are computed):
//   obrien_fleming  alpha(t) = 2 (2 - 2 Phi(z_{1-alpha/4} / sqrt(t)))  (O'Brien-Fleming-type)
//   pocock          alpha(t) = alpha ln(1 + (e - 1) t)                  (Pocock-type)
// Applying the O'Brien-Fleming-type function to the two-sided alpha at once (2 - 2 Phi(z_{1-alpha/2}
// / sqrt(t))) would spend more early and end with a narrower last look (K = 5: 2.064, not 2.031).
enum class SpendingFunction { obrien_fleming, pocock };

// alpha(t) for 0 <= t (t >= 1 spends all of alpha). Throws std::invalid_argument unless
// 0 < alpha < 1 and t >= 0.
double alpha_spent(SpendingFunction f, double alpha, double t);

// P(Z > z) for a standard normal Z; and its inverse (0 < upper < 1).
double normal_upper_tail(double z);
double normal_upper_quantile_of(double upper);

// The probability of first crossing the two-sided boundaries c at each look, under H0.
// c_k = +infinity is a look that cannot stop. Throws std::invalid_argument unless t is strictly
// increasing in (0, 1], c has the same size and every c_k > 0.
std::vector<double> crossing_probabilities(std::span<const double> t, std::span<const double> c);

// The boundaries c_k whose first-crossing probabilities are `increments` (each >= 0; a zero
// increment gives +infinity). Throws std::invalid_argument for t as above, sizes that differ,
// negative increments or a sum of 1 or more.
std::vector<double> boundaries_for_increments(std::span<const double> t, std::span<const double> increments);

// The Lan-DeMets boundaries of spending function f, overall two-sided alpha, at fractions t.
std::vector<double> lan_demets_boundaries(SpendingFunction f, double alpha, std::span<const double> t);

}  // namespace abvm
