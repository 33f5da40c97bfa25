#!/usr/bin/python3
"""Rehearses abvm's nightly job end to end on this machine, on real kernels under QEMU: a small local
git tree of Debian's linux-source-6.1 followed by `abvm nightly` for three nights, built with the
tinyconfig recipe (kernels/linux-6.1-virtio.toml):

  night 1  the branch head is the base: nothing to compare, the history says so;
  night 2  one harmless commit (bisect-control patch 1): no_change, and it becomes the last good commit;
  night 3  two commits: the bisect-control patch that bounces every virtio-blk request through swiotlb
           (patch 3), then a harmless one (patch 4): a regression, bisected to the bouncing commit.

Then `abvm history` writes the history page (it must show three nights) and `abvm export --kcidb`
writes night 3 as KCIDB JSON, validated against report/kcidb_schema.json with python3-jsonschema.

  .ci/nightly-rehearsal.py [--workdir DIR] [--abvm build/abvm] [--reports-only]

The tree (WORKDIR/linux, made once: about 1.3 GB) and abvm's kernel cache are kept between
rehearsals; the history (WORKDIR/history) starts afresh unless --reports-only, which only writes and
checks the reports of the history there. The commits are made with fixed dates, so their shas are the
same in every rehearsal. Needs root (abvm runs guests through libvirt's embedded driver) and
python3-jsonschema (harness/setup.sh --tests installs it).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "/usr/src/linux-source-6.1.tar.xz"
PATCHES = os.path.join(REPO, "kernels", "patches", "bisect-control")
URL = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
GIT_ENV = {"GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z",
           "GIT_AUTHOR_NAME": "abvm rehearsal", "GIT_AUTHOR_EMAIL": "rehearsal@example.org",
           "GIT_COMMITTER_NAME": "abvm rehearsal", "GIT_COMMITTER_EMAIL": "rehearsal@example.org"}


def git(tree, *args, capture=True):
    env = dict(os.environ, **GIT_ENV)
    r = subprocess.run(["git", "-C", tree, "-c", "commit.gpgsign=false", *args], env=env, check=True,
                       capture_output=capture, text=True)
    return r.stdout.strip() if capture else ""


def make_tree(workdir):
    """WORKDIR/linux: the base commit (the whole source) and the rehearsal's commits on top, as shas."""
    tree = os.path.join(workdir, "linux")
    if not os.path.isdir(os.path.join(tree, ".git")):
        print(f"rehearsal: making the git tree {tree} from {SOURCE} (once)", flush=True)
        shutil.rmtree(tree, ignore_errors=True)
        os.makedirs(workdir, exist_ok=True)
        subprocess.run(["tar", "-xf", SOURCE, "-C", workdir], check=True)
        os.rename(os.path.join(workdir, "linux-source-6.1"), tree)
        git(tree, "init", "-q", "-b", "master")
        git(tree, "add", "-A", "--force")  # Debian's tarball ignores everything (.gitignore: /*)
        git(tree, "commit", "-q", "-m", "Linux 6.1 (Debian's linux-source-6.1)")
        for patch in ("0001", "0003", "0004"):
            name = next(p for p in sorted(os.listdir(PATCHES)) if p.startswith(patch))
            git(tree, "am", "-q", "--committer-date-is-author-date", os.path.join(PATCHES, name))
        git(tree, "tag", "-f", "rehearsal-tip")
    log = git(tree, "log", "--format=%H %s", "--reverse", "rehearsal-tip").splitlines()
    if len(log) != 4:
        sys.exit(f"rehearsal: {tree} is not the rehearsal's tree (4 commits): remove it and run again")
    return tree, [line.split(" ", 1) for line in log]


def write_experiment(workdir, tree, base):
    """configs/bisect-control.toml reduced as cli_bisect_kernel_build_test reduces it, as a nightly."""
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
        checks.append((rc == 0, f"abvm export --kcidb night 3: exit {rc}, valid against KCIDB "
                                f"v{data['version']['major']}.{data['version']['minor']}, FAIL: {failed}"))
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
        b = last_line(history).get("bisection") or {}
        named = [c["commit"] for r in b.get("culprits", []) for c in r["commits"]]
        checks.append((named == [bounce], f"night 3's bisection: {b.get('outcome')}, names {[n[:12] for n in named]} "
                                          f"(wanted {bounce[:12]} {bounce_subject})"))
    reports(a.abvm, history, checks)
    for ok, what in checks:
        print(f"rehearsal: {'ok ' if ok else 'FAILED'} {what}")
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
