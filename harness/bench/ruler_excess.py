#!/usr/bin/python3
"""Each side's time beyond QEMU's burst model (L), per workload, in results directories of rulers.

A ruler's sides differ only in their disk's cap (configs/ruler-*.toml). QEMU lets a request start
while its bucket holds at most r/10 (rate r, *_max unset), so a run of D in requests of s on an
empty bucket starts its last request at T_model = (D - s - r/10) / r; the rest of the measured time,
L = T - T_model, is the last request's service and the tool's start and end. Both sides run the same
kernel and tool, so L_A and L_B must agree: a design that makes one side's L longer moves the ratio
B/A away from the caps' (issue 26: co-scheduled runs of 0.27 s whose slower side paid 4-5 ms more).

For each results directory and each throttled workload (dd: bytes and the bytes cap of its
direction; fio: requests and the iops cap) it prints the run length (median T), L_A and L_B (mean,
ms, with a 95 % t interval), L_B - L_A over the pairs (same block, workload and run index) with its
95 % interval, and the ratio B/A the model gives with those L; for paired runs with host timings, also
L_B - L_A split by which side's run started later (the journal's timing.start). With --isolation DIR (a
sequential-blocks run of the same ruler), it also prints each metric's expected range: the model's
ratio with L_A = L_B = L (the sides differ by their cap alone), L over the 95 % interval of every
run's L in DIR, the line a ruler's config states as `# expected: <metric> <ratio> [<low>, <high>]`.
With --pool, it also prints each metric's L_B - L_A over every directory's pairs together, and L_A,
L_B and L_B - L_A by the run's index within its boot.

usage: /usr/bin/python3 harness/bench/ruler_excess.py [--pool] [--isolation DIR ...] RESULTS_DIR [RESULTS_DIR ...]
"""
import argparse
import json
import math
import os
import statistics
import sys
import tomllib

UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df):
    """Student's t quantile 0.975 for df degrees of freedom (the next smaller tabled df)."""
    return T975[max(k for k in T975 if k <= df)] if df >= 1 else math.nan


def size_of(text):
    """"512K" -> bytes, as abvm's config reads sizes (K = 1024)."""
    text = str(text).strip()
    unit = text[-1].upper() if text and text[-1].isalpha() else ""
    return int(float(text[:-1] if unit else text) * UNITS[unit])


def caps(side):
    """The side's iotune keys, e.g. {"total_bytes_sec": 10240000}."""
    return {k: size_of(v) for k, v in side.get("device", {}).get("iotune", {}).items()}


def model_of(workload, cap):
    """(amount, request, rate, metric) of a workload under one side's caps, or None when uncapped."""
    name = workload["name"]
    if workload.get("type") == "dd":
        bs = size_of(workload.get("bs", "1M"))
        reading = workload.get("if") == "@scratch"
        rate = cap.get("read_bytes_sec" if reading else "write_bytes_sec") or cap.get("total_bytes_sec")
        return (bs * int(workload.get("count", 64)), bs, rate, f"{name}.bandwidth") if rate else None
    rw = workload.get("rw", "write")
    direction = "read" if "read" in rw else "write"
    rate = cap.get(f"{direction}_iops_sec") or cap.get("total_iops_sec")
    requests = size_of(workload.get("size", "64M")) // size_of(workload.get("bs", "4K"))
    return (requests, 1, rate, f"{name}.{direction}.iops") if rate else None


def model_seconds(amount, request, rate):
    """From the first request to the start of the last one, the bucket empty at the start."""
    return (amount - request - rate / 10) / rate


def interval(values):
    """(mean, half-width of its 95 % t interval) of a list of numbers."""
    if len(values) < 2:
        return (values[0] if values else math.nan), math.nan
    return statistics.mean(values), t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def excess(results_dir):
    """{metric: {"length": median T, "L": {side: [L...]}, "diff": [L_B - L_A per pair], "model": {side: T_model}}}."""
    with open(os.path.join(results_dir, "config.toml"), "rb") as f:
        config = tomllib.load(f)
    sides = {s: caps(config["sides"][s]) for s in ("A", "B")}
    models = {}
    for w in config.get("workload", []):
        per_side = {s: model_of(w, sides[s]) for s in sides}
        if all(per_side.values()):
            models[w["name"]] = per_side
    out, pairs = {}, {}
    with open(os.path.join(results_dir, "journal.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e.get("outcome") != "ok" or e.get("workload") not in models:
                continue
            amount, request, rate, metric = models[e["workload"]][e["side"]]
            value = next((m["value"] for m in e["metrics"] if m["name"] == metric), None)
            if not value:
                continue
            seconds = amount / value
            entry = out.setdefault(metric, {"L": {"A": [], "B": []}, "T": [], "diff": [],
                                            "model": {s: model_seconds(*models[e["workload"]][s][:3]) for s in "AB"}})
            lag = seconds - entry["model"][e["side"]]
            entry["L"][e["side"]].append(lag)
            entry["T"].append(seconds)
            pair = pairs.setdefault((metric, e.get("block"), e["run"]), {})
            pair[e["side"]] = lag
            start = (e.get("timing") or {}).get("start")
            if start is not None:
                pair["start_" + e["side"]] = start
    for (metric, _, run), p in pairs.items():
        if "A" in p and "B" in p:
            out[metric]["diff"].append(p["B"] - p["A"])
            by_run = out[metric].setdefault("by_run", {}).setdefault(run, {"A": [], "B": [], "diff": []})
            for key, lag in (("A", p["A"]), ("B", p["B"]), ("diff", p["B"] - p["A"])):
                by_run[key].append(lag)
            if "start_A" in p and "start_B" in p:
                later = "B" if p["start_B"] > p["start_A"] else "A"
                out[metric].setdefault("by_later", {"A": [], "B": []})[later].append(p["B"] - p["A"])
    return out


def ratio(model, lag_a, lag_b):
    """The ruler's B/A of a rate (the inverse of the times') at the given L of each side."""
    return (model["A"] + lag_a) / (model["B"] + lag_b)


def expected_range(entry):
    """(point, low, high) of B/A with both sides' L equal, at the mean of every run's L (A's and B's)
    and at the ends of its 95 % interval: the sides differ by their cap alone, so their overhead is
    the same by construction (isolation's L_B - L_A, printed beside, checks it)."""
    mean, half = interval(entry["L"]["A"] + entry["L"]["B"])
    ends = [ratio(entry["model"], l, l) for l in (mean - half, mean + half)]
    return ratio(entry["model"], mean, mean), min(ends), max(ends)


def ms(mean_half):
    mean, half = mean_half
    return f"{mean * 1000:7.2f} +- {half * 1000:5.2f}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--isolation", action="append", default=[],
                   help="a sequential-blocks run of the same ruler: the expected ranges (repeat it: the range "
                        "covers every run's, e.g. one on a quiet host and one under load, whose L is longer)")
    p.add_argument("--pool", action="store_true",
                   help="also print each metric's L_B - L_A over the pairs of every directory together (runs "
                        "of one ruler in one design: one run's interval is too wide to tell 1 ms)")
    p.add_argument("dirs", nargs="+")
    args = p.parse_args()
    pooled, pooled_by_run = {}, {}
    print("L: time beyond the burst model, ms, mean +- 95 % half-width; ratio: the model's B/A at those L")
    for d in args.dirs:
        print(f"\n{d}")
        print(f"  {'metric':34} {'length s':>8}  {'L_A ms':>15}  {'L_B ms':>15}  {'L_B - L_A ms (pairs)':>26}  ratio")
        for metric, e in sorted(excess(d).items()):
            pooled.setdefault(metric, []).extend(e["diff"])
            for run, lags in e.get("by_run", {}).items():
                into = pooled_by_run.setdefault(metric, {}).setdefault(run, {"A": [], "B": [], "diff": []})
                for key in into:
                    into[key].extend(lags[key])
            diff = interval(e["diff"])
            print(f"  {metric:34} {statistics.median(e['T']):8.3f}  {ms(interval(e['L']['A']))}  "
                  f"{ms(interval(e['L']['B']))}  {ms(diff)} (n={len(e['diff']):3})  "
                  f"{ratio(e['model'], interval(e['L']['A'])[0], interval(e['L']['B'])[0]):.4f}")
            by_later = e.get("by_later")
            if by_later and by_later["A"] and by_later["B"]:
                print(f"  {'':34} {'':8}  L_B - L_A where B started later {ms(interval(by_later['B']))} "
                      f"(n={len(by_later['B'])}), where A did {ms(interval(by_later['A']))} (n={len(by_later['A'])})")
    if args.pool:
        print(f"\npooled over the {len(args.dirs)} directories:")
        for metric, diffs in sorted(pooled.items()):
            print(f"  {metric:34} L_B - L_A {ms(interval(diffs))} ms (n={len(diffs)})")
            # By the run's place in its boot: a cost that falls on some steps of a boot and not on
            # others (issue 26: pooled over ten co-scheduled runs of the short write, +2.3 ms on a boot's
            # second run, +0.4 on its third).
            for run, lags in sorted(pooled_by_run.get(metric, {}).items()):
                print(f"  {'':34} run {run}: L_A {ms(interval(lags['A']))}  L_B {ms(interval(lags['B']))}  "
                      f"L_B - L_A {ms(interval(lags['diff']))} (n={len(lags['diff'])})")
    if args.isolation:
        print(f"\nexpected ranges from isolation ({', '.join(args.isolation)}):")
        ranges = {}
        for d in args.isolation:
            for metric, e in excess(d).items():
                ranges.setdefault(metric, []).append(expected_range(e))
        for metric, rs in sorted(ranges.items()):
            low, high = min(r[1] for r in rs), max(r[2] for r in rs)
            print(f"# expected: {metric} {statistics.median(r[0] for r in rs):.4f} [{low:.4f}, {high:.4f}]")


if __name__ == "__main__":
    sys.exit(main())
