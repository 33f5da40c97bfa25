#!/usr/bin/python3
"""Rehearses abvm's nightly job end to end on this machine, on real kernels under QEMU: a small local
git tree of Debian's linux-source-6.1 followed by `abvm nightly` for three nights, built with the
tinyconfig recipe (kernels/linux-6.1-virtio.toml):

  night 1  the branch head is the base: nothing to compare, the history says so;
  night 2  one harmless commit (bisect-control patch 1): no_change, and it becomes the last good commit;
  night 3  two commits: the bisect-control patch that bounces every virtio-blk request through swiotlb
           (patch 3), then a harmless one (patch 4): a regression, bisected to the bouncing commit.

Night 3's bisection is checked as abvm bisect's positive control was (cli_bisect_kernel_build_test, which
this rehearsal replaced in CI): the bouncing commit alone named, the commit after it adding no share of
its own, each step's finding and size, each step an abvm run linked from bisect.json and bisect.html, the
first the night's own comparison (not measured again), and night 3's report naming the bouncing commit
and linking bisect.html. Every kernel the nights built must be a cache hit
when built again from a copy of its recipe. Then `abvm history` writes the history page (it must show
three nights) and `abvm export --kcidb` writes night 3 as KCIDB JSON, validated against
report/kcidb_schema.json with python3-jsonschema, the bandwidth its one FAIL (the cost metrics, reported
and not judged, DONE). One line per check, "rehearsal: ok" or "rehearsal:
FAILED"; exit 0 when all are ok. CI runs it through harness/tests/cli_nightly_kernel_build_test.cpp (ctest
label kernel-build).

  .ci/nightly-rehearsal.py [--workdir DIR] [--abvm build/abvm] [--reports-only]

The tree (WORKDIR/linux, made once: about 1.3 GB of source and as much again of uncompressed objects)
and abvm's kernel cache are kept between rehearsals; the history (WORKDIR/history) starts afresh unless
--reports-only, which only checks the history there and writes its reports. The commits are made with
fixed dates, so their shas, and the kernels' cache keys, are the same in every rehearsal. Needs root
(abvm runs guests through libvirt's embedded driver) and python3-jsonschema (harness/setup.sh --tests
installs it).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from html import escape as html_escape

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "/usr/src/linux-source-6.1.tar.xz"
PATCHES = os.path.join(REPO, "kernels", "patches", "bisect-control")
URL = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
# The one metric the experiment judges (configs/bisect-control.toml [analysis] metrics), as a KCIDB test path.
JUDGED = "abvm.rehearsal.dd-write.bandwidth"
GIT_ENV = {"GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z",
           "GIT_AUTHOR_NAME": "abvm rehearsal", "GIT_AUTHOR_EMAIL": "rehearsal@example.org",
           "GIT_COMMITTER_NAME": "abvm rehearsal", "GIT_COMMITTER_EMAIL": "rehearsal@example.org"}


def git(tree, *args, capture=True):
    env = dict(os.environ, **GIT_ENV)
    # Objects stored uncompressed: zlib at git's default level made the tree take 8 minutes under load. And
    # never packed: `git am` would start `git gc --auto` on the 75,000 loose objects, compressing them all
    # with deltas in the background while the nights run.
    r = subprocess.run(["git", "-C", tree, "-c", "commit.gpgsign=false", "-c", "core.compression=0",
                        "-c", "core.looseCompression=0", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args],
                       env=env, check=True, capture_output=capture, text=True)
    return r.stdout.strip() if capture else ""


def make_tree(workdir):
    """WORKDIR/linux: the base commit (the whole source) and the rehearsal's commits on top, as shas."""
    tree = os.path.join(workdir, "linux")
    if not os.path.isdir(os.path.join(tree, ".git")):
        print(f"rehearsal: making the git tree {tree} from {SOURCE} (once)", flush=True)
        started = time.monotonic()
        making = tree + ".making"  # renamed into place when whole: a killed run leaves no half tree
        shutil.rmtree(making, ignore_errors=True)
        os.makedirs(making)
        subprocess.run(["tar", "-xf", SOURCE, "-C", making, "--strip-components=1"], check=True)
        git(making, "init", "-q", "-b", "master")
        git(making, "add", "-A", "--force")  # Debian's tarball ignores everything (.gitignore: /*)
        git(making, "commit", "-q", "-m", "Linux 6.1 (Debian's linux-source-6.1)")
        for patch in ("0001", "0003", "0004"):
            name = next(p for p in sorted(os.listdir(PATCHES)) if p.startswith(patch))
            git(making, "am", "-q", "--committer-date-is-author-date", os.path.join(PATCHES, name))
        git(making, "tag", "-f", "rehearsal-tip")
        shutil.rmtree(tree, ignore_errors=True)
        os.rename(making, tree)
        print(f"rehearsal: made the tree in {time.monotonic() - started:.0f} s", flush=True)
    log = git(tree, "log", "--format=%H %s", "--reverse", "rehearsal-tip").splitlines()
    if len(log) != 4:
        sys.exit(f"rehearsal: {tree} is not the rehearsal's tree (4 commits): remove it and run again")
    return tree, [line.split(" ", 1) for line in log]


def write_experiment(workdir, tree, base):
    """configs/bisect-control.toml's workload and budget as a nightly, reduced as its CI test reduced it: 2 dd
    runs of 64 MiB per boot instead of 3 of 128 MiB (a bounced dd is 3-5 times slower, and at 128 MiB the
    culprit's own steps cost most of the time), at most 15 blocks per comparison instead of 20 (Pocock-type
    looks after 10 and 15), in the file's lane (co-scheduled on CPUs 0-1). A bisection step's level (99.24 % for
    night 3's two commits) needs at least 9 pairs; the bounce costs far more than the 25 % margin and the
    harmless commits nothing, so a comparison normally decides at its first look."""
    text = open(os.path.join(REPO, "configs", "bisect-control.toml")).read()
    text = text[text.index("[guest]"):]
    sides = text.index("[sides.A]")
    text = text[:sides] + text[text.index("[[workload]]"):]
    for old, new in (("count = 16\n", "count = 8\n"), ("repetitions = 3\n", "repetitions = 2\n"),
                     ("max_boots_per_side = 20\n", "max_boots_per_side = 15\n")):
        assert old in text, f"configs/bisect-control.toml no longer has {old!r}: update the rehearsal"
        text = text.replace(old, new)
    path = os.path.join(workdir, "nightly.toml")
    with open(path, "w") as f:
        f.write(f'''# Written by .ci/nightly-rehearsal.py: the bisect control's workload and budget as a nightly.
name = "rehearsal"
description = "abvm nightly rehearsal: linux-source-6.1 as a git tree, tinyconfig"

[nightly]
tree = "{tree}"
branch = "master"
base = "{base}"
url = "{URL}"
recipe = "{os.path.join(REPO, 'kernels', 'linux-6.1-virtio.toml')}"

[nightly.bisect]
max_boots = 60
max_wall_time = "45m"

{text}''')
    return path


def last_line(history):
    with open(os.path.join(history, "history.jsonl")) as f:
        return json.loads(f.read().splitlines()[-1])


def bisection(history, bounce, bounce_subject, checks):
    """Night 3's bisection, checked as cli_bisect_kernel_build_test (which this rehearsal replaced in CI)
    checked `abvm bisect`'s positive control: the bouncing commit named and nothing else, the harmless
    commit after it found to add no share of its own, each step an abvm run linked from bisect.json and
    bisect.html, the first (the head against A) the night's own comparison, not measured again."""
    line = last_line(history)
    b = line.get("bisection") or {}
    named = [c["commit"] for r in b.get("culprits", []) for c in r["commits"]]
    checks.append((named == [bounce], f"night 3's bisection: {b.get('outcome')}, names {[n[:12] for n in named]} "
                                      f"(wanted {bounce[:12]} {bounce_subject})"))
    root = os.path.join(history, b.get("dir", "no-bisection"))
    try:
        report = json.load(open(os.path.join(root, "bisect.json")))
        html = open(os.path.join(root, "bisect.html")).read()
    except OSError as e:
        checks.append((False, f"night 3's bisection: no report: {e}"))
        return
    # The night's report (the history's "report" link) names the culprit and links bisect.html.
    night_report = os.path.join(history, line.get("report", "no-report"))
    page = open(night_report).read() if os.path.isfile(night_report) else ""
    link = os.path.relpath(os.path.join(root, "bisect.html"), os.path.dirname(night_report))
    named_there = f'<code title="{bounce}">' in page and html_escape(bounce_subject, quote=False) in page
    linked = f'<a href="{link}">' in page
    checks.append((named_there and linked,
                   f"night 3's report {line.get('report')}: names {bounce[:12]} {bounce_subject}: {named_there}, "
                   f"links {link}: {linked} (wanted True, True)"))
    checks.append((report["status"] == "finished" and report["rest_unsettled"] is False,
                   f"night 3's bisection: {report['status']}; the commit after the culprit adds a share of its own: "
                   f"{report['rest_unsettled']} (wanted finished, False)"))
    # Kernel k is A plus the first k commits: the series, then the culprit alone, then what follows it.
    wanted = [(2, 0, "slower"), (1, 0, "slower"), (2, 1, "not-slower")]
    asked, missing = [], []
    for s in report["steps"]:
        e = s["effects"][0]
        asked.append((s["kernel"], s["reference"], s["finding"]))
        # The bounce costs far more than the margin; a harmless commit clears 1 - margin.
        sized = e["high"] < 0.8 if s["finding"] == "slower" else e["low"] > 0.75
        if not sized:
            missing.append(f"step {s['kernel']} vs {s['reference']}: {e['estimate']:.3f} [{e['low']:.3f}, {e['high']:.3f}]")
        step = os.path.join(root, s["results_dir"])
        for f in ("journal.jsonl", "plan.json", "config.toml", "kernels.json", "analysis.json", "report.html"):
            if not os.path.exists(os.path.join(step, f)):
                missing.append(os.path.join(s["results_dir"], f))
        if s["report"] not in html:
            missing.append(f"bisect.html's link to {s['report']}")
        if os.path.exists(os.path.join(step, "analysis.json")):
            a = json.load(open(os.path.join(step, "analysis.json")))
            if (a["options"]["primary_estimate"], a["source"]["design"]) != ("paired", "co-scheduled"):
                missing.append(f"{s['results_dir']}: {a['options']['primary_estimate']}, {a['source']['design']}")
    if "<svg" not in html:
        missing.append("bisect.html's plot")
    # Step 1 (the head against A) is the night's own comparison, judged at the step's level, not run again.
    first = report["steps"][0] if report["steps"] else {}
    if os.path.realpath(os.path.join(root, first.get("results_dir", "-"))) != os.path.realpath(os.path.join(history, line["run_dir"])):
        missing.append(f"step 1 taken from the night's run {line['run_dir']} (it is {first.get('results_dir')})")
    checks.append((asked == wanted, f"night 3's bisection steps (kernel, reference, finding): {asked} (wanted {wanted})"))
    checks.append((not missing, f"night 3's bisection: {len(report['steps'])} steps, each an abvm run linked from "
                                f"bisect.json and bisect.html, sized as wanted; wrong or missing: {missing}"))


def rebuilt(abvm, history, checks):
    """Every kernel the nights built, its recipe copied elsewhere and built again, is a cache hit: a night
    run again (or a second bisection) builds nothing."""
    hits, recipes = 0, []
    with tempfile.TemporaryDirectory(prefix="abvm-rehearsal-") as copies:
        for night in sorted(os.listdir(os.path.join(history, "nights"))):
            kernels = os.path.join(history, "nights", night, "kernels")
            if not os.path.isdir(kernels):
                continue
            copy = shutil.copytree(kernels, os.path.join(copies, night))
            for recipe in sorted(f for f in os.listdir(copy) if f.endswith(".toml")):
                r = subprocess.run([abvm, "kernel", "build", os.path.join(copy, recipe)], capture_output=True, text=True)
                recipes.append(f"{night[:12]}/{recipe}")
                hits += r.returncode == 0 and "cached   yes" in r.stdout
    checks.append((recipes and hits == len(recipes),
                   f"the nights' kernels built again from copies of their recipes: {hits} of {len(recipes)} cached"))


def reports(abvm, history, checks):
    lines = [json.loads(l) for l in open(os.path.join(history, "history.jsonl")).read().splitlines()]
    page = os.path.join(history, "history.html")
    rc = subprocess.run([abvm, "history", history, "--output", page]).returncode
    html = open(page).read() if os.path.exists(page) else ""
    rows = html.count('class="night-row"')
    checks.append((rc == 0 and rows == 3, f"abvm history: exit {rc}, {rows} night rows (3 wanted)"))
    night3 = os.path.join(history, "nights", lines[-1]["night"])
    out = os.path.join(history, "kcidb-night3.json")
    rc = subprocess.run([abvm, "export", "--kcidb", night3, "--output", out]).returncode
    import jsonschema
    schema = json.load(open(os.path.join(REPO, "report", "kcidb_schema.json")))
    try:
        data = json.load(open(out))
        jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER).validate(data)
        failed = [t["path"] for t in data.get("tests", []) if t.get("status") == "FAIL"]
        # The judged metric alone fails; the cost metrics are reported, not judged: DONE whatever their verdict.
        unjudged = sorted(t["status"] for t in data.get("tests", []) if t.get("misc", {}).get("judged") is False)
        checks.append((rc == 0 and failed == [JUDGED] and set(unjudged) <= {"DONE"},
                       f"abvm export --kcidb night 3: exit {rc}, valid against KCIDB "
                       f"v{data['version']['major']}.{data['version']['minor']}, FAIL: {failed} (wanted [{JUDGED!r}]), "
                       f"reported, not judged: {unjudged} (DONE wanted)"))
    except (OSError, ValueError, jsonschema.ValidationError) as e:
        checks.append((False, f"abvm export --kcidb night 3: exit {rc}: {str(e)[:300]}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/var/tmp/abvm-nightly-rehearsal")
    ap.add_argument("--abvm", default=os.path.join(REPO, "build", "abvm"))
    ap.add_argument("--reports-only", action="store_true")
    a = ap.parse_args()
    tree, commits = make_tree(a.workdir)
    (base, _), (c1, _), (bounce, bounce_subject), (c3, _) = commits
    experiment = write_experiment(a.workdir, tree, base)
    history = os.path.join(a.workdir, "history")
    checks = []
    if not a.reports_only:
        shutil.rmtree(history, ignore_errors=True)
        wanted = [(base, 0, "unchanged"), (c1, 0, "no_change"), (c3, 1, "regression")]
        for night, (head, want_rc, want_outcome) in enumerate(wanted, 1):
            git(tree, "update-ref", "refs/heads/master", head)
            print(f"== night {night}: master at {head[:12]}", flush=True)
            rc = subprocess.run([a.abvm, "nightly", experiment, "--history", history]).returncode
            line = last_line(history)
            checks.append((rc == want_rc and line["outcome"] == want_outcome,
                           f"night {night}: exit {rc}, {line['outcome']} (wanted exit {want_rc}, {want_outcome}); "
                           f"A {line['key']['a'][:12]}, B {line['key']['b'][:12]}, good {line['good']}"))
    bisection(history, bounce, bounce_subject, checks)
    rebuilt(a.abvm, history, checks)
    reports(a.abvm, history, checks)
    for ok, what in checks:
        print(f"rehearsal: {'ok ' if ok else 'FAILED'} {what}")
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
