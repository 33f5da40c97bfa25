#!/usr/bin/python3
"""Reference values for abvm's rank statistics (harness/stats/{mann_whitney,wilcoxon,hodges_lehmann,holm}).

Run:  /usr/bin/python3 harness/tests/reference/rank_reference.py > /tmp/rank_reference.txt
It prints C++ literals that are pasted into harness/tests/stats_rank_*_test.cpp (the C++ tests do
not need Python). Independent of the C++ code:
  - Mann-Whitney U and p, Wilcoxon W and p: SciPy (mannwhitneyu / wilcoxon with an explicit method).
  - Hodges-Lehmann estimates: brute force, every difference / Walsh average enumerated and sorted.
  - Interval ranks: SciPy's exact null distributions (checked here against itertools enumeration
    for small sizes) or the normal approximation stated in hodges_lehmann.hpp, applied to the
    brute-force sorted list.
  - Holm: the textbook step-down loop, written out (no statsmodels).
  - Kruskal-Wallis H and p: scipy.stats.kruskal (tie-corrected H, chi-square p).
"""
import itertools
import math
from fractions import Fraction

import numpy as np
import scipy
from scipy import stats
from scipy.stats._mannwhitneyu import _mwu_state
from scipy.stats._hypotests import _get_wilcoxon_distr

TOL = 1e-12  # same acceptance tolerance as exact_rank() in hodges_lehmann.cpp
MW_EXACT_MAX_PRODUCT = 2500
WSR_EXACT_MAX_N = 50

# The seed (../shared/seed, the virtio DMA API thread): dd wrote 8589934592 bytes ten times per side.
SEED_SECONDS_WITHOUT = [1.95557, 2.05176, 1.88314, 1.84899, 5.37184, 1.9205, 6.85166, 1.74049, 6.31699, 2.47057]
SEED_SECONDS_WITH = [2.25993, 1.82438, 1.93856, 1.83405, 7.50199, 2.28742, 5.74958, 1.99149, 5.67647, 2.93957]
SEED_X = [math.log(8589934592 / s) for s in SEED_SECONDS_WITHOUT]  # A: log bandwidth
SEED_Y = [math.log(8589934592 / s) for s in SEED_SECONDS_WITH]     # B


def lit(v):
    return "%.17g" % v


def arr(values):
    return "{" + ", ".join(lit(v) for v in values) + "}"


def has_repeats(v):
    return len(set(v)) != len(v)


def tie_term(v):
    _, counts = np.unique(np.asarray(v), return_counts=True)
    return float(sum(int(t) ** 3 - int(t) for t in counts))


def mw_exact_cdf(n, m):
    """P(U <= u), u = 0..n*m, from SciPy's exact null distribution."""
    return [float(_mwu_state.cdf(u, n, m)) for u in range(n * m + 1)]


def mw_cdf_by_enumeration(n, m):
    """The same by enumerating every split of ranks 1..n+m (brute force, small sizes only)."""
    counts = [0] * (n * m + 1)
    for xs in itertools.combinations(range(n + m), n):
        rank_sum = sum(r + 1 for r in xs)
        counts[rank_sum - n * (n + 1) // 2] += 1
    total = sum(counts)
    out, run = [], 0
    for c in counts:
        run += c
        out.append(Fraction(run, total))
    return out


def wsr_exact_cdf(n):
    return list(np.cumsum(_get_wilcoxon_distr(n)))


def wsr_cdf_by_enumeration(n):
    counts = [0] * (n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[sum((i + 1) * s for i, s in enumerate(signs))] += 1
    total = 2 ** n
    out, run = [], 0
    for c in counts:
        run += c
        out.append(Fraction(run, total))
    return out


def exact_rank(cdf, confidence, total):
    alpha = 1 - confidence
    k_max = max(1, (total + 1) // 2)
    k = 1
    while k < k_max and 2 * cdf[k] <= alpha + TOL:
        k += 1
    return k, max(0.0, 1 - 2 * float(cdf[k - 1]))


def normal_rank(mu, sigma, confidence, total):
    z = stats.norm.isf((1 - confidence) / 2)
    k_max = max(1, (total + 1) // 2)
    k = int(min(max(math.floor(mu + 0.5 - z * sigma), 1), k_max))
    return k, max(0.0, 1 - 2 * float(stats.norm.sf((mu - (k - 0.5)) / sigma)))


# Per-block log ratios of a pool's hosts: hosts that disagree, tied values, and agreeing hosts.
KRUSKAL = {
    "disagree": [[0.01, 0.03, -0.02, 0.00, 0.015], [0.05, 0.07, 0.04, 0.06], [0.02, 0.02, -0.01, 0.03, 0.0, 0.01]],
    "ties": [[1, 1, 2, 2, 3], [1, 2, 2, 3, 3, 3], [4, 4, 5]],
    "agree": [[0.1, -0.2, 0.3], [0.15, -0.1, 0.05, 0.2]],
}


def median_sorted(v):
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def hl_shift(x, y, confidence):
    diffs = sorted(yj - xi for xi in x for yj in y)
    n, m, total = len(x), len(y), len(x) * len(y)
    if not has_repeats(x) and not has_repeats(y) and total <= MW_EXACT_MAX_PRODUCT:
        k, achieved = exact_rank(mw_exact_cdf(n, m), confidence, total)
        exact = True
    else:
        big_n = n + m
        sigma = math.sqrt(total / 12 * ((big_n + 1) - (tie_term(x) + tie_term(y)) / (big_n * (big_n - 1))))
        k, achieved = normal_rank(total / 2, sigma, confidence, total)
        exact = False
    return dict(estimate=median_sorted(diffs), low=diffs[k - 1], high=diffs[total - k],
                achieved=achieved, exact=exact, k=k)


def hl_paired(d, confidence):
    n = len(d)
    ds = sorted(d)
    walsh = sorted((ds[i] + ds[j]) / 2 for i in range(n) for j in range(i, n))
    total = len(walsh)
    if not has_repeats(d) and n <= WSR_EXACT_MAX_N:
        k, achieved = exact_rank(wsr_exact_cdf(n), confidence, total)
        exact = True
    else:
        sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - tie_term(d) / 48)
        k, achieved = normal_rank(total / 2, sigma, confidence, total)
        exact = False
    return dict(estimate=median_sorted(walsh), low=walsh[k - 1], high=walsh[total - k],
                achieved=achieved, exact=exact, k=k)


def holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        out[i] = running
    return out


def self_checks():
    # SciPy's exact tables agree with brute-force enumeration (so the interval ranks do not rest on SciPy alone).
    for n, m in [(1, 1), (2, 3), (4, 4), (5, 7)]:
        a, b = mw_exact_cdf(n, m), mw_cdf_by_enumeration(n, m)
        assert all(abs(float(u) - float(v)) < 1e-12 for u, v in zip(a, b)), (n, m)
    for n in [1, 2, 5, 10]:
        a, b = wsr_exact_cdf(n), wsr_cdf_by_enumeration(n)
        assert all(abs(float(u) - float(v)) < 1e-12 for u, v in zip(a, b)), n


# Fixed datasets. Values chosen so each code path is hit: exact / asymptotic test, exact / normal
# interval, ties within and between samples, zeros, tiny samples.
rng = np.random.default_rng(20240611)
MEDIUM_X = [float(v) for v in np.round(rng.normal(8.3, 0.12, 60), 6)]          # 60 x 45 > 2500: normal
MEDIUM_Y = [float(v) for v in np.round(rng.normal(8.25, 0.15, 45), 6)]
BOUNDARY_X = [float(v) for v in np.round(rng.normal(0.0, 1.0, 25), 7)]         # 25 x 100 = 2500: still exact
BOUNDARY_Y = [float(v) for v in np.round(rng.normal(0.4, 1.0, 100), 7)]
assert not has_repeats(BOUNDARY_X + BOUNDARY_Y)
TWO_SAMPLE = {
    "seed": (SEED_X, SEED_Y),
    "small": ([0.12, -0.35, 0.88, 0.41, 1.07], [0.95, 1.31, 0.52, 1.66, 1.12, 0.77, 1.49]),
    "tied": ([3, 5, 5, 7, 8, 8, 8, 10], [6, 8, 9, 9, 11, 12, 12, 14, 15]),
    "medium": (MEDIUM_X, MEDIUM_Y),
    "boundary": (BOUNDARY_X, BOUNDARY_Y),
    "tiny": ([1.5, 2.5], [2.0, 4.0]),
    "single": ([1.0], [3.5]),
    "cross_tie_only": ([1.0, 2.0, 3.0, 4.0], [3.0, 5.0, 6.0, 7.5, 9.0]),
}
PAIRED = {
    "seed": [b - a for a, b in zip(SEED_X, SEED_Y)],
    "small": [0.31, -0.12, 0.58, 0.27, 0.94, -0.05, 0.44],
    "zeros_ties": [0.0, 0.2, -0.1, 0.2, 0.0, 0.5, 0.3, -0.1, 0.4, 0.2, 0.6, 0.7],
    "medium": [float(v) for v in np.round(rng.normal(0.03, 0.1, 70), 5)],          # n > 50: normal
    "tiny": [0.2, 0.5, -0.1],
}
HOLM = {
    "mixed": [0.01, 0.04, 0.03, 0.005, 0.5],
    "capped": [0.3, 0.6, 0.02],
    "equal": [0.01, 0.01, 0.2],
}


def mw_method(x, y):
    """The method abvm's mann_whitney() picks (mann_whitney.hpp)."""
    exact = not has_repeats(list(x) + list(y)) and len(x) * len(y) <= MW_EXACT_MAX_PRODUCT
    return "exact" if exact else "asymptotic"


def wsr_method(d):
    """The method abvm's wilcoxon_signed_rank() picks (wilcoxon.hpp); None when every d is 0."""
    nonzero = [v for v in d if v != 0]
    if not nonzero:
        return None
    exact = len(d) <= WSR_EXACT_MAX_N and len(nonzero) == len(d) and not has_repeats([abs(v) for v in d])
    return "exact" if exact else "approx"


def print_data():
    for name, (x, y) in TWO_SAMPLE.items():
        print("const std::vector<double> k_%s_x = %s;" % (name, arr(x)))
        print("const std::vector<double> k_%s_y = %s;" % (name, arr(y)))
    for name, d in PAIRED.items():
        print("const std::vector<double> k_%s_d = %s;" % (name, arr(d)))


def b(v):
    return "true" if v else "false"


def main():
    import sys
    self_checks()
    print("// Produced by: /usr/bin/python3 harness/tests/reference/rank_reference.py")
    print("// SciPy %s, NumPy %s" % (scipy.__version__, np.__version__))
    print("// ---- datasets (the seed: log(8589934592 / seconds), A = without, B = with patches) ----")
    print_data()
    print()
    print("// ---- Mann-Whitney: {name, x, y, u, p, exact} from scipy.stats.mannwhitneyu(x, y, method=<abvm's>) ----")
    for name, (x, y) in TWO_SAMPLE.items():
        method = mw_method(x, y)
        r = stats.mannwhitneyu(x, y, alternative="two-sided", method=method, use_continuity=True)
        other = "asymptotic" if method == "exact" else None
        note = ""
        if other:
            o = stats.mannwhitneyu(x, y, alternative="two-sided", method=other)
            note = "  // asymptotic would give p = %s" % lit(o.pvalue)
        print('    {"%s", k_%s_x, k_%s_y, %s, %s, %s},%s' % (name, name, name, lit(r.statistic), lit(r.pvalue),
                                                         b(method == "exact"), note))
    print()
    print("// ---- Wilcoxon: {name, d, w, p, exact} from scipy.stats.wilcoxon(d, method=<abvm's>) ----")
    for name, d in PAIRED.items():
        method = wsr_method(d)
        r = stats.wilcoxon(d, method=method)
        print('    {"%s", k_%s_d, %s, %s, %s},' % (name, name, lit(r.statistic), lit(r.pvalue), b(method == "exact")))
    print()
    print("// ---- HL shift: {name, x, y, confidence, estimate, low, high, achieved, exact} (brute force) ----")
    for name, (x, y) in TWO_SAMPLE.items():
        for conf in (0.95, 0.90):
            h = hl_shift(x, y, conf)
            print('    {"%s", k_%s_x, k_%s_y, %.2f, %s, %s, %s, %s, %s},  // k = %d'
                  % (name, name, name, conf, lit(h["estimate"]), lit(h["low"]), lit(h["high"]), lit(h["achieved"]),
                     b(h["exact"]), h["k"]))
    print()
    print("// ---- HL paired: {name, d, confidence, estimate, low, high, achieved, exact} (brute force) ----")
    for name, d in PAIRED.items():
        for conf in (0.95, 0.90):
            h = hl_paired(d, conf)
            print('    {"%s", k_%s_d, %.2f, %s, %s, %s, %s, %s},  // k = %d'
                  % (name, name, conf, lit(h["estimate"]), lit(h["low"]), lit(h["high"]), lit(h["achieved"]),
                     b(h["exact"]), h["k"]))
    print()
    print("// ---- Holm: {in, out} ----")
    for name, p in HOLM.items():
        print("    {%s, %s},  // %s" % (arr(p), arr(holm(p)), name))
    print()
    print("// ---- Kruskal-Wallis: {name, groups, h, p} from scipy.stats.kruskal ----")
    for name, groups in KRUSKAL.items():
        r = stats.kruskal(*groups)
        print('    {"%s", {%s}, %s, %s},' % (name, ", ".join(arr(g) for g in groups), lit(r.statistic), lit(r.pvalue)))


if __name__ == "__main__":
    main()
