#!/usr/bin/python3
"""Reference figures for harness/tests/verdict_analysis_test.cpp, from an independent implementation.

Run: /usr/bin/python3 harness/tests/reference/verdict_reference.py   (Debian 12: SciPy 1.10.1)
Mann-Whitney U and p come from SciPy; the Hodges-Lehmann estimate is brute force over all pairs.
"""
import itertools
import math
import statistics

import scipy
from scipy import stats

BYTES = 8589934592
without = [1.95557, 2.05176, 1.88314, 1.84899, 5.37184, 1.9205, 6.85166, 1.74049, 6.31699, 2.47057]
with_ = [2.25993, 1.82438, 1.93856, 1.83405, 7.50199, 2.28742, 5.74958, 1.99149, 5.67647, 2.93957]
a = [BYTES / s for s in without]
b = [BYTES / s for s in with_]

print("scipy", scipy.__version__)
res = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
print("seed mannwhitneyu(A, B): U = %g, asymptotic p = %.6f" % (res.statistic, res.pvalue))
res = stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
print("seed mannwhitneyu(A, B): U = %g, exact p = %.6f" % (res.statistic, res.pvalue))
diffs = sorted(math.log(y) - math.log(x) for x, y in itertools.product(a, b))
print("seed Hodges-Lehmann B/A = exp(median of log differences) = %.6f" % math.exp(statistics.median(diffs)))

# Issue 26, VerdictAnalysis.FioHistogramStepsAreJudgedAgainstTheMargin: fio percentiles on steps of
# 2.4 %, A 20 units at step 0, B 14 at step 0 and 6 at step 4 (+9.95 %, beyond the 5 % margin). The
# worse mode's median against the dominant one's, and Fisher's one-sided test of B's units in it.
step = [1000 * 1.024 ** k for k in range(5)]
pooled_dominant = [step[0]] * 34
print("fio steps: worse mode median / dominant median = %.6f" % (statistics.median([step[4]] * 6) /
                                                                 statistics.median(pooled_dominant)))
res = stats.fisher_exact([[6, 14], [0, 20]], alternative="greater")
print("fio steps: Fisher one-sided p (B 6 of 20 in the worse mode, A 0 of 20) = %.10f" % res[1])
