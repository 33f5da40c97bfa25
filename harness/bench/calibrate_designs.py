#!/usr/bin/python3
"""Calibrates abvm's designs on this host: their noise (A/A) and their truth (known effects).

It runs `rounds` rounds; each round runs every experiment of --experiments in every design of
--designs, `blocks` blocks each, in the order (e1, d1), (e1, d2), ..., (e2, d1), ... so that the
host's slow and fast phases fall on every design and experiment alike.

Experiments (--experiments, comma-separated; configs from --configs, default the repository's):
  noise      the built-in A/A series: dd 16 x 8M direct, --repetitions measured runs per boot (the
             figures `abvm run`'s budget warning uses, as before)
  aa         configs/aa-control.toml: A/A, every metric's expected ratio 1.0
  ruler-10   configs/ruler-10.toml: both sides' disks throttled, B's caps 0.90 of A's
  ruler-3    configs/ruler-3.toml: the same at 0.97 (its margin 0.02)
  swiotlb    configs/swiotlb-control.toml: B bounces DMA through swiotlb, a real slowdown of unknown
             size; the reference is the sequential-blocks estimate pooled over the series
  neighbour  configs/neighbour-control.toml: B has virtio_blk.queue_depth=1; the fio metrics must
             regress, dd-4k.bandwidth is known unaffected (expected 1.0)
A ruler states its expected ratio per metric in its config, `# expected: <metric> <ratio>` (read from
the copy in each results directory). Each run gets a copy of the experiment's config with name,
schedule.boots_per_side (--blocks), schedule.design, schedule.cpu_sets (--cpu-sets), schedule.seed
(--seed + round) and, when given, analysis.margin and analysis.confidence overridden.
`same-guest` runs only experiments whose sides differ in device options alone (noise, aa, the
rulers); swiotlb and neighbour change the kernel command line, which one guest cannot have twice:
those pairs are skipped and listed as skipped.

Truth, per (experiment, design, metric), over its runs (each run analysed by `abvm analyze`, as its
experiment says; the estimate is the metric's primary one, analysis.json `metrics[].effect`, paired
or unpaired as `options.primary_estimate` says, with its interval at `effect.confidence`):
  expected      the known ratio B/A: 1.0 for A/A (noise, aa) and neighbour's dd-4k.bandwidth, the
                config's `# expected:` for a ruler; for swiotlb the sequential-blocks estimate of all
                the series' sequential-blocks runs pooled in one analysis ("ref"); "-" where only the
                direction is known (neighbour's fio metrics)
  estimate      the geometric mean of the runs' estimates
  bias          mean over runs of ln(estimate / expected), in %, with its standard error (sd / sqrt(n);
                for swiotlb the pooled estimate's own s.e., from its interval, added in quadrature; none
                for swiotlb in sequential-blocks, whose runs are the pool), and "!" when |bias| > 2 s.e.
                (needs 2 runs). The rulers' expected ratios carry a model uncertainty of about 0.15 %:
                a bias that small is the ruler's, not the design's.
  coverage      runs whose interval contains the expected ratio / runs, at the interval's stated level
                (`effect.confidence`; Bonferroni-adjusted over the experiment's metrics), and "!" when
                that count is improbably low for the level: P(Binomial(runs, level) <= covered) < 0.05.
                For swiotlb, instead, "in ref k/n": runs whose estimate lies inside the pooled
                sequential-blocks interval (no coverage against a reference that is uncertain itself)
  spurious      runs whose verdict contradicts the known truth / runs with a verdict. A verdict is
                spurious when it is not one of these:
                  noise, aa (A/A):              no_change, inconclusive
                  ruler-10:                     regression
                  ruler-3:                      regression, no_change
                  neighbour dd-4k.bandwidth:    no_change, inconclusive
                  neighbour fio metrics:        regression
                  swiotlb (B cannot be faster): regression, no_change, inconclusive
                (the rulers' effects are many times their noise at these caps, so an inconclusive
                ruler counts as a failure too)
  overlap       over the design's runs, from analysis.json `metrics[].overlap`: the smallest pair
                overlap, the median of the runs' medians, and pairs voided / pairs (left out under
                schedule.min_overlap; co-scheduled only)
  runs          the runs behind the row; each run's estimate, interval, level and verdict are listed
                per run below the tables and kept in the --out file

Noise, per (experiment, design, metric), from the journals:
  sd(pair)      sd of the per-block log ratio ln(B/A) of the boots' medians (pooled over the runs)
  sd(boot)      sd of the per-boot log value within a side (between-boot noise)
  sd(run)       sd of a run's log value around its boot's mean (within-boot noise)
  r(A,B)        correlation of A's and B's log boot values across blocks
  blk/min       blocks completed per minute of wall time
  primary       the estimate abvm's analysis decided by (paired or unpaired)
  blocks±2.5%   blocks a ±2.5 % interval of that estimate needs, normal approximation with the
                Hodges-Lehmann efficiency 3/pi: n = (1.96 sd / ln 1.025)^2 / (3/pi), with sd(pair) for
                the paired estimate, and twice that with sd(boot) for the unpaired one (per side)
  wall±2.5%     the wall time those blocks take at the measured blk/min
Only for the noise series:
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

The file (--out, default $XDG_CACHE_HOME/abvm/calibration.json, else ~/.cache/abvm/calibration.json;
`abvm run` reads it, harness/plan/calibration.hpp) is one JSON object, NaN written as null:
  calibration_version  2 (1: no "experiments"; readers of 1 read 2, the fields below being added)
  host, time (UTC), cpu_sets
  metric               the metric of "designs" (dd-write.bandwidth)
  noise_source         the experiment "designs" comes from: "noise", else "aa", else null
  designs[]            per design, that experiment's noise row: design, runs, blocks, sd_pair,
                       sd_pair_adjusted, reference_slope, sd_boot, sd_run, ab_correlation,
                       blocks_per_minute, primary, blocks_for_2_5_percent, minutes_for_2_5_percent,
                       paired_blocks_for_2_5_percent, false_regressions, verdicts, [resampled];
                       only designs whose sd_pair, sd_boot and blocks_per_minute are positive
  experiments[]        per (experiment, design, metric): experiment, config, design, metric, truth
                       ("ratio": a known ratio, "reference": the sequential-blocks pool, "direction":
                       only the verdict is known), expected (null for "direction"), accepted (the
                       verdicts that are not spurious), runs[] {results, estimate, ci_low, ci_high,
                       level, primary, verdict, overlap}, estimate (geometric mean), bias
                       {mean_log, se, runs, beyond_2se} | null, coverage {covered, runs, share, level,
                       p_low, undercovers} | null (null for swiotlb), reference {estimate, ci_low,
                       ci_high, level, inside, runs} | null (swiotlb), spurious {count, runs, errors}, overlap {pairs, min,
                       median, voided} | null, noise {the noise row, as in designs[]}
  skipped[]            {experiment, design, reason}

usage: /usr/bin/python3 harness/bench/calibrate_designs.py --abvm build/abvm [--rounds 3] [--blocks 10]
       [--experiments noise,aa,ruler-10,ruler-3,swiotlb,neighbour]
       [--designs sequential-blocks,co-scheduled,lockstep,same-guest] [--cpu-sets 0] [--seed 1]
       [--margin M] [--confidence C] [--repetitions 10] [--reference] [--results DIR] [--out FILE]
       [--reanalyze] [--false-alarms K]
Guests are pinned to --cpu-sets (default "0"), so the comparison is design against design, not pinned
against unpinned; keep other work off those CPUs while it runs. --cpu-sets "0;1" runs every design on
two lanes (one block per CPU set at once): blocks per minute then count both lanes.
"""
import argparse
import collections
import dataclasses
import json
import math
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from datetime import datetime, timezone

# The noise series: the seed's workload at the demo's size, dd direct writes, `repetitions` measured
# runs per boot. Its schedule and analysis keys are set like every experiment's (set_keys).
NOISE_CONFIG = """name = "calibrate"
description = "abvm calibration: A/A noise series"
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
allow_identical_sides = true
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
SEQUENTIAL = "sequential-blocks"
SAME_GUEST = "same-guest"
AA_ACCEPTED = ("no_change", "inconclusive")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One known-effect experiment: its config, and what is true of it (see the docstring)."""
    name: str
    config: str | None            # file under --configs; None: the built-in noise series
    same_guest: str | None        # why same-guest cannot run it; None: it can
    truth: str                    # "aa", "ruler", "reference" or "neighbour"


EXPERIMENTS = {e.name: e for e in [
    Experiment("noise", None, None, "aa"),
    Experiment("aa", "aa-control.toml", None, "aa"),
    Experiment("ruler-10", "ruler-10.toml", None, "ruler"),
    Experiment("ruler-3", "ruler-3.toml", None, "ruler"),
    Experiment("swiotlb", "swiotlb-control.toml", "B's kernel command line adds swiotlb=force", "reference"),
    Experiment("neighbour", "neighbour-control.toml", "B's kernel command line adds virtio_blk.queue_depth=1",
               "neighbour"),
]}
RULER_ACCEPTED = {"ruler-10": ("regression",), "ruler-3": ("regression", "no_change")}


@dataclasses.dataclass(frozen=True)
class Truth:
    kind: str                     # "ratio", "reference" or "direction"
    expected: float | None        # the known ratio (for "reference": filled in from the pool)
    accepted: tuple               # verdicts that are not spurious


def expected_ratios(config_text):
    """{metric: ratio} from a config's `# expected: <metric> <ratio>` comments."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^#\s*expected:\s*(\S+)\s+([0-9.eE+-]+)\s*$", config_text, re.M)}


def truth_of(experiment, metric, config_text):
    """What is known of one metric of one experiment (the rules of the docstring's `spurious`)."""
    if experiment.truth == "aa":
        return Truth("ratio", 1.0, AA_ACCEPTED)
    if experiment.truth == "ruler":
        expected = expected_ratios(config_text).get(metric)
        if expected is None:
            sys.exit(f"{experiment.name}: its config states no '# expected: {metric} <ratio>'")
        return Truth("ratio", expected, RULER_ACCEPTED[experiment.name])
    if experiment.truth == "reference":
        return Truth("reference", None, ("regression", "no_change", "inconclusive"))
    if metric.startswith("dd-"):
        return Truth("ratio", 1.0, AA_ACCEPTED)
    return Truth("direction", None, ("regression",))


# ---- the series: configs and runs ------------------------------------------------------------

def run_name(experiment, design, suffix):
    """The config's name, hence the results directory's prefix (the noise series' as before)."""
    return f"calibrate-{design}{suffix}" if experiment == "noise" else f"calibrate-{experiment}-{design}{suffix}"


def set_keys(text, table, values):
    """`text` with the keys `values` set in [table] (their old lines removed; "" is the top level).
    Only single-line keys, which is what the shipped configs have; main() checks the result."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[?([^\]]+)\]\]?\s*(#.*)?$")
    current, start, kept = "", None, []
    for line in lines:
        if m := header.match(line):
            current = m.group(1).strip()
            if current == table and start is None:
                start = len(kept) + 1
        elif current == table and re.match(r"^\s*(" + "|".join(map(re.escape, values)) + r")\s*=", line):
            continue
        kept.append(line)
    new = [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    if table == "":
        first = next((i for i, line in enumerate(kept) if header.match(line)), len(kept))
        kept[first:first] = new
    elif start is None:
        kept += ["", f"[{table}]"] + new
    else:
        kept[start:start] = new
    return "\n".join(kept) + "\n"


def experiment_config(args, experiment, design, round_index, suffix, cpu_sets):
    """The text of one run's config: the experiment's, with the calibration's keys set."""
    e = EXPERIMENTS[experiment]
    if e.config is None:
        text = NOISE_CONFIG.format(repetitions=args.repetitions,
                                   reference=REFERENCE.format(repetitions=args.repetitions) if args.reference else "")
    else:
        with open(os.path.join(args.configs, e.config)) as f:
            text = f.read()
    text = set_keys(text, "", {"name": run_name(experiment, design, suffix)})
    text = set_keys(text, "schedule", {"boots_per_side": args.blocks, "design": design, "cpu_sets": cpu_sets,
                                       "seed": args.seed + round_index})
    text = re.sub(r"^(\s*cpu_set\s*=.*)$", r"# (calibration: cpu_sets) \1", text, flags=re.M)
    analysis = {k: v for k, v in (("margin", args.margin), ("confidence", args.confidence)) if v is not None}
    if analysis:
        text = set_keys(text, "analysis", analysis)
    parsed = tomllib.loads(text)
    s = parsed["schedule"]
    if (s["boots_per_side"], s["design"], s["cpu_sets"], s["seed"]) != (args.blocks, design, cpu_sets,
                                                                       args.seed + round_index):
        sys.exit(f"{experiment}: the calibration's schedule keys did not take in its config copy")
    return text


def planned_runs(experiments, designs):
    """(experiment, design) in series order, and the pairs skipped with the reason."""
    planned, skipped = [], []
    for experiment in experiments:
        for design in designs:
            why = EXPERIMENTS[experiment].same_guest
            if design == SAME_GUEST and why:
                skipped.append({"experiment": experiment, "design": design,
                                "reason": f"{why}: same-guest boots one guest for both sides, so the sides may "
                                          "differ only in device options"})
            else:
                planned.append((experiment, design))
    return planned, skipped


def run_series(args, abvm, planned, suffix, cpu_sets):
    """Runs the series; {(experiment, design): [results dirs]}."""
    runs = collections.defaultdict(list)
    for r in range(args.rounds):
        for experiment, design in planned:
            name = run_name(experiment, design, suffix)
            config = os.path.join(args.results, f"{name}.toml")
            with open(config, "w") as f:
                f.write(experiment_config(args, experiment, design, r, suffix, cpu_sets))
            before = set(os.listdir(args.results))
            t0 = time.time()
            with open(os.path.join(args.results, f"{name}.log"), "a") as log:
                subprocess.run([abvm, "run", config, "--results-dir", args.results], stdout=log, stderr=log)
            new = sorted(set(os.listdir(args.results)) - before)
            dirs = [os.path.join(args.results, n) for n in new if os.path.isdir(os.path.join(args.results, n))]
            print(f"round {r + 1}/{args.rounds} {experiment} {design}: {time.time() - t0:.0f} s {' '.join(dirs)}",
                  file=sys.stderr, flush=True)
            runs[(experiment, design)].extend(dirs)
    return runs


def existing_runs(args, planned, suffix):
    """The runs already in --results, by the name of their directory: {(experiment, design): [dirs]}."""
    names = {run_name(e, d, suffix): (e, d) for e, d in planned}
    runs = collections.defaultdict(list)
    for entry in sorted(os.listdir(args.results)):
        m = re.match(r"^(.+)-\d{8}T\d{6}Z(-\d+)?$", entry)
        d = os.path.join(args.results, entry)
        if m and m.group(1) in names and os.path.exists(os.path.join(d, "trials.jsonl")):
            runs[names[m.group(1)]].append(d)
    return runs


# ---- reading a run ---------------------------------------------------------------------------

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


def analysis_of(abvm, results_dir):
    """abvm's analysis of a results directory, as its experiment says; None when it fails."""
    path = os.path.join(results_dir, "calibration-analysis.json")
    subprocess.run([abvm, "analyze", results_dir, "--json", path], capture_output=True, text=True)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def config_text_of(results_dir):
    with open(os.path.join(results_dir, "config.toml")) as f:
        return f.read()


def run_estimate(analysis, metric, results_dir):
    """One run's primary estimate of `metric`: estimate, interval, level, verdict, overlap."""
    row = {"results": results_dir, "estimate": None, "ci_low": None, "ci_high": None, "level": None,
           "primary": None, "verdict": "error", "overlap": None}
    m = next((m for m in (analysis or {}).get("metrics", []) if m.get("name") == metric), None)
    if m is None:
        return row
    effect = m.get("effect") or {}
    row.update(estimate=effect.get("estimate"), ci_low=effect.get("ci_low"), ci_high=effect.get("ci_high"),
               level=effect.get("confidence"), verdict=m.get("verdict", "error"), overlap=m.get("overlap"),
               primary=m.get("primary_estimate") or analysis.get("options", {}).get("primary_estimate"))
    return row


def merge_journals(dirs, out_dir, picks=None, rng=None):
    """A results directory in out_dir holding the blocks of `dirs` (all of them, or `picks`: a list of
    (run index, block) keys, each side-swapped at random when rng is given), renumbered 0..n-1, the
    boots and trials prefixed by their run so that they stay apart. Returns the number of blocks."""
    by_block = collections.defaultdict(list)
    for r, d in enumerate(dirs):
        with open(os.path.join(d, "journal.jsonl")) as f:
            for line in f:
                e = json.loads(line)
                by_block[(r, e["block"])].append(e)
    complete = [b for b, lines in sorted(by_block.items()) if {e["side"] for e in lines} == {"A", "B"}]
    picks = complete if picks is None else picks(complete)
    os.makedirs(out_dir, exist_ok=True)
    for name in ("config.toml", "run.json", "plan.json"):
        shutil.copy(os.path.join(dirs[0], name), out_dir)
    with open(os.path.join(out_dir, "journal.jsonl"), "w") as out:
        for j, key in enumerate(picks):
            swap = rng is not None and rng.random() < 0.5
            for e in by_block[key]:
                e = dict(e, block=j, boot=f"r{key[0]}-{e['boot']}", trial=f"r{key[0]}-{e['trial']}")
                if isinstance(e.get("overlap"), dict):
                    e["overlap"] = dict(e["overlap"], partner=f"r{key[0]}-{e['overlap'].get('partner')}")
                if swap:
                    e["side"] = "B" if e["side"] == "A" else "A"
                out.write(json.dumps(e) + "\n")
    return len(picks)


def pooled_analysis(abvm, dirs):
    """abvm's analysis of all of `dirs`' blocks as one experiment (the swiotlb reference)."""
    work = tempfile.mkdtemp(prefix="abvm-calibrate-pool-")
    try:
        merge_journals(dirs, os.path.join(work, "pool"))
        return analysis_of(abvm, os.path.join(work, "pool"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def resampled_verdicts(abvm, dirs, k, n, seed):
    """Verdicts of k A/A sub-experiments of n blocks drawn from the runs in dirs (see the docstring)."""
    rng = random.Random(seed)
    counts = collections.Counter()
    work = tempfile.mkdtemp(prefix="abvm-calibrate-")
    try:
        for i in range(k):
            sub = os.path.join(work, f"s{i}")
            drawn = merge_journals(dirs, sub, lambda blocks: rng.sample(blocks, n) if len(blocks) >= n else [], rng)
            if drawn == 0:
                return {}
            counts[(analysis_of(abvm, sub) or {}).get("verdict", "error")] += 1
            shutil.rmtree(sub)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(counts)


# ---- noise figures ---------------------------------------------------------------------------

def blocks_needed(sd, paired):
    if not sd > 0:
        return None
    n = (Z * sd / math.log(1.025)) ** 2 / HL_EFFICIENCY
    return math.ceil(n if paired else 2 * n)


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


def summarize(design, runs, paired, references=None):
    """The noise row of one design: runs are (blocks, wall seconds, verdict) of one metric."""
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
    sd = lambda dev: math.sqrt(sum(d * d for d in dev) / (len(dev) - 1)) if len(dev) >= 2 else float("nan")
    sd_pair = statistics.stdev(pairs) if len(pairs) >= 2 else float("nan")
    sd_boot, sd_run = sd(boot_dev), sd(run_dev)
    try:
        corr = statistics.correlation([x for x, _ in a_b], [y for _, y in a_b]) if len(a_b) >= 3 else float("nan")
    except statistics.StatisticsError:  # a constant side
        corr = float("nan")
    per_min = blocks_total / (wall_total / 60) if wall_total > 0 else float("nan")
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
            "minutes_for_2_5_percent": need / per_min if need is not None and per_min > 0 else float("nan"),
            "paired_blocks_for_2_5_percent": blocks_needed(sd_pair, True),
            "false_regressions": sum(v == "regression" for v in verdicts), "verdicts": verdicts}


# ---- truth figures ---------------------------------------------------------------------------

def log_interval_se(estimate):
    """The s.e. of ln(estimate) implied by its interval (normal approximation at its level)."""
    z = statistics.NormalDist().inv_cdf(0.5 + estimate["level"] / 2)
    return (math.log(estimate["ci_high"]) - math.log(estimate["ci_low"])) / (2 * z)


def bias_of(estimates, expected, extra_se=0.0):
    """Mean of ln(estimate / expected) over the runs, its s.e., and whether it exceeds 2 s.e."""
    logs = [math.log(e / expected) for e in estimates]
    if not logs:
        return None
    se = math.sqrt(statistics.variance(logs) / len(logs) + extra_se ** 2) if len(logs) >= 2 else None
    mean = statistics.fmean(logs)
    beyond = None if se is None else abs(mean) > 2 * se and abs(mean) > 1e-9  # identical runs: se 0
    return {"mean_log": mean, "se": se, "runs": len(logs), "beyond_2se": beyond}


def binomial_lower_tail(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def coverage_of(rows, expected):
    """How many runs' intervals contain `expected`, against their stated level."""
    rows = [r for r in rows if r["ci_low"] is not None and r["ci_high"] is not None and r["level"] is not None]
    if not rows:
        return None
    covered = sum(r["ci_low"] <= expected <= r["ci_high"] for r in rows)
    level = min(r["level"] for r in rows)
    p_low = binomial_lower_tail(covered, len(rows), level)
    return {"covered": covered, "runs": len(rows), "share": covered / len(rows), "level": level,
            "p_low": p_low, "undercovers": p_low < 0.05}


def spurious_of(rows, accepted):
    judged = [r["verdict"] for r in rows if r["verdict"] != "error"]
    return {"count": sum(v not in accepted for v in judged), "runs": len(judged),
            "errors": len(rows) - len(judged)}


def overlap_of(rows):
    """The design's pair overlaps over its runs (analysis.json metrics[].overlap)."""
    overlaps = [r["overlap"] for r in rows if r["overlap"] and r["overlap"].get("pairs")]
    if not overlaps:
        return None
    return {"pairs": sum(o["pairs"] for o in overlaps), "min": min(o["min"] for o in overlaps),
            "median": statistics.median(o["median"] for o in overlaps),
            "voided": sum(o.get("voided", 0) for o in overlaps)}


def reference_of(pool, metric):
    """The pooled sequential-blocks estimate of `metric` (swiotlb's reference), or None."""
    row = run_estimate(pool, metric, "pool") if pool else None
    if row is None or row["estimate"] is None or row["ci_low"] is None:
        return None
    return row


def truth_row(experiment, design, metric, truth, rows, reference):
    """The truth figures of one (experiment, design, metric) from its runs' estimates."""
    estimates = [r["estimate"] for r in rows if r["estimate"] and r["estimate"] > 0]
    out = {"experiment": experiment, "config": EXPERIMENTS[experiment].config, "design": design, "metric": metric,
           "truth": truth.kind, "expected": truth.expected, "accepted": list(truth.accepted), "runs": rows,
           "estimate": math.exp(statistics.fmean(map(math.log, estimates))) if estimates else None,
           "bias": None, "coverage": None, "reference": None, "spurious": spurious_of(rows, truth.accepted),
           "overlap": overlap_of(rows)}
    if truth.kind == "ratio":
        out["bias"] = bias_of(estimates, truth.expected)
        out["coverage"] = coverage_of(rows, truth.expected)
    elif truth.kind == "reference" and reference is not None:
        # The pool's point estimate is uncertain itself: no coverage against it, and its s.e. joins
        # the bias's; sequential-blocks' runs are the pool, so their bias would be zero by construction.
        out["expected"] = reference["estimate"]
        out["reference"] = {"estimate": reference["estimate"], "ci_low": reference["ci_low"],
                            "ci_high": reference["ci_high"], "level": reference["level"], "runs": len(estimates),
                            "inside": sum(reference["ci_low"] <= e <= reference["ci_high"] for e in estimates)}
        if design != SEQUENTIAL:
            out["bias"] = bias_of(estimates, reference["estimate"], log_interval_se(reference))
    return out


def metrics_of(analyses):
    """The metrics the runs' analyses report, in their order."""
    names = []
    for a in analyses:
        for m in (a or {}).get("metrics", []):
            if m.get("name") not in names:
                names.append(m.get("name"))
    return names


def evaluate(args, abvm, planned, runs):
    """Every (experiment, design, metric) row: truth figures with the noise row in "noise"."""
    rows = []
    for experiment in dict.fromkeys(e for e, _ in planned):
        designs = [d for e, d in planned if e == experiment]
        analyses = {d: [analysis_of(abvm, r) for r in runs[(experiment, d)]] for d in designs}
        pool = None
        if EXPERIMENTS[experiment].truth == "reference" and runs[(experiment, SEQUENTIAL)]:
            pool = pooled_analysis(abvm, runs[(experiment, SEQUENTIAL)])
        for metric in metrics_of(a for d in designs for a in analyses[d]):
            for design in designs:
                dirs = runs[(experiment, design)]
                if not dirs:
                    continue
                estimates = [run_estimate(a, metric, d) for a, d in zip(analyses[design], dirs)]
                truth = truth_of(EXPERIMENTS[experiment], metric, config_text_of(dirs[0]))
                row = truth_row(experiment, design, metric, truth, estimates, reference_of(pool, metric))
                paired = any(r["primary"] == "paired" for r in estimates) or (
                    not any(r["primary"] for r in estimates) and design != SEQUENTIAL)
                data = [read_run(d, metric) + (r["verdict"],) for d, r in zip(dirs, estimates)]
                references = [read_run(d, REFERENCE_METRIC)[0] for d in dirs] if experiment == "noise" and args.reference else None
                row["noise"] = summarize(design, data, paired, references)
                if experiment == "noise" and metric == METRIC and args.false_alarms:
                    row["noise"]["resampled"] = resampled_verdicts(abvm, dirs, args.false_alarms, args.subset_blocks, 1)
                rows.append(row)
    return rows


# ---- output ----------------------------------------------------------------------------------

def pct(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:+.1f}"


def fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def truth_cells(row):
    """The printed truth columns of one row."""
    b, c, s, o, ref = row["bias"], row["coverage"], row["spurious"], row["overlap"], row["reference"]
    expected = "-" if row["expected"] is None else (f"ref {row['expected']:.4f}" if row["truth"] == "reference"
                                                    else f"{row['expected']:.4f}")
    se = "-" if b is None or b["se"] is None else f"{100 * b['se']:.1f}"
    bias = "-" if b is None else f"{pct(b['mean_log'])}±{se}" + ("!" if b["beyond_2se"] else "")
    coverage = "-" if c is None else f"{c['covered']}/{c['runs']}@{100 * c['level']:.1f}%" + ("!" if c["undercovers"] else "")
    if ref is not None:
        coverage = f"in ref {ref['inside']}/{ref['runs']}"
    overlap = "-" if o is None else f"{o['min']:.2f}/{o['median']:.2f}/{o['voided']}of{o['pairs']}"
    return [row["experiment"], row["design"], row["metric"], str(len(row["runs"])), expected,
            fmt(row["estimate"], ".4f"), bias, coverage, f"{s['count']}/{s['runs']}" + (f" ({s['errors']} err)" if s["errors"] else ""),
            overlap]


def noise_cells(row):
    t = row["noise"]
    return [row["experiment"], row["design"], row["metric"], str(t["runs"]), str(t["blocks"]), fmt(t["sd_pair"], ".3f"),
            fmt(t["sd_boot"], ".3f"), fmt(t["sd_run"], ".3f"), fmt(t["ab_correlation"], ".2f"),
            fmt(t["blocks_per_minute"], ".2f"), t["primary"], fmt(t["blocks_for_2_5_percent"], "d"),
            fmt(t["minutes_for_2_5_percent"], ".0f") + " m"]


def print_table(header, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def failed(row):
    """A truth row that found the design off: bias beyond 2 s.e., or too low a coverage."""
    return bool((row["bias"] or {}).get("beyond_2se") or (row["coverage"] or {}).get("undercovers"))


def checked_on(rows, design):
    """What a design was checked on in this series (the words of plan/calibration.cpp truth_summary)."""
    checks = [r for r in rows if r["design"] == design and (r["bias"] or r["coverage"])]
    if not checks:
        return "not checked on a known effect"
    off = [f"{r['experiment']} {r['metric']} (bias {pct(r['bias'] and r['bias']['mean_log'])} %, coverage "
           f"{r['coverage']['covered'] if r['coverage'] else '-'}/{r['coverage']['runs'] if r['coverage'] else '-'})"
           for r in checks if failed(r)]
    if off:
        return "off on " + "; ".join(off)
    names = ", ".join(dict.fromkeys(r["experiment"] for r in checks))
    covered = sum(r["coverage"]["covered"] for r in checks if r["coverage"])
    runs = sum(r["coverage"]["runs"] for r in checks if r["coverage"])
    return f"checked on {names}: no bias beyond 2 s.e., intervals held the known ratio in {covered} of {runs} runs"


def print_report(args, rows, skipped, cpu_sets):
    print(f"abvm design calibration on {socket.gethostname()}: {len(cpu_sets)} lane(s) on host CPUs "
          f"{' | '.join(cpu_sets)}")
    print("\ntruth (bias and its s.e. in %; coverage covered/runs@level, 'in ref' = inside the pooled sequential-blocks interval; "
          "overlap min/median/voided of pairs; '!' = beyond 2 s.e. / improbably low coverage)")
    print_table(["experiment", "design", "metric", "runs", "expected", "estimate", "bias %", "coverage", "spurious",
                 "overlap"], [truth_cells(r) for r in rows])
    print("\nnoise")
    print_table(["experiment", "design", "metric", "runs", "blocks", "sd(pair)", "sd(boot)", "sd(run)", "r(A,B)",
                 "blk/min", "primary", "blocks±2.5%", "wall±2.5%"], [noise_cells(r) for r in rows])
    print("\nper run (estimate [interval] level verdict)")
    for r in rows:
        runs = "; ".join(f"{fmt(x['estimate'], '.4f')} [{fmt(x['ci_low'], '.4f')}, {fmt(x['ci_high'], '.4f')}] "
                         f"{fmt(x['level'] and 100 * x['level'], '.1f')}% {x['verdict']}" for x in r["runs"])
        print(f"{r['experiment']} {r['design']} {r['metric']}: {runs}")
    for s in skipped:
        print(f"skipped: {s['experiment']} in {s['design']}: {s['reason']}")
    if any(r["truth"] == "reference" and r["reference"] is None for r in rows):
        print(f"swiotlb: no {SEQUENTIAL} runs (or their pooled analysis failed), so no reference: no bias")
    noise_rows = [r for r in rows if r["experiment"] == "noise"]
    if args.reference:
        for r in noise_rows:
            t = r["noise"]
            print(f"{r['design']}: sd(pair) {t['sd_pair']:.3f}, adjusted for the CPU reference {t['sd_pair_adjusted']:.3f} "
                  f"(slope {t['reference_slope']:.2f}): {t['sd_pair'] / t['sd_pair_adjusted']:.2f}x narrower")
    for r in noise_rows:
        if r["noise"].get("resampled"):
            total = sum(r["noise"]["resampled"].values())
            rates = ", ".join(f"{v} {c / total:.1%}" for v, c in sorted(r["noise"]["resampled"].items()))
            print(f"{r['design']}: {total} resampled A/A experiments of {args.subset_blocks} blocks: {rates}")
    source = [r for r in rows if r["experiment"] == "noise" and r["metric"] == METRIC] or [
        r for r in rows if r["experiment"] == "aa" and r["metric"] == METRIC]
    for r in source[1:]:
        first, need = source[0]["noise"]["blocks_for_2_5_percent"], r["noise"]["blocks_for_2_5_percent"]
        if first and need:
            print(f"blocks needed for ±2.5 % by the A/A noise of {r['metric']} ({r['experiment']}), "
                  f"{source[0]['design']} / {r['design']}: {first / need:.1f}x; {source[0]['design']} "
                  f"{checked_on(rows, source[0]['design'])}; {r['design']} {checked_on(rows, r['design'])}")


def finite(x):
    """JSON-safe: NaN and infinities as null, recursively."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite(v) for v in x]
    return x


def calibration_document(rows, skipped, cpu_sets):
    """The --out file (its format: the docstring)."""
    present = {r["experiment"] for r in rows}
    source = "noise" if "noise" in present else "aa" if "aa" in present else None
    designs = [r["noise"] for r in rows if r["experiment"] == source and r["metric"] == METRIC]
    usable = [d for d in designs if all(isinstance(d[k], (int, float)) and d[k] > 0
                                        for k in ("sd_pair", "sd_boot", "blocks_per_minute"))]
    return finite({"calibration_version": 2, "host": socket.gethostname(),
                   "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "metric": METRIC,
                   "cpu_sets": cpu_sets, "noise_source": source, "designs": usable, "experiments": rows,
                   "skipped": skipped})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--abvm", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--experiments", default="noise", help=f"comma-separated: {', '.join(EXPERIMENTS)}")
    p.add_argument("--designs", default="sequential-blocks,co-scheduled,lockstep,same-guest")
    p.add_argument("--configs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs"))
    p.add_argument("--cpu-sets", default="0", help="host CPU sets, ';'-separated: one lane each")
    p.add_argument("--seed", type=int, default=1, help="schedule.seed of round 1 (round r: seed + r - 1)")
    p.add_argument("--margin", type=float, default=None, help="analysis.margin for every run (default: the config's)")
    p.add_argument("--confidence", type=float, default=None, help="analysis.confidence (default: the config's)")
    p.add_argument("--reference", action="store_true", help="noise series: time a CPU-only reference in every boot")
    p.add_argument("--repetitions", type=int, default=10, help="noise series: measured dd runs per boot")
    p.add_argument("--results", default="results/calibration")
    p.add_argument("--out", default=None)
    p.add_argument("--reanalyze", action="store_true", help="only analyse the runs already in --results")
    p.add_argument("--false-alarms", type=int, default=0, metavar="K", help="noise series: resampled A/A sub-experiments per design")
    p.add_argument("--subset-blocks", type=int, default=10, help="blocks per resampled sub-experiment")
    args = p.parse_args()
    abvm = os.path.abspath(args.abvm)
    os.makedirs(args.results, exist_ok=True)
    experiments = [e for e in args.experiments.split(",") if e]
    unknown = [e for e in experiments if e not in EXPERIMENTS]
    if unknown:
        sys.exit(f"unknown experiment(s) {', '.join(unknown)}: choose from {', '.join(EXPERIMENTS)}")
    cpu_sets = [c for c in args.cpu_sets.split(";") if c]
    suffix = f"-{len(cpu_sets)}lanes" if len(cpu_sets) > 1 else ""
    planned, skipped = planned_runs(experiments, args.designs.split(","))
    runs = existing_runs(args, planned, suffix) if args.reanalyze else run_series(args, abvm, planned, suffix, cpu_sets)
    rows = evaluate(args, abvm, planned, runs)
    print_report(args, rows, skipped, cpu_sets)
    out = args.out or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "abvm",
                                   "calibration.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".tmp", "w") as f:
        json.dump(calibration_document(rows, skipped, cpu_sets), f, indent=2, allow_nan=False)
    os.replace(out + ".tmp", out)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
