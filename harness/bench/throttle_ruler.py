#!/usr/bin/python3
"""Measures QEMU's disk throttling (<iotune>) on real guests against its burst model.

A throttled disk (config/device.hpp) lets a request start while its bucket holds at most r/10
(rate r, *_max unset); the request then adds its size. A dd of D bytes in blocks of s, one at a
time, on an empty bucket, starts its last block at (D - s - r/10) / r, so

    T_model = (D - s - r/10) / r            bandwidth_model = D / T_model

and the measured time is T_model + L (L: the last block's service time and dd's own start and
end). The same for an iops limit, counted in requests (D = N requests, s = 1), at any depth.

For each case below it runs one abvm experiment (`build/abvm run`, design sequential-blocks, a few
boots per side, a preallocated scratch image) whose side A has the cap r and side B f * r, and
prints per side: the bandwidth
of each boot's first run (the bucket empty since boot) against the model, L = T - T_model, the
bandwidth of the later runs of the boot (started right after the previous one: the agent's gap
between two runs may be shorter than the (r/10 + s) / r the bucket needs to empty), and the B/A
ratio of the first runs against the model's and against f.

usage: /usr/bin/python3 harness/bench/throttle_ruler.py --abvm build/abvm [--boots 3] [--runs 3]
       [--results DIR] [--cases NAME,...] [--cpu-set 0]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

K = 1024
M = 1024 * 1024

# name: (kind, rate of A, f, block size, total bytes or requests)
CASES = {
    # The rulers' dd (configs/ruler-10.toml, ruler-3.toml): 24M in 512K blocks at 10000K/s.
    "dd-ruler-0.90": ("dd", 10000 * K, 0.90, 512 * K, 24 * M),
    "dd-ruler-0.97": ("dd", 10000 * K, 0.97, 512 * K, 24 * M),
    # Smaller blocks: more requests, each with its own overhead.
    "dd-64k": ("dd", 10000 * K, 0.90, 64 * K, 24 * M),
    # A short run: the burst is a larger share.
    "dd-short": ("dd", 4000 * K, 0.90, 512 * K, 8 * M),
    # A faster cap.
    "dd-fast": ("dd", 20000 * K, 0.90, 512 * K, 48 * M),
    # The rulers' fio: 4K random writes, libaio, depth 16, 500 requests at 200 IOPS.
    "fio-iops-0.90": ("fio", 200, 0.90, 4 * K, 500),
    "fio-iops-0.97": ("fio", 200, 0.97, 4 * K, 500),
    # A cap the guest does not keep well above: under TCG it reaches 900-2900 IOPS unthrottled.
    "fio-fast": ("fio", 1000, 0.90, 4 * K, 2500),
    # No cap (rate 0): what the guest reaches, against which the caps must be low.
    "dd-free": ("dd", 0, 1.0, 512 * K, 24 * M),
    "fio-free": ("fio", 0, 1.0, 4 * K, 2500),
}

CONFIG = """name = "throttle-{name}"
description = "abvm bench: QEMU throttling against its burst model ({name})"
[guest]
kernel = "debian-cloud"
[disk]
preallocate = true
[sides.A]
label = "cap"
{cap_a}
[sides.B]
label = "cap-{f}"
{cap_b}
{workload}
[schedule]
boots_per_side = {boots}
design = "sequential-blocks"
cpu_set = "{cpu_set}"
allow_identical_sides = {identical}
min_run_time = "0s"
"""
DD = """[[workload]]
name = "w"
type = "dd"
bs = {bs}
count = {count}
oflag = ["direct"]
repetitions = {runs}
"""
FIO = """[[workload]]
name = "w"
type = "fio"
rw = "randwrite"
bs = "4K"
size = {size}
ioengine = "libaio"
iodepth = 16
repetitions = {runs}
"""


def model_seconds(rate, block, total):
    """QEMU's burst model: from the first request to the start of the last one."""
    return (total - block - rate / 10) / rate


def config_text(name, case, boots, runs, cpu_set):
    kind, rate, f, block, total = case
    rate_b = rate * f
    if rate_b != int(rate_b):
        sys.exit(f"{name}: {f} of {rate} is not a whole number")
    if kind == "dd":
        workload = DD.format(bs=block, count=total // block, runs=runs)
        limit = "total_bytes_sec"
    else:
        workload = FIO.format(size=total * block, runs=runs)
        limit = "total_iops_sec"
    cap = (lambda r: f"device.iotune.{limit} = {int(r)}") if rate else (lambda r: "")
    return CONFIG.format(name=name, cap_a=cap(rate), cap_b=cap(rate_b), f=f, workload=workload, boots=boots,
                         cpu_set=cpu_set, identical="false" if rate else "true")


def measured(results_dir, kind, total):
    """{side: [[seconds of run 0, run 1, ...] per boot]} from the journal."""
    metric = "w.bandwidth" if kind == "dd" else "w.write.iops"
    boots = {"A": {}, "B": {}}
    with open(os.path.join(results_dir, "journal.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e["outcome"] != "ok":
                continue
            value = next(m["value"] for m in e["metrics"] if m["name"] == metric)
            boots[e["side"]].setdefault(e["boot"], {})[e["run"]] = total / value
    return {side: [[runs[i] for i in sorted(runs)] for runs in b.values()] for side, b in boots.items()}


def run_case(abvm, name, case, args):
    kind, rate, f, block, total = case
    cfg = os.path.join(args.results, f"{name}.toml")
    with open(cfg, "w") as out:
        out.write(config_text(name, case, args.boots, args.runs, args.cpu_set))
    root = os.path.join(args.results, name)
    started = time.time()
    r = subprocess.run([abvm, "run", cfg, "--results-dir", root], capture_output=True, text=True)
    if r.returncode not in (0, 1, 4):  # a verdict: B is slower by construction, whatever abvm concludes
        sys.exit(f"{name}: abvm run exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    (rdir,) = [os.path.join(root, d) for d in os.listdir(root)]  # results/<experiment>-<time>/
    seconds = measured(rdir, kind, total)
    unit = "B/s" if kind == "dd" else "IOPS"
    scale = 1e6 if kind == "dd" else 1
    shown_unit = "MB/s" if kind == "dd" else "IOPS"
    s = block if kind == "dd" else 1
    if not rate:
        runs = [t for side in seconds.values() for b in side for t in b]
        values = sorted(total / t / scale for t in runs)
        print(f"\n{name}: {kind}, no cap: {statistics.median(values):.3f} {shown_unit} median of {len(values)} runs "
              f"(range {values[0]:.3f}-{values[-1]:.3f}; {time.time() - started:.0f} s)")
        return
    first = {}
    print(f"\n{name}: {kind}, {total} {'bytes' if kind == 'dd' else 'requests'} in "
          f"{block // K}K {'blocks' if kind == 'dd' else 'requests'}, A at {rate} {unit}, B at {f} of it "
          f"({time.time() - started:.0f} s)")
    print(f"  side  cap          model T   first runs: T (mean, sd)   L (ms)  bw {shown_unit} (model)      "
          f"later runs: bw")
    for side, r_side in (("A", rate), ("B", rate * f)):
        t_model = model_seconds(r_side, s, total)
        firsts = [b[0] for b in seconds[side]]
        laters = [t for b in seconds[side] for t in b[1:]]
        first[side] = statistics.mean(firsts)
        sd = statistics.stdev(firsts) if len(firsts) > 1 else 0.0
        bw = total / first[side] / scale
        later = f"{total / statistics.mean(laters) / scale:9.3f} (n={len(laters)})" if laters else "-"
        print(f"  {side}     {r_side:>10.0f}  {t_model:8.4f}   {first[side]:8.4f} {sd:7.4f} (n={len(firsts)})   "
              f"{(first[side] - t_model) * 1000:6.1f}  {bw:9.3f} ({total / t_model / scale:9.3f})   {later}")
    expected = model_seconds(rate, s, total) / model_seconds(rate * f, s, total)
    ratio = first["A"] / first["B"]
    print(f"  ratio B/A of first runs {ratio:.4f}; model {expected:.4f} ({(ratio / expected - 1) * 100:+.2f} %); "
          f"the caps' ratio {f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--abvm", default="build/abvm")
    p.add_argument("--boots", type=int, default=3, help="boots per side (default 3)")
    p.add_argument("--runs", type=int, default=3, help="runs per boot (default 3; the first is on an empty bucket)")
    p.add_argument("--results", default="", help="where the experiments go (default: a temporary directory)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    p.add_argument("--cpu-set", default="0", help="host CPUs of the guests (default 0)")
    args = p.parse_args()
    args.results = args.results or tempfile.mkdtemp(prefix="abvm-throttle-")
    os.makedirs(args.results, exist_ok=True)
    abvm = os.path.abspath(args.abvm)
    print(f"results in {args.results}; load {os.getloadavg()[0]:.1f}")
    for name in args.cases.split(","):
        if name not in CASES:
            sys.exit(f"unknown case {name}: use one of {', '.join(CASES)}")
        run_case(abvm, name, CASES[name], args)


if __name__ == "__main__":
    main()
