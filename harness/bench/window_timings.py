#!/usr/bin/python3
"""Prints how well the runs of A and B were held together in one or more results directories.

usage: /usr/bin/python3 harness/bench/window_timings.py RESULTS_DIR [RESULTS_DIR ...]

Reads each directory's journal.jsonl (the runs' `timing` and `overlap`, host clock) and prints, over
all measured runs with a partner:
  go skew        |go of A - go of B| for a pair (paced designs): how far apart the host typed the two go's
  start skew     |start of A - start of B|: how far apart the two measured runs began (guest clocks
                 mapped to the host's, so it includes the mapping's error)
  filler gap     fill - end of the faster run of a pair: the unloaded moment before its filler began
  clock error    each run's timing.clock_error: half-width of its guest-to-host mapping
  overlap        each pair's overlap (the smaller share of the two runs)
as min / median / 90th percentile / max. Nothing is written.
"""
import json
import os
import statistics
import sys


def quantiles(values):
    if not values:
        return "n/a"
    v = sorted(values)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return f"{v[0]:.4f} / {statistics.median(v):.4f} / {p90:.4f} / {v[-1]:.4f}  (n={len(v)})"


def pairs_of(results_dir):
    """{(block, workload, run): {side: journal line}} for lines with a timing."""
    pairs = {}
    with open(os.path.join(results_dir, "journal.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if "timing" not in e:
                continue
            pairs.setdefault((e["block"], e["workload"], e["run"]), {})[e["side"]] = e
    return pairs


def main(dirs):
    go_skew, start_skew, gaps, errors, overlaps = [], [], [], [], []
    for d in dirs:
        for sides in pairs_of(d).values():
            for e in sides.values():
                errors.append(e["timing"]["clock_error"])
            if set(sides) != {"A", "B"}:
                continue
            a, b = sides["A"]["timing"], sides["B"]["timing"]
            if a.get("go") is not None and b.get("go") is not None:
                go_skew.append(abs(a["go"] - b["go"]))
            start_skew.append(abs(a["start"] - b["start"]))
            faster = a if a["end"] - a["start"] < b["end"] - b["start"] else b
            if faster.get("fill") is not None:
                gaps.append(faster["fill"] - faster["end"])
            if "overlap" in sides["A"]:
                overlaps.append(sides["A"]["overlap"]["pair"])
    print(f"{len(dirs)} results director{'y' if len(dirs) == 1 else 'ies'}; seconds, min / median / p90 / max")
    print(f"  go skew      {quantiles(go_skew)}")
    print(f"  start skew   {quantiles(start_skew)}")
    print(f"  filler gap   {quantiles(gaps)}")
    print(f"  clock error  {quantiles(errors)}")
    print(f"  overlap      {quantiles(overlaps)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
