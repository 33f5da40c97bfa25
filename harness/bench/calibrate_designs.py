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
  ruler-3    configs/ruler-3.toml: the same at 0.97 (its margin 0.02), a 0.27 s dd beside the 2.4 s one
  ruler-3-read  configs/ruler-3-read-faster.toml: reading, A's cap 0.97 of B's (B faster), 2.4 s and
             0.27 s dd runs
  swiotlb    configs/swiotlb-control.toml: B bounces DMA through swiotlb, a real slowdown of unknown
             size; the reference is the sequential-blocks estimate pooled over the series
  neighbour  configs/neighbour-control.toml: B has virtio_blk.queue_depth=1; the fio metrics must
             regress, dd-4k.bandwidth is known unaffected (expected 1.0)
A ruler states its expected ratio per metric in its config, `# expected: <metric> <ratio>`, with
the range `[<low>, <high>]` after it where the ratio depends on each side's time beyond the model
(short runs: harness/bench/ruler_excess.py --isolation) (read from the copy in each results directory). Each run gets a copy of the experiment's config with name,
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
                direction is known (neighbour's fio metrics); for the cost metrics (CPU per GiB or
                per request) 1.0 in A/A and the rulers, the pool for swiotlb, no row for neighbour
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
  spurious      runs whose verdict contradicts the known truth / runs with a verdict, judged at each
                run's own margin (analysis.json options.margin) and the metric's direction:
                  a known ratio inside the margin (A/A: noise, aa, neighbour's dd-4k.bandwidth; ruler-3
                  when the margin is above 3 %): regression or improvement is spurious
                  a known ratio outside the margin (ruler-10; ruler-3 at its shipped margin 0.02):
                  no_change or the other direction is spurious, inconclusive is "missed"
                  neighbour's fio metrics (B far slower, the size unknown): anything but regression
                  is spurious, inconclusive "missed"
                  swiotlb (B cannot be faster, the size unknown): improvement is spurious
  missed        runs whose verdict was inconclusive where the effect is outside the margin: too few
                blocks for the design's noise, not a wrong answer
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
                       only the verdict is known), expected (null for "direction"), runs[] {results,
                       estimate, ci_low, ci_high, level, primary, verdict, overlap, margin, better,
                       judged ("ok", "spurious", "missed", "error")}, estimate (geometric mean), bias
                       {mean_log, se, runs, beyond_2se} | null, coverage {covered, runs, share, level,
                       p_low, undercovers} | null (null for swiotlb), reference {estimate, ci_low,
                       ci_high, level, inside, runs} | null (swiotlb), spurious {count, missed, runs,
                       errors}, overlap {pairs, min, median, voided} | null, noise {the noise row, as in
                       designs[]}
  skipped[]            {experiment, design, reason}

usage: /usr/bin/python3 harness/bench/calibrate_designs.py --abvm build/abvm [--rounds 3] [--blocks 10]
       [--experiments noise,aa,ruler-10,ruler-3,swiotlb,neighbour]
       [--designs sequential-blocks,co-scheduled,lockstep,same-guest] [--cpu-sets 0-1] [--seed 1]
       [--margin M] [--confidence C] [--repetitions 10] [--reference] [--results DIR] [--out FILE]
       [--reanalyze] [--false-alarms K] [--dry-run]
Guests are pinned to --cpu-sets (default "0-1": co-scheduled needs two CPUs per lane), so the comparison
is design against design, not pinned against unpinned; keep other work off those CPUs while it runs.
--cpu-sets "0-1;2-3" runs every design on two lanes (one block per CPU set at once): blocks per minute
then count both lanes.
--dry-run writes the configs and prints the series without booting anything. A reduced series checks
the script and the designs roughly, not figures to keep: give it its own --out, since the default is
the file `abvm run` warns from, e.g. --rounds 1 --blocks 2 --experiments ruler-10 --designs
co-scheduled --out /tmp/calibration-check.json.

The report prints, per design, the truth table (one row per experiment and metric: expected, estimate,
bias, coverage, spurious, missed, overlap) and the line `abvm run` would print about it; then the noise
table; then one line per design with the columns of README's "Designs on real guests" table (checked
on, checks off, the bias furthest from zero in s.e., coverage, spurious, missed, and the A/A noise:
sd(pair), blocks and wall time for ±2.5 %); then every run's estimate, interval and verdict.
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
    Experiment("ruler-3-read", "ruler-3-read-faster.toml", None, "ruler"),
    Experiment("swiotlb", "swiotlb-control.toml", "B's kernel command line adds swiotlb=force", "reference"),
    Experiment("neighbour", "neighbour-control.toml", "B's kernel command line adds virtio_blk.queue_depth=1",
               "neighbour"),
]}


@dataclasses.dataclass(frozen=True)
class Truth:
    kind: str                     # "ratio", "reference" or "direction"
    expected: float | None        # the known ratio (for "reference": filled in from the pool)
    low: float | None = None      # the range a ruler states beside it ([low, high]), else None
    high: float | None = None


EXPECTED = re.compile(r"^#\s*expected:\s*(\S+)\s+([0-9.eE+-]+)(?:\s*\[([0-9.eE+-]+),\s*([0-9.eE+-]+)\])?\s*$", re.M)


def expected_ratios(config_text):
    """{metric: (ratio, low, high)} from a config's `# expected: <metric> <ratio> [<low>, <high>]`
    comments (the range is optional: None without it)."""
    return {m.group(1): (float(m.group(2)), *(float(g) if g else None for g in m.group(3, 4)))
            for m in EXPECTED.finditer(config_text)}


COST_SUFFIXES = (".guest_cpu_per_gib", ".host_cpu_per_gib", ".host_cpu_per_req")


def truth_of(experiment, metric, config_text):
    """What is known of one metric of one experiment (the docstring's `expected`); None when nothing is.
    The cost metrics (issue 27: CPU per GiB or per request, reported beside the judged ones) are a
    property of the side: 1.0 in A/A and in a ruler (its sides differ in their disk's cap alone), the
    pooled reference for swiotlb, unknown for neighbour."""
    if metric.endswith(COST_SUFFIXES):
        if experiment.truth in ("aa", "ruler"):
            return Truth("ratio", 1.0)
        return Truth("reference", None) if experiment.truth == "reference" else None
    if experiment.truth == "aa":
        return Truth("ratio", 1.0)
    if experiment.truth == "ruler":
        expected = expected_ratios(config_text).get(metric)
        if expected is None:
            sys.exit(f"{experiment.name}: its config states no '# expected: {metric} <ratio>'")
        return Truth("ratio", *expected)
    if experiment.truth == "reference":
        return Truth("reference", None)
    if metric.startswith("dd-"):
        return Truth("ratio", 1.0)
    return Truth("direction", None)


def effect_verdict(ratio, better):
    """The verdict a real effect of `ratio` (B/A) earns when it is outside the margin."""
    return "regression" if (ratio < 1) == (better != "lower") else "improvement"


def accepted_verdicts(truth, margin, better):
    """(the verdicts that tell the truth, the verdicts that only miss it) of one run, by the
    docstring's `spurious`: a known ratio inside the run's margin (1.0 included) wants no_change or
    inconclusive; outside it, the verdict of its direction, inconclusive being a miss."""
    if truth.kind == "direction":        # neighbour's fio: B slower by far more than any margin
        return ("regression",), ("inconclusive",)
    if truth.kind == "reference":        # swiotlb: B is slower by an unknown amount, never faster
        return ("regression", "no_change", "inconclusive"), ()
    if margin is None or 1 - margin < truth.expected < 1 + margin:
        return ("no_change", "inconclusive"), ()
    return (effect_verdict(truth.expected, better),), ("inconclusive",)


def judge(truth, run):
    """One run's verdict against the truth: "ok", "spurious", "missed" or "error"."""
    if run["verdict"] == "error":
        return "error"
    accepted, missed = accepted_verdicts(truth, run["margin"], run["better"])
    return "ok" if run["verdict"] in accepted else "missed" if run["verdict"] in missed else "spurious"


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


def run_length(results_dir, metric):
    """The median measured run (s, host clock) of `metric`'s workload, None without timings."""
    workload, lengths = metric.split(".")[0], []
    with open(os.path.join(results_dir, "journal.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e.get("outcome") == "ok" and e.get("workload") == workload and e.get("timing"):
                lengths.append(e["timing"]["end"] - e["timing"]["start"])
    return statistics.median(lengths) if lengths else None


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
           "primary": None, "verdict": "error", "overlap": None, "margin": None, "better": None}
    m = next((m for m in (analysis or {}).get("metrics", []) if m.get("name") == metric), None)
    if m is None:
        return row
    effect = m.get("effect") or {}
    row.update(estimate=effect.get("estimate"), ci_low=effect.get("ci_low"), ci_high=effect.get("ci_high"),
               level=effect.get("confidence"), verdict=m.get("verdict", "error"), overlap=m.get("overlap"),
               margin=analysis.get("options", {}).get("margin"), better=m.get("better"),
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


def spurious_of(rows, truth):
    """The runs' verdicts against the truth; each run keeps its own judgement ("judged")."""
    for r in rows:
        r["judged"] = judge(truth, r)
    count = collections.Counter(r["judged"] for r in rows)
    return {"count": count["spurious"], "missed": count["missed"], "runs": len(rows) - count["error"],
            "errors": count["error"]}


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
           "truth": truth.kind, "expected": truth.expected, "expected_range": None, "runs": rows,
           "length": statistics.median(r["length"] for r in rows if r.get("length")) if any(
               r.get("length") for r in rows) else None, "isolation": None,
           "estimate": math.exp(statistics.fmean(map(math.log, estimates))) if estimates else None,
           "bias": None, "coverage": None, "reference": None, "spurious": spurious_of(rows, truth),
           "overlap": overlap_of(rows)}
    if truth.kind == "ratio":
        out["bias"] = bias_of(estimates, truth.expected)
        out["coverage"] = coverage_of(rows, truth.expected)
        if truth.low is not None:
            out["expected_range"] = {"low": truth.low, "high": truth.high,
                                     "inside": sum(truth.low <= e <= truth.high for e in estimates)}
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
                estimates = [run_estimate(a, metric, d) | {"length": run_length(d, metric)}
                             for a, d in zip(analyses[design], dirs)]
                truth = truth_of(EXPERIMENTS[experiment], metric, config_text_of(dirs[0]))
                if truth is None:
                    continue
                row = truth_row(experiment, design, metric, truth, estimates, reference_of(pool, metric))
                paired = any(r["primary"] == "paired" for r in estimates) or (
                    not any(r["primary"] for r in estimates) and design != SEQUENTIAL)
                data = [read_run(d, metric) + (r["verdict"],) for d, r in zip(dirs, estimates)]
                references = [read_run(d, REFERENCE_METRIC)[0] for d in dirs] if experiment == "noise" and args.reference else None
                row["noise"] = summarize(design, data, paired, references)
                if experiment == "noise" and metric == METRIC and args.false_alarms:
                    row["noise"]["resampled"] = resampled_verdicts(abvm, dirs, args.false_alarms, args.subset_blocks, 1)
                rows.append(row)
    return [with_isolation(r, rows) for r in rows]


def with_isolation(row, rows):
    """The row with "isolation": its runs whose estimate lies inside the interval of the
    sequential-blocks run of the same experiment and metric (its first, when several), and those
    whose verdict is that run's (issue 26: a paired design must tell what isolation tells)."""
    iso = next((r for r in rows if r["design"] == SEQUENTIAL and r["experiment"] == row["experiment"]
                and r["metric"] == row["metric"] and r["runs"]), None)
    if iso is None or row["design"] == SEQUENTIAL or iso["runs"][0]["ci_low"] is None:
        return row
    ref = iso["runs"][0]
    mine = [r for r in row["runs"] if r["estimate"]]
    row["isolation"] = {"ci_low": ref["ci_low"], "ci_high": ref["ci_high"], "verdict": ref["verdict"], "runs": len(mine),
                        "inside": sum(ref["ci_low"] <= r["estimate"] <= ref["ci_high"] for r in mine),
                        "same_verdict": sum(r["verdict"] == ref["verdict"] for r in mine)}
    return row


# ---- output ----------------------------------------------------------------------------------

def fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def bias_cell(b):
    """"-2.1±0.4!": the bias in %, its s.e., "!" beyond 2 s.e."""
    if b is None:
        return "-"
    se = "-" if b["se"] is None else f"{100 * b['se']:.2f}"
    return f"{100 * b['mean_log']:+.2f}±{se}" + ("!" if b["beyond_2se"] else "")


def truth_cells(row):
    """The printed truth columns of one row (its design is the section's)."""
    c, s, o, ref = row["coverage"], row["spurious"], row["overlap"], row["reference"]
    expected = "-" if row["expected"] is None else (f"ref {row['expected']:.4f}" if row["truth"] == "reference"
                                                    else f"{row['expected']:.4f}")
    coverage = "-" if c is None else f"{c['covered']}/{c['runs']}@{100 * c['level']:.1f}%" + ("!" if c["undercovers"] else "")
    if ref is not None:
        coverage = f"in ref {ref['inside']}/{ref['runs']}"
    overlap = "-" if o is None else f"{o['min']:.2f}/{o['median']:.2f}/{o['voided']}of{o['pairs']}"
    r, iso = row.get("expected_range"), row.get("isolation")
    in_range = "-" if r is None else f"{r['inside']}/{len(row['runs'])} [{r['low']:.4f},{r['high']:.4f}]"
    in_iso = "-" if iso is None else f"{iso['inside']}/{iso['runs']}, verdict {iso['same_verdict']}/{iso['runs']}"
    return [row["experiment"], row["metric"], fmt(row.get("length"), ".2f"), str(len(row["runs"])), expected,
            fmt(row["estimate"], ".4f"), bias_cell(row["bias"]), in_range, in_iso, coverage,
            f"{s['count']}/{s['runs']}" + (f" ({s['errors']} err)" if s["errors"] else ""), str(s["missed"]), overlap]


def noise_cells(row):
    t = row["noise"]
    return [row["design"], row["experiment"], row["metric"], str(t["runs"]), str(t["blocks"]), fmt(t["sd_pair"], ".3f"),
            fmt(t["sd_boot"], ".3f"), fmt(t["sd_run"], ".3f"), fmt(t["ab_correlation"], ".2f"),
            fmt(t["blocks_per_minute"], ".2f"), t["primary"], fmt(t["blocks_for_2_5_percent"], "d"),
            fmt(t["minutes_for_2_5_percent"], ".0f") + " m"]


def print_table(header, rows, left=3, indent=""):
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    for r in [header] + rows:
        print(indent + "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def failed(row):
    """A truth row that found the design off: bias beyond 2 s.e., or too low a coverage."""
    return bool((row["bias"] or {}).get("beyond_2se") or (row["coverage"] or {}).get("undercovers"))


def design_totals(rows, design):
    """One design's truth over the series: its checked rows (a bias or a coverage), those off, the
    largest bias in s.e., coverage and verdict counts (the figures of plan/calibration.cpp truth_summary)."""
    mine = [r for r in rows if r["design"] == design]
    checks = [r for r in mine if r["bias"] or r["coverage"]]
    biased = [r for r in checks if r["bias"] and r["bias"]["se"]]
    # The bias furthest from zero in its s.e.; with one run each (no s.e.), the largest.
    worst = max(biased, key=lambda r: abs(r["bias"]["mean_log"]) / r["bias"]["se"], default=None) or max(
        (r for r in checks if r["bias"]), key=lambda r: abs(r["bias"]["mean_log"]), default=None)
    return {"experiments": list(dict.fromkeys(r["experiment"] for r in mine)), "checks": len(checks),
            "off": [r for r in checks if failed(r)], "worst": worst, "bias_tested": bool(biased),
            "covered": sum(r["coverage"]["covered"] for r in checks if r["coverage"]),
            "coverage_runs": sum(r["coverage"]["runs"] for r in checks if r["coverage"]),
            "levels": sorted({r["coverage"]["level"] for r in checks if r["coverage"]}),
            "spurious": sum(r["spurious"]["count"] for r in mine), "missed": sum(r["spurious"]["missed"] for r in mine),
            "judged": sum(r["spurious"]["runs"] for r in mine)}


def checked_on(rows, design):
    """What a design was checked on in this series, in the words of plan/calibration.cpp truth_summary."""
    t = design_totals(rows, design)
    if not t["checks"]:
        return "not checked on a known effect"
    if t["off"]:
        return "off on " + "; ".join(f"{r['experiment']} {r['metric']} (bias {bias_cell(r['bias'])} %, coverage "
                                     f"{r['coverage']['covered'] if r['coverage'] else '-'}/"
                                     f"{r['coverage']['runs'] if r['coverage'] else '-'})" for r in t["off"])
    return (f"checked on {', '.join(t['experiments'])}: "
            f"{'no bias beyond 2 s.e.' if t['bias_tested'] else 'bias untested (one run each)'}, intervals held the "
            f"known ratio in {t['covered']} of {t['coverage_runs']} runs, {t['spurious']} of {t['judged']} verdicts "
            f"contradicting the known effect")


def summary_cells(rows, design, noise):
    """The per-design line: the README's "Designs on real guests" columns."""
    t = design_totals(rows, design)
    w = t["worst"]
    worst = "-" if w is None else f"{bias_cell(w['bias'])} ({w['experiment']} {w['metric']})"
    levels = "/".join(f"{100 * v:.1f}%" for v in t["levels"])
    coverage = f"{t['covered']}/{t['coverage_runs']}" + (f"@{levels}" if levels else "")
    n = (noise or {}).get("noise") or {}
    minutes = fmt(n.get("minutes_for_2_5_percent"), ".0f")
    minutes += "" if minutes == "-" else " m"
    return [design, ", ".join(t["experiments"]), f"{len(t['off'])}/{t['checks']}", worst, coverage,
            f"{t['spurious']}/{t['judged']}", str(t["missed"]), fmt(n.get("sd_pair"), ".3f"),
            fmt(n.get("blocks_for_2_5_percent"), "d"), minutes]


LEGEND = """  run s     the median measured run of the metric's workload (host clock): bias per run length
  bias %    mean of ln(estimate / expected) over the runs, in %, ± its standard error; "!" beyond 2 s.e.
  in range  runs whose estimate lies in the ruler's stated range [low, high] (from each side's L in isolation)
  in iso    runs whose estimate lies in the sequential-blocks run's interval, and runs whose verdict is its
  coverage  runs whose interval held the expected ratio / runs @ the interval's stated level; "!" improbably
            few for that level; "in ref k/n": estimates inside the pooled sequential-blocks interval (swiotlb)
  spurious  verdicts that contradict the known effect / runs with a verdict (regression or improvement
            where the effect is inside the margin, e.g. A/A, neighbour's dd; no_change or the wrong
            direction where it is outside)
  missed    inconclusive where the effect is outside the margin (too few blocks, not a wrong answer)
  overlap   smallest pair overlap / median of the runs' medians / pairs voided of pairs"""


def print_truth(rows, designs):
    print("\ntruth: each design's estimates against the known effects")
    print(LEGEND)
    for design in designs:
        mine = [r for r in rows if r["design"] == design]
        if not mine:
            continue
        print(f"\n  {design}")
        print_table(["experiment", "metric", "run s", "runs", "expected", "estimate", "bias %", "in range", "in iso",
                     "coverage", "spurious", "missed", "overlap"], [truth_cells(r) for r in mine], left=2, indent="    ")
        print(f"    {checked_on(rows, design)}")


def print_extras(args, rows, skipped):
    """Per run lines, skipped pairs, and the noise series' options."""
    print("\nper run (estimate [interval] level verdict: judged)")
    for r in rows:
        runs = "; ".join(f"{fmt(x['estimate'], '.4f')} [{fmt(x['ci_low'], '.4f')}, {fmt(x['ci_high'], '.4f')}] "
                         f"{fmt(x['level'] and 100 * x['level'], '.1f')}% {x['verdict']}: {x['judged']}"
                         for x in r["runs"])
        print(f"{r['design']} {r['experiment']} {r['metric']}: {runs}")
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


def noise_source_rows(rows):
    """The rows the designs' noise figures come from: the noise series, else A/A (dd-write.bandwidth)."""
    return [r for r in rows if r["experiment"] == "noise" and r["metric"] == METRIC] or [
        r for r in rows if r["experiment"] == "aa" and r["metric"] == METRIC]


def print_report(args, rows, skipped, cpu_sets):
    print(f"abvm design calibration on {socket.gethostname()}: {len(cpu_sets)} lane(s) on host CPUs "
          f"{' | '.join(cpu_sets)}")
    designs = list(dict.fromkeys(r["design"] for r in rows))
    print_truth(rows, designs)
    print("\nnoise (every experiment's blocks; sd of log values)")
    print_table(["design", "experiment", "metric", "runs", "blocks", "sd(pair)", "sd(boot)", "sd(run)", "r(A,B)",
                 "blk/min", "primary", "blocks±2.5%", "wall±2.5%"],
                [noise_cells(r) for d in designs for r in rows if r["design"] == d])
    source = noise_source_rows(rows)
    by_design = {r["design"]: r for r in source}
    print(f"\nper design (noise: {source[0]['experiment'] + ' ' + METRIC if source else 'no A/A series in this run'})")
    print_table(["design", "checked on", "off", "bias % (furthest)", "coverage", "spurious", "missed",
                 "sd(pair)", "blocks±2.5%", "wall±2.5%"],
                [summary_cells(rows, d, by_design.get(d)) for d in designs], left=2)
    print_extras(args, rows, skipped)
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


def dry_run(args, planned, skipped, suffix, cpu_sets):
    """The series without running it: every run's config written (and its keys checked, as a real
    run does), the `abvm run` commands in series order."""
    for r in range(args.rounds):
        for experiment, design in planned:
            config = os.path.join(args.results, f"{run_name(experiment, design, suffix)}-round{r + 1}.toml")
            with open(config, "w") as f:
                f.write(experiment_config(args, experiment, design, r, suffix, cpu_sets))
            print(f"round {r + 1}/{args.rounds} {experiment} {design}: {args.abvm} run {config} --results-dir "
                  f"{args.results}")
    for s in skipped:
        print(f"skipped: {s['experiment']} in {s['design']}: {s['reason']}")
    boots = args.rounds * args.blocks * sum(1 if d == SAME_GUEST else 2 for _, d in planned)
    print(f"{args.rounds * len(planned)} runs of {args.blocks} blocks each ({boots} guest boots) on {len(cpu_sets)} "
          f"lane(s); nothing run, nothing written to the calibration file")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--abvm", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--experiments", default="noise", help=f"comma-separated: {', '.join(EXPERIMENTS)}")
    p.add_argument("--designs", default="sequential-blocks,co-scheduled,lockstep,same-guest")
    p.add_argument("--configs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs"))
    p.add_argument("--cpu-sets", default="0-1", help="host CPU sets, ';'-separated: one lane each")
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
    p.add_argument("--dry-run", action="store_true",
                   help="write each run's config to --results and print the series; boot nothing")
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
    if args.dry_run:
        return dry_run(args, planned, skipped, suffix, cpu_sets)
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
