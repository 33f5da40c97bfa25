#!/usr/bin/python3
"""Writes the inputs of harness/bench/analyze_size.sh: two files of N seed-like bimodal numbers, one a line.

Side A: 70 % of the runs near 4.5e9 and 30 % near 1.4e9 (lognormal, sd 0.08), printed to 6 digits;
side B the same 3 % lower. Fixed seed: the same files every time.

usage: seed_like_numbers.py N A_FILE B_FILE
"""
import random
import sys


def side(rng, n, path, scale):
    with open(path, "w") as f:
        for _ in range(n):
            mode = 4.5e9 if rng.random() < 0.7 else 1.4e9
            f.write("%.6g\n" % (scale * mode * rng.lognormvariate(0, 0.08)))


def main():
    n = int(sys.argv[1])
    rng = random.Random(42)
    side(rng, n, sys.argv[2], 1.0)
    side(rng, n, sys.argv[3], 0.97)


if __name__ == "__main__":
    main()
