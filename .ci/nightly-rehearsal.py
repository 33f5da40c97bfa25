#!/usr/bin/python3
"""Rehearses the nightly jobs on this machine, night after night: the shell steps of
.github/workflows/nightly.yml and the script lines of .gitlab-ci.yml's nightly-demo, in their order,
read from those files, with the CI's cache and artifact steps stood in by directories under WORKDIR.
Each night starts from a fresh copy of the commit HEAD (the build directory is kept, as a warm CI
cache would). After the last night it checks that each night after the first compared against the
night before (when that one became the baseline) and prints what each job would have shown.

  .ci/nightly-rehearsal.py [--nights 2] [--ci github,gitlab] [--config FILE] [--workdir DIR]

--config replaces configs/demo.toml in the steps (a shorter experiment for a rehearsal); the
steps run as they are otherwise. Needs python3-yaml (harness/setup.sh installs it) and root, as
abvm run does.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_checkout(ws):
    """The workspace as a clean clone would be, keeping build/ (the cached build)."""
    os.makedirs(ws, exist_ok=True)
    for name in os.listdir(ws):
        if name == "build":
            continue
        p = os.path.join(ws, name)
        shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    # What the CI checks out: the commit (HEAD), not the working tree's edits.
    archive = subprocess.run(["git", "-C", REPO, "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", ws], input=archive, check=True)


def copy_dir(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    if os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=True)


def run_shell(cmd, ws, env, config):
    if config:
        cmd = cmd.replace("configs/demo.toml", config)
    print(f"    $ {cmd}", flush=True)
    return subprocess.run(["bash", "-e", "-c", cmd], cwd=ws, env=env).returncode


def github_night(night, ws, store, config):
    steps = yaml.safe_load(open(os.path.join(REPO, ".github/workflows/nightly.yml")))["jobs"]["demo"]["steps"]
    outputs, failed, shown = {}, False, []
    for step in steps:
        cond = step.get("if", "success()")
        m = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+) == '(\w*)'", cond)
        if cond == "always()":
            go = True
        elif m:
            go = not failed and outputs.get(m[1], {}).get(m[2]) == m[3]
        else:
            go = not failed
        name = step.get("name", step.get("uses", "?"))
        if not go:
            print(f"  - {name}: skipped ({cond})")
            continue
        print(f"  - {name}", flush=True)
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout"):
            fresh_checkout(ws)
        elif uses.startswith("actions/cache/restore"):
            saved = sorted(os.listdir(os.path.join(store, "cache"))) if os.path.isdir(os.path.join(store, "cache")) else []
            if saved:
                copy_dir(os.path.join(store, "cache", saved[-1]), os.path.join(ws, "baseline"))
                print(f"    restored the cache entry of {saved[-1]}")
        elif uses.startswith("actions/cache/save"):
            copy_dir(os.path.join(ws, "baseline"), os.path.join(store, "cache", f"night{night:02d}"))
        elif uses.startswith("actions/upload-artifact"):
            copy_dir(os.path.join(ws, "results"), os.path.join(store, "artifacts", f"night{night:02d}"))
        elif "run" in step:
            out = os.path.join(ws, ".github_output")
            open(out, "w").close()
            env = dict(os.environ, CI="true", GITHUB_ACTIONS="true", GITHUB_OUTPUT=out)
            rc = run_shell(step["run"], ws, env, config)
            if "id" in step:
                outputs[step["id"]] = dict(l.split("=", 1) for l in open(out).read().splitlines() if "=" in l)
            if rc != 0:
                print(f"    exit {rc}: the step fails")
                failed = True
    return "failed" if failed else "passed"


def gitlab_night(night, ws, store, config):
    job = yaml.safe_load(open(os.path.join(REPO, ".gitlab-ci.yml")))["nightly-demo"]
    fresh_checkout(ws)
    cache = os.path.join(store, "cache", "baseline")
    if os.path.isdir(cache):
        copy_dir(cache, os.path.join(ws, "baseline"))
        print("  - cache restored (baseline/)")
    rc = 0
    env = dict(os.environ, CI="true", GITLAB_CI="true")
    for line in job["script"]:
        rc = run_shell(line, ws, env, config)
        if rc != 0:
            break
    if job["cache"].get("when") == "always" or rc == 0:
        copy_dir(os.path.join(ws, "baseline"), cache)
    copy_dir(os.path.join(ws, "results"), os.path.join(store, "artifacts", f"night{night:02d}"))
    allowed = job.get("allow_failure", {}).get("exit_codes", [])
    return "passed" if rc == 0 else f"warning (exit {rc}, allowed)" if rc in allowed else f"failed (exit {rc})"


def state(ws):
    p = os.path.join(ws, "results", "nightly.env")
    return dict(l.split("=", 1) for l in open(p).read().splitlines() if "=" in l) if os.path.exists(p) else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nights", type=int, default=2)
    ap.add_argument("--ci", default="github,gitlab")
    ap.add_argument("--config", default="")
    ap.add_argument("--workdir", default="/tmp/abvm-nightly-rehearsal")
    a = ap.parse_args()
    config = os.path.abspath(a.config) if a.config else ""
    ok, compared = True, 0
    for ci in a.ci.split(","):
        root = os.path.join(a.workdir, ci)
        ws, store = os.path.join(root, "workspace"), os.path.join(root, "store")
        if os.path.isdir(store):
            shutil.rmtree(store)
        previous = None
        for night in range(1, a.nights + 1):
            print(f"== {ci}, night {night}", flush=True)
            status = (github_night if ci == "github" else gitlab_night)(night, ws, store, config)
            s = state(ws)
            run_dir = os.path.basename(s.get("dir", ""))
            print(f"== {ci}, night {night}: job {status}; run {run_dir or '-'} exit {s.get('run_rc')}, "
                  f"compare exit {s.get('compare_rc')} against baseline {s.get('baseline')}")
            if previous and previous["became_baseline"] and s.get("baseline") != previous["run"]:
                print(f"!! night {night} compared against {s.get('baseline')}, not night {night - 1}'s {previous['run']}")
                ok = False
            if previous and previous["became_baseline"] and s.get("compare_rc") in (None, "none"):
                print(f"!! night {night} did not run abvm compare")
                ok = False
            if previous and previous["became_baseline"] and s.get("baseline") == previous["run"]:
                compared += 1
            if previous and not previous["became_baseline"]:
                print(f"!! night {night - 1} did not become the baseline: night {night} cannot show the comparison")
                ok = False
            marker = os.path.join(ws, "baseline", ".nightly-run")
            became = os.path.exists(marker) and open(marker).read().strip() == run_dir
            previous = {"run": run_dir, "became_baseline": became}
    ok = ok and compared > 0
    print("rehearsal: every night after the first compared against the night before" if ok else "rehearsal: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
