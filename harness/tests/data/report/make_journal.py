#!/usr/bin/python3
"""Synthesises an abvm run journal (samples/journal.hpp, journal_version 1) for report fixtures
and the report-time benchmark. Deterministic for a given seed.

usage: make_journal.py OUT_JOURNAL [--boots N] [--runs R] [--b-ratio X] [--noise S] [--fail-trial ID]
                       [--seed K] [--accelerator tcg|kvm] [--co-scheduled [--drift BLOCK:RUN:SHARE]...]

Per boot: R dd runs ("dd-write.bandwidth", B/s, about 4.4 GB/s on A, X times that on B, relative
noise S, one boot in seven on a slow host mode at 1.2 GB/s) and one fio run
("fio-seqwrite.write.clat_mean", ns, lower is better). A and B boots alternate in blocks of one
boot per side, the side going first chosen at random. --fail-trial makes that trial a kernel panic
(one journal line with outcome "panic" and no metrics).

--co-scheduled adds what the run stage records of a co-scheduled run (samples/journal.hpp "timing"
and "overlap"): a block's A and B boots run at once from 1764446400 + 60 * block (host clock, s), run
k of both sides on the host's go at +5 + 3k s; a run lasts 4.4e9 / value s (dd) or value / 2.3e5 s
(fio), A starts 1 ms after the go and B 4 ms after it, and the faster guest keeps a filler load going
until its partner's run ends (load_end). --drift BLOCK:RUN:SHARE makes that pair drift apart as before
the filler existed: both runs last as long as A's, B starts (1 - SHARE) of it after A, neither has a
filler, so both runs (and the pair) overlap SHARE. Overlaps are computed here from the timings
(independently of abvm's code) and rounded to 4 decimals.

harness/tests/data/report/results-demo/journal.jsonl was made with:
  make_journal.py results-demo/journal.jsonl --boots 8 --runs 3 --b-ratio 0.93 --noise 0.02 --fail-trial t0005
and results-slower/journal.jsonl (B 25 % slower, for abvm compare) with:
  make_journal.py results-slower/journal.jsonl --boots 8 --runs 3 --b-ratio 0.75 --noise 0.02 --seed 8
and results-co-scheduled/journal.jsonl with:
  make_journal.py results-co-scheduled/journal.jsonl --boots 8 --runs 3 --b-ratio 0.93 --noise 0.02 --seed 11 \
      --co-scheduled --drift 2:1:0.62 --drift 5:0:0.9
"""
import argparse
import json
import random


def share(run, partner):
    """The share of run's [start, end] during which partner was under load: [start, load_end]."""
    overlap = min(run["end"], partner["load_end"]) - max(run["start"], partner["start"])
    return max(0.0, min(1.0, overlap / (run["end"] - run["start"])))


def add_timing(lines, drifts):
    drifted = {}
    for d in drifts:
        block, run, s = d.split(":")
        drifted[(int(block), int(run))] = float(s)
    pairs = {}
    for line in lines:
        if line["outcome"] == "ok":
            pairs.setdefault((line["block"], line["run"]), {})[line["side"]] = line
    for (block, run), sides in pairs.items():
        go = 1764446400.0 + 60 * block + 5 + 3 * run

        def duration(line):
            m = line["metrics"][0]
            return 4.4e9 / m["value"] if m["unit"] == "B/s" else m["value"] / 2.3e5

        a, b = sides["A"], sides["B"]
        if (block, run) in drifted:
            d = duration(a)
            ta = {"go": go, "start": go + 0.001, "end": go + 0.001 + d}
            tb = {"go": go, "start": ta["start"] + (1 - drifted[(block, run)]) * d}
            tb["end"] = tb["start"] + d
            ta["load_end"], tb["load_end"] = ta["end"], tb["end"]
        else:
            ta = {"go": go, "start": go + 0.001, "end": go + 0.001 + duration(a)}
            tb = {"go": go, "start": go + 0.004, "end": go + 0.004 + duration(b)}
            ta["load_end"] = tb["load_end"] = max(ta["end"], tb["end"])
        sa, sb = round(share(ta, tb), 4), round(share(tb, ta), 4)
        for line, t, own, partner in ((a, ta, sa, b), (b, tb, sb, a)):
            line["timing"] = {"go": round(t["go"], 6), "start": round(t["start"], 6), "end": round(t["end"], 6),
                              "load_end": round(t["load_end"], 6), "clock_error": 0.0005}
            line["overlap"] = {"partner": partner["trial"], "run": own, "pair": min(sa, sb)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--boots", type=int, default=8)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--b-ratio", type=float, default=0.93)
    p.add_argument("--noise", type=float, default=0.02)
    p.add_argument("--fail-trial", default="")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--accelerator", default="tcg")
    p.add_argument("--co-scheduled", action="store_true")
    p.add_argument("--drift", action="append", default=[])
    a = p.parse_args()
    rng = random.Random(a.seed)
    lines = []
    order = 0
    trial = 0
    for block in range(a.boots):
        sides = ["A", "B"]
        rng.shuffle(sides)
        for side in sides:
            tid = f"t{trial:04d}"
            trial += 1
            minute = order
            base = {"journal_version": 1, "trial": tid, "side": side, "boot": tid, "block": block,
                    "host": "bench-host", "accelerator": a.accelerator,
                    "time": f"2026-11-29T{20 + minute // 3600 % 4:02d}:{minute // 60 % 60:02d}:{minute % 60:02d}Z"}
            if tid == a.fail_trial:
                lines.append(dict(base, run=0, order=order, workload="dd-write", outcome="panic", metrics=[],
                                  detail="Kernel panic - not syncing: VFS: Unable to mount root fs <vda> & more"))
                order += 1
                continue
            slow = rng.random() < 1 / 7
            for run in range(a.runs):
                level = 1.2e9 if slow else 4.4e9 * (a.b_ratio if side == "B" else 1.0)
                value = level * (1 + rng.gauss(0, a.noise))
                lines.append(dict(base, run=run, order=order, workload="dd-write", outcome="ok", detail="",
                                  metrics=[{"name": "dd-write.bandwidth", "unit": "B/s", "better": "higher",
                                            "value": round(value, 1)}]))
                order += 1
            clat = 2.3e5 * (1 / a.b_ratio if side == "B" else 1.0) * (1 + rng.gauss(0, a.noise))
            lines.append(dict(base, run=a.runs, order=order, workload="fio-seqwrite", outcome="ok", detail="",
                              metrics=[{"name": "fio-seqwrite.write.clat_mean", "unit": "ns", "better": "lower",
                                        "value": round(clat, 1)}]))
            order += 1
    if a.co_scheduled:
        add_timing(lines, a.drift)
    with open(a.out, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
