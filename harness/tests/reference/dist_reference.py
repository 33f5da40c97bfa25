#!/usr/bin/python3
"""Reference values for abvm's distribution statistics (harness/stats/descriptive, outliers, fisher).

Run with Debian's interpreter, which has NumPy and SciPy (python3-scipy):
    /usr/bin/python3 harness/tests/reference/dist_reference.py
It prints C++ initialisers that are pasted into harness/tests/stats_dist_*_test.cpp and writes the
same text to harness/tests/data/reference/dist_reference.txt, so a reviewer can diff a re-run
against what the tests hold. The C++ tests never run Python.

Everything here is computed independently of abvm's code, with NumPy/SciPy's own functions:
np.median, np.mean, np.std(ddof=1), np.percentile (linear), scipy.stats.median_abs_deviation,
scipy.stats.iqr, scipy.stats.fisher_exact.
"""
import os
import sys

import numpy as np
import scipy
import scipy.stats as st

BYTES = 8589934592
# The seed (../shared/seed/dd-*.txt): dd times in seconds of ten runs per side.
SEED_A_SECONDS = [1.95557, 2.05176, 1.88314, 1.84899, 5.37184, 1.9205, 6.85166, 1.74049, 6.31699, 2.47057]
SEED_B_SECONDS = [2.25993, 1.82438, 1.93856, 1.83405, 7.50199, 2.28742, 5.74958, 1.99149, 5.67647, 2.93957]

DATASETS = {
    "one": [5.0],
    "two": [1.0, 3.0],
    "equal": [2.5, 2.5, 2.5, 2.5],
    "small": [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0],
    "outlier": [10.0, 10.2, 9.9, 10.1, 10.0, 30.0, 9.8, 10.3],
    "mostly_equal": [7.0, 7.0, 7.0, 7.0, 7.0, 8.0, 100.0],
    "both_tails": [1.0, 3.0, 3.1, 3.2, 3.3, 3.4, 50.0, 3.15, 3.25],
    "on_fence": [1.0, 1.0, 1.0, 2.0, 2.0, 3.5, 1.5, 1.5, 2.0],
    "tukey_only": [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 26.0],
    "seed_a": [BYTES / s for s in SEED_A_SECONDS],
    "seed_b": [BYTES / s for s in SEED_B_SECONDS],
}
QUANTILES = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]

FISHER_TABLES = [
    # The seed's mode table: slow-mode and fast-mode runs of A and of B.
    (3, 7, 3, 7),
    (1, 9, 11, 3),
    (0, 10, 5, 5),
    (8, 2, 1, 5),
    (2, 7, 8, 2),
    (10, 0, 0, 10),
    (2, 3, 3, 2),
    (7, 1, 2, 9),
    (100, 200, 150, 120),
    (1000, 1100, 1050, 990),
    (5000, 5200, 5300, 4900),
    (480, 520, 520, 480),
    # Column sums equal, row sums not: x and (a + b) - x tie exactly, which rounding can hide.
    (21, 13, 15, 23),
    (10, 24, 27, 13),
    (5, 36, 41, 10),
    (200000, 201000, 199000, 200500),
    (12345, 23456, 22222, 11111),  # p underflows to 0
    (0, 0, 3, 4),
]


def r(x):
    return repr(float(x)).replace("inf", "INFINITY").replace("nan", "NAN")


def main():
    out = []
    out.append(f"// numpy {np.__version__}, scipy {scipy.__version__}")
    out.append("// summaries: {name, n, median, mean, sd, mad, iqr, min, max, cv}")
    for name, v in DATASETS.items():
        a = np.array(v)
        sd = float(np.std(a, ddof=1)) if len(a) > 1 else 0.0
        mean = float(np.mean(a))
        cv = sd / mean if mean != 0 else 0.0
        out.append("{" + ", ".join([f'"{name}"', str(len(a)), r(np.median(a)), r(mean), r(sd),
                                     r(st.median_abs_deviation(a)), r(st.iqr(a)), r(a.min()), r(a.max()),
                                     r(cv)]) + "},")
    out.append("// quantiles (np.percentile, linear) at q = " + ", ".join(map(str, QUANTILES)))
    for name, v in DATASETS.items():
        qs = np.percentile(np.array(v), [100 * q for q in QUANTILES])
        out.append("{" + f'"{name}", ' + "{" + ", ".join(r(q) for q in qs) + "}},")
    out.append("// outliers: {name, tukey_low, tukey_high, {tukey}, {modified_z}}")
    for name, v in DATASETS.items():
        a = np.array(v)
        q1, q3 = np.percentile(a, [25, 75])
        lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        tukey = [i for i, x in enumerate(a) if x < lo or x > hi]
        mad = st.median_abs_deviation(a)
        modz = [] if mad == 0 else [i for i, x in enumerate(a) if abs(0.6745 * (x - np.median(a)) / mad) > 3.5]
        out.append("{" + f'"{name}", {r(lo)}, {r(hi)}, ' + "{" + ", ".join(map(str, tukey)) + "}, {" +
                   ", ".join(map(str, modz)) + "}},")
    out.append("// fisher: {a, b, c, d, odds_ratio, p_two_sided, p_greater, p_less}")
    for t in FISHER_TABLES:
        table = [[t[0], t[1]], [t[2], t[3]]]
        res = {alt: st.fisher_exact(table, alternative=alt) for alt in ("two-sided", "greater", "less")}
        out.append("{" + ", ".join(map(str, t)) + ", " + ", ".join(
            [r(res["two-sided"][0]), r(res["two-sided"][1]), r(res["greater"][1]), r(res["less"][1])]) + "},")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "reference", "dist_reference.txt")
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
