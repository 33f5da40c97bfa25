#!/usr/bin/python3
"""Synthesises an abvm run journal (samples/journal.hpp, journal_version 1) for report fixtures
and the report-time benchmark. Deterministic for a given seed.

usage: make_journal.py OUT_JOURNAL [--boots N] [--runs R] [--b-ratio X] [--noise S] [--fail-trial ID]
                       [--seed K] [--accelerator tcg|kvm]

Per boot: R dd runs ("dd-write.bandwidth", B/s, about 4.4 GB/s on A, X times that on B, relative
noise S, one boot in seven on a slow host mode at 1.2 GB/s) and one fio run
("fio-seqwrite.write.clat_mean", ns, lower is better). A and B boots alternate in blocks of one
boot per side, the side going first chosen at random. --fail-trial makes that trial a kernel panic
(one journal line with outcome "panic" and no metrics).

harness/tests/data/report/results-demo/journal.jsonl was made with:
  make_journal.py results-demo/journal.jsonl --boots 8 --runs 3 --b-ratio 0.93 --noise 0.02 --fail-trial t0005
and results-slower/journal.jsonl (B 25 % slower, for abvm compare) with:
  make_journal.py results-slower/journal.jsonl --boots 8 --runs 3 --b-ratio 0.75 --noise 0.02 --seed 8
"""
import argparse
import json
import random


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
    with open(a.out, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
