#!/usr/bin/python3
"""Runs shipped experiments as they are and prints what README's "Validated on" table records.

usage: /usr/bin/python3 harness/bench/validate_configs.py --abvm build/abvm [--results DIR]
       [--design DESIGN] CONFIG [CONFIG ...]
       /usr/bin/python3 harness/bench/validate_configs.py --abvm build/abvm --describe RESULTS_DIR ...

Each CONFIG (e.g. configs/demo.toml) runs once with `abvm run` (with --design, a copy of it whose
schedule.design is DESIGN: sequential-blocks gives the isolation reference). For each it prints the
wall time, the exit code, the overall verdict, and per metric: the primary effect B/A with its
interval, the metric's verdict, the boots per side it stopped at, and the overlap of A's and B's
runs (min / median over the pairs, pairs voided). Then harness/bench/window_timings.py's figures of
the run (go skew, filler gap, clock error). Nothing else is written; results stay under --results.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time


def with_design(config, design):
    """A copy of `config` whose schedule.design is `design`, in out_dir; paths stay the config's."""
    text = open(config).read()
    if re.search(r'^design\s*=.*$', text, re.M):
        text = re.sub(r'^design\s*=.*$', f'design = "{design}"', text, count=1, flags=re.M)
    else:
        text = re.sub(r'^\[schedule\]\s*$', f'[schedule]\ndesign = "{design}"', text, count=1, flags=re.M)
    # A copy elsewhere must still find the config's kernels and patches: relative paths are the
    # config's own directory's (the experiment's config_dir), so the copy stays beside it.
    copy = os.path.join(os.path.dirname(os.path.abspath(config)),
                        f".validate-{design}-{os.path.basename(config)}")
    with open(copy, "w") as f:
        f.write(text)
    return copy


def newest_run(results, before):
    new = sorted(set(os.listdir(results)) - before)
    dirs = [os.path.join(results, n) for n in new if os.path.isdir(os.path.join(results, n))]
    return dirs[-1] if dirs else None


def describe(run_dir):
    with open(os.path.join(run_dir, "analysis.json")) as f:
        a = json.load(f)
    lines = [f"  verdict {a['verdict']}, design {a.get('source', {}).get('design')}, "
             f"primary {a['options'].get('primary_estimate')}"]
    for m in a["metrics"]:
        e = m.get("effect") or {}
        o = m.get("overlap")
        boots = m["a"].get("units")  # the count of units (boots) of side A
        overlap = (f"overlap min {o['min']:.3f} median {o['median']:.3f} over {o['pairs']} pairs, "
                   f"{o['voided']} voided" if o else "no overlap recorded")
        est = e.get("estimate")
        lines.append(f"  {m['name']}: B/A {est if est is None else round(est, 4)} "
                     f"[{e.get('ci_low') and round(e['ci_low'], 4)}, {e.get('ci_high') and round(e['ci_high'], 4)}] "
                     f"at {e.get('confidence')}, {m['verdict']}, {boots} boots of A; {overlap}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--abvm", required=True)
    p.add_argument("--results", default="results/validate")
    p.add_argument("--design", default=None)
    p.add_argument("--describe", action="store_true",
                   help="print what README records of existing results directories (the arguments) and run nothing")
    p.add_argument("configs", nargs="+")
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.describe:
        for run_dir in args.configs:
            print(run_dir, flush=True)
            print(describe(run_dir), flush=True)
            subprocess.run(["/usr/bin/python3", os.path.join(here, "window_timings.py"), run_dir])
        return
    os.makedirs(args.results, exist_ok=True)
    for config in args.configs:
        run_config = with_design(config, args.design) if args.design else config
        before = set(os.listdir(args.results))
        t0 = time.time()
        r = subprocess.run([os.path.abspath(args.abvm), "run", run_config, "--results-dir", args.results],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.time() - t0
        if run_config != config:
            os.remove(run_config)
        run_dir = newest_run(args.results, before)
        print(f"{config}{' as ' + args.design if args.design else ''}: exit {r.returncode}, {wall / 60:.1f} min, "
              f"{run_dir}", flush=True)
        if run_dir and os.path.exists(os.path.join(run_dir, "analysis.json")):
            print(describe(run_dir), flush=True)
            subprocess.run(["/usr/bin/python3", os.path.join(here, "window_timings.py"), run_dir])
        else:
            print(r.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
