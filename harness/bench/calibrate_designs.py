#!/usr/bin/python3
"""Calibrates abvm's designs on this host: A/A experiments, the designs alternating in one series.

For each design (schedule.design) it runs `rounds` A/A experiments of `blocks` blocks each, in the
order seq, co, lock, same, seq, co, ... so that the host's slow and fast phases fall on every design
alike, and prints per design:
  sd(pair)      sd of the per-block log ratio ln(B/A) (pooled over the design's runs)
  sd(boot)      sd of the per-boot log value within a side (between-boot noise)
  sd(run)       sd of a run's log value around its boot's mean (within-boot noise)
  r(A,B)        correlation of A's and B's log boot values across blocks
  blk/min       blocks completed per minute of wall time
  blocks±2.5%   blocks a ±2.5 % interval of the design's primary estimate needs (paired for
                co-scheduled, unpaired Hodges-Lehmann for sequential blocks), normal approximation
                with the Hodges-Lehmann efficiency 3/pi: n = (1.96 sd / ln 1.025)^2 / (3/pi), and
                twice that per side for the unpaired estimate (sd(boot) then)
  wall±2.5%     the wall time those blocks take at the measured blk/min
  false reg.    A/A runs whose verdict (abvm analyze, the design's own primary estimate) was regression
  sd(adj)       with --reference: the sd of the per-block log ratio after adjusting it for a CPU-only
                reference timed in the same boots (dd from /dev/zero to /dev/null: no disk), by least
                squares on the reference's per-block log ratio, the slope fitted on the other runs of
                the design (leave one run out), so that the figure is not flattered by its own fit
  resampled     with --false-alarms K: K sub-experiments of --subset-blocks blocks drawn without
                replacement from the design's pooled A/A blocks, the side labels of each block swapped
                at random (A and B are the same, so either labelling is an A/A experiment), each
                analysed by `abvm analyze` as its design says: the rates of regression / no_change /
                inconclusive verdicts. The sub-experiments share blocks, so they are not independent:
                the rate is a check of the level on real data, not a precise estimate.

It writes the figures as JSON to --out (default: $XDG_CACHE_HOME/abvm/calibration.json, else
~/.cache/abvm/calibration.json), where `abvm run` finds them and warns when a budget cannot settle
the margin. Guests of both designs are pinned to --cpu-set (default "0"), so the comparison is
design against design, not pinned against unpinned; keep other work off that CPU while it runs.

usage: /usr/bin/python3 harness/bench/calibrate_designs.py --abvm build/abvm [--rounds 3] [--blocks 10]
       [--repetitions 10] [--designs sequential-blocks,co-scheduled,lockstep,same-guest] [--cpu-sets 0]
       [--reference] [--results DIR] [--out FILE] [--reanalyze] [--false-alarms K]
--cpu-sets "0;1" runs every design on two lanes (one block per CPU set at once): blocks per minute
then count both lanes.
"""
import argparse
import collections
import random
import shutil
import tempfile
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime

# The seed's workload at the demo's size: dd direct writes, `repetitions` measured runs per boot.
CONFIG = """name = "calibrate-{design}{suffix}"
description = "abvm calibration: A/A, design {design}"
[guest]
kernel = "debian-cloud"
[sides.A]
label = "first"
[sides.B]
label = "second"
[[workload]]
name = "dd-write"
type = "dd"
bs = "8M"
count = 16
oflag = ["direct"]
repetitions = {repetitions}
warmup = 1
{reference}[schedule]
boots_per_side = {blocks}
allow_identical_sides = true
design = "{design}"
cpu_sets = [{cpu_sets}]
[analysis]
metrics = [{{ name = "dd-write.bandwidth" }}]
"""
# A CPU-only reference in the same boot: memory to memory, no disk.
REFERENCE = """[[workload]]
name = "cpu-ref"
type = "dd"
bs = "1M"
count = 256
if = "/dev/zero"
of = "/dev/null"
oflag = []
repetitions = {repetitions}
warmup = 0
"""
METRIC = "dd-write.bandwidth"
REFERENCE_METRIC = "cpu-ref.bandwidth"
Z = 1.959963984540054
HL_EFFICIENCY = 3 / math.pi


def blocks_needed(sd, paired):
    n = (Z * sd / math.log(1.025)) ** 2 / HL_EFFICIENCY
    return math.ceil(n if paired else 2 * n)


def read_run(results_dir, metric=METRIC):
    """Per block: {side: [log run values]} of `metric`; and the wall seconds the blocks took."""
    blocks = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(os.path.join(results_dir, "journal.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e.get("outcome") != "ok":
                continue
            for m in e.get("metrics", []):
                if m["name"] == metric and m["value"] > 0:
                    blocks[e["block"]][e["side"]].append(math.log(m["value"]))
    ends = []
    with open(os.path.join(results_dir, "trials.jsonl")) as f:
        for line in f:
            t = json.loads(line)
            ends.append((datetime.fromisoformat(t["time"].replace("Z", "+00:00")).timestamp(), t["seconds"]))
    ends.sort()
    wall = ends[-1][0] - (ends[0][0] - ends[0][1]) if ends else 0.0
    return blocks, wall


def verdict_of(abvm, results_dir):
    path = os.path.join(results_dir, "calibration-analysis.json")
    subprocess.run([abvm, "analyze", results_dir, "--json", path], capture_output=True, text=True)
    try:
        with open(path) as f:
            return json.load(f)["verdict"]
    except (OSError, ValueError, KeyError):
        return "error"


def resampled_verdicts(abvm, dirs, k, n, seed):
    """Verdicts of k A/A sub-experiments of n blocks drawn from the runs in dirs (see the docstring)."""
    blocks = []  # (run index, block) -> journal lines
    by_block = collections.defaultdict(list)
    for r, d in enumerate(dirs):
        with open(os.path.join(d, "journal.jsonl")) as f:
            for line in f:
                e = json.loads(line)
                by_block[(r, e["block"])].append(e)
    blocks = [b for b, lines in sorted(by_block.items()) if {e["side"] for e in lines} == {"A", "B"}]
    if len(blocks) < n:
        return {}
    rng = random.Random(seed)
    counts = collections.Counter()
    work = tempfile.mkdtemp(prefix="abvm-calibrate-")
    try:
        for i in range(k):
            sub = os.path.join(work, f"s{i}")
            os.makedirs(sub)
            for name in ("config.toml", "run.json", "plan.json"):
                shutil.copy(os.path.join(dirs[0], name), sub)
            with open(os.path.join(sub, "journal.jsonl"), "w") as out:
                for j, key in enumerate(rng.sample(blocks, n)):
                    swap = rng.random() < 0.5
                    for e in by_block[key]:
                        e = dict(e, block=j, boot=f"r{key[0]}-{e['boot']}", trial=f"r{key[0]}-{e['trial']}")
                        if swap:
                            e["side"] = "B" if e["side"] == "A" else "A"
                        out.write(json.dumps(e) + "\n")
            counts[verdict_of(abvm, sub)] += 1
            shutil.rmtree(sub)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(counts)


def block_ratios(blocks):
    """{block: ln(B/A) of the boots' medians} for blocks with both sides."""
    return {k: statistics.median(v["B"]) - statistics.median(v["A"]) for k, v in blocks.items() if "A" in v and "B" in v}


def adjusted_pair_sd(runs_pairs):
    """The sd of the per-block log ratios adjusted for the reference's: d - beta * c, with beta the
    least-squares slope of d on c fitted on the design's other runs (leave one run out)."""
    adjusted = []
    for i, pairs in enumerate(runs_pairs):
        rest = [dc for j, p in enumerate(runs_pairs) if j != i for dc in p]
        if len(rest) < 3:
            return float("nan"), float("nan")
        mc = statistics.fmean(c for _, c in rest)
        md = statistics.fmean(d for d, _ in rest)
        sxx = sum((c - mc) ** 2 for _, c in rest)
        beta = sum((c - mc) * (d - md) for d, c in rest) / sxx if sxx > 0 else 0.0
        adjusted.extend(d - beta * c for d, c in pairs)
    all_pairs = [dc for p in runs_pairs for dc in p]
    mc = statistics.fmean(c for _, c in all_pairs)
    md = statistics.fmean(d for d, _ in all_pairs)
    sxx = sum((c - mc) ** 2 for _, c in all_pairs)
    beta_all = sum((c - mc) * (d - md) for d, c in all_pairs) / sxx if sxx > 0 else 0.0
    return (statistics.stdev(adjusted) if len(adjusted) >= 2 else float("nan")), beta_all


def summarize(design, runs, references=None):
    pairs, boot_dev, run_dev, a_b = [], [], [], []
    blocks_total, wall_total, verdicts = 0, 0.0, []
    for blocks, wall, verdict in runs:
        verdicts.append(verdict)
        wall_total += wall
        side_means = {"A": [], "B": []}
        for sides in blocks.values():
            for side, values in sides.items():
                mean = statistics.fmean(values)
                run_dev.extend(v - mean for v in values)
                side_means[side].append(mean)
            if "A" in sides and "B" in sides:
                a, b = statistics.median(sides["A"]), statistics.median(sides["B"])
                pairs.append(b - a)
                a_b.append((a, b))
                blocks_total += 1
        for values in side_means.values():
            if len(values) >= 2:
                m = statistics.fmean(values)
                boot_dev.extend(v - m for v in values)
    sd = lambda dev: math.sqrt(sum(d * d for d in dev) / max(1, len(dev) - 1))
    sd_pair = statistics.stdev(pairs) if len(pairs) >= 2 else float("nan")
    sd_boot, sd_run = sd(boot_dev), sd(run_dev)
    corr = statistics.correlation([x for x, _ in a_b], [y for _, y in a_b]) if len(a_b) >= 3 else float("nan")
    per_min = blocks_total / (wall_total / 60) if wall_total > 0 else float("nan")
    paired = design != "sequential-blocks"
    need = blocks_needed(sd_pair if paired else sd_boot, paired)
    sd_adjusted, beta = float("nan"), float("nan")
    if references:
        runs_pairs = []
        for (blocks, _, _), ref in zip(runs, references):
            d, c = block_ratios(blocks), block_ratios(ref)
            runs_pairs.append([(d[k], c[k]) for k in d if k in c])
        sd_adjusted, beta = adjusted_pair_sd(runs_pairs)
    return {"design": design, "runs": len(runs), "blocks": blocks_total, "sd_pair": sd_pair,
            "sd_pair_adjusted": sd_adjusted, "reference_slope": beta, "sd_boot": sd_boot,
            "sd_run": sd_run, "ab_correlation": corr, "blocks_per_minute": per_min,
            "primary": "paired" if paired else "unpaired", "blocks_for_2_5_percent": need,
            "minutes_for_2_5_percent": need / per_min if per_min > 0 else float("nan"),
            "paired_blocks_for_2_5_percent": blocks_needed(sd_pair, True),
            "false_regressions": sum(v == "regression" for v in verdicts), "verdicts": verdicts}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--abvm", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--designs", default="sequential-blocks,co-scheduled,lockstep,same-guest")
    p.add_argument("--cpu-sets", default="0", help="host CPU sets, ';'-separated: one lane each")
    p.add_argument("--reference", action="store_true", help="time a CPU-only reference in every boot (covariate)")
    p.add_argument("--repetitions", type=int, default=10, help="measured dd runs per boot")
    p.add_argument("--results", default="results/calibration")
    p.add_argument("--out", default=None)
    p.add_argument("--reanalyze", action="store_true", help="only analyse the runs already in --results")
    p.add_argument("--false-alarms", type=int, default=0, metavar="K", help="resampled A/A sub-experiments per design")
    p.add_argument("--subset-blocks", type=int, default=10, help="blocks per resampled sub-experiment")
    args = p.parse_args()
    abvm = os.path.abspath(args.abvm)
    os.makedirs(args.results, exist_ok=True)
    designs = args.designs.split(",")
    cpu_sets = [c for c in args.cpu_sets.split(";") if c]
    suffix = f"-{len(cpu_sets)}lanes" if len(cpu_sets) > 1 else ""
    runs = collections.defaultdict(list)
    if args.reanalyze:
        for name in sorted(os.listdir(args.results)):
            d = os.path.join(args.results, name)
            for design in designs:
                if name.startswith(f"calibrate-{design}{suffix}-") and os.path.exists(os.path.join(d, "trials.jsonl")):
                    runs[design].append(d)
    else:
        for r in range(args.rounds):
            for design in designs:
                config = os.path.join(args.results, f"calibrate-{design}.toml")
                with open(config, "w") as f:
                    f.write(CONFIG.format(design=design, suffix=suffix, blocks=args.blocks, repetitions=args.repetitions,
                                          cpu_sets=", ".join(f'"{c}"' for c in cpu_sets),
                                          reference=REFERENCE.format(repetitions=args.repetitions) if args.reference else ""))
                before = set(os.listdir(args.results))
                t0 = time.time()
                subprocess.run([abvm, "run", config, "--results-dir", args.results],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                new = sorted(set(os.listdir(args.results)) - before)
                dirs = [os.path.join(args.results, n) for n in new if os.path.isdir(os.path.join(args.results, n))]
                print(f"round {r + 1}/{args.rounds} {design}: {time.time() - t0:.0f} s {' '.join(dirs)}",
                      file=sys.stderr, flush=True)
                runs[design].extend(dirs)
    table = []
    for design in designs:
        data, references = [], []
        for d in runs[design]:
            blocks, wall = read_run(d)
            data.append((blocks, wall, verdict_of(abvm, d)))
            references.append(read_run(d, REFERENCE_METRIC)[0])
        table.append(summarize(design, data, references if args.reference else None))
        if args.false_alarms:
            table[-1]["resampled"] = resampled_verdicts(abvm, runs[design], args.false_alarms, args.subset_blocks, 1)
    print(f"abvm design calibration on {socket.gethostname()}: A/A, dd-write.bandwidth, "
          f"{len(cpu_sets)} lane(s) on host CPUs {' | '.join(cpu_sets)}")
    print(f"{'design':<18} {'runs':>4} {'blocks':>6} {'sd(pair)':>8} {'sd(boot)':>8} {'sd(run)':>8} {'r(A,B)':>6} "
          f"{'blk/min':>7} {'primary':>8} {'blocks±2.5%':>11} {'wall±2.5%':>9} {'false reg.':>10}")
    for t in table:
        print(f"{t['design']:<18} {t['runs']:>4} {t['blocks']:>6} {t['sd_pair']:>8.3f} {t['sd_boot']:>8.3f} "
              f"{t['sd_run']:>8.3f} {t['ab_correlation']:>6.2f} {t['blocks_per_minute']:>7.2f} {t['primary']:>8} "
              f"{t['blocks_for_2_5_percent']:>11} {t['minutes_for_2_5_percent']:>7.0f} m "
              f"{t['false_regressions']:>4}/{t['runs']:<5}")
    if args.reference:
        for t in table:
            print(f"{t['design']}: sd(pair) {t['sd_pair']:.3f}, adjusted for the CPU reference {t['sd_pair_adjusted']:.3f} "
                  f"(slope {t['reference_slope']:.2f}): {t['sd_pair'] / t['sd_pair_adjusted']:.2f}x narrower")
    for t in table:
        if t.get("resampled"):
            total = sum(t["resampled"].values())
            rates = ", ".join(f"{v} {c / total:.1%}" for v, c in sorted(t["resampled"].items()))
            print(f"{t['design']}: {total} resampled A/A experiments of {args.subset_blocks} blocks: {rates}")
    for t in table[1:]:
        if t["blocks_for_2_5_percent"] > 0:
            print(f"blocks needed, {table[0]['design']} / {t['design']}: "
                  f"{table[0]['blocks_for_2_5_percent'] / t['blocks_for_2_5_percent']:.1f}x")
    out = args.out or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "abvm",
                                   "calibration.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"calibration_version": 1, "host": socket.gethostname(), "time": datetime.utcnow().isoformat() + "Z",
                   "metric": METRIC, "cpu_sets": cpu_sets, "designs": table}, f, indent=2)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
