#!/usr/bin/python3
"""The checks of the chaos soak (harness/bench/soak.sh): reads its work directory and prints the
figures. Exits 1 when a run is lost or duplicated, a fault is not recorded as what it was, a trial
outlived its timeout by more than SLACK seconds, or a guest was left behind.

    soak_check.py WORK SEED RATE PHASE...
"""
import collections
import glob
import hashlib
import json
import os
import re
import sys

SLACK = 5.0                      # seconds a trial may outlive its timeout
TIMEOUT = 40 + 15 * 1            # boot_timeout + run_timeout per run (one run per trial)
KINDS = ["panic", "hang", "flood", "forge"]  # the agent's default abvm.fault_kinds
EXPECTED = {"panic": "panic", "hang": "timeout", "flood": "invalid-output", "forge": "invalid-output"}
DESIGN = {"co": "co-scheduled", "seq": "sequential-blocks", "pool": "sequential-blocks"}


def drawn(seed, phase, rate, trial):
    """The agent's draw (guests/agent/init.sh draw_fault) for this trial, or None."""
    n = int(hashlib.md5(f"{seed}-{phase}:{trial}".encode()).hexdigest()[:8], 16)
    return KINDS[(n // 100) % len(KINDS)] if n % 100 < rate else None


def jsonl(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def ledger_offsets(path):
    """trial -> byte offset of its ledger line."""
    out, pos = {}, 0
    if os.path.exists(path):
        for line in open(path, "rb"):
            out.setdefault(json.loads(line)["trial"], pos)
            pos += len(line)
    return out


def main():
    work, seed, rate, phases = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    faults = [line.split() for line in open(os.path.join(work, "faults.tsv")) if line.strip()]
    problems = []
    injected = collections.Counter()
    recorded = collections.Counter()
    notes = collections.Counter()
    totals = {"trials": 0, "lost": 0, "duplicated": 0}
    worst = (-1e9, "")
    per_phase = []
    for phase in phases:
        found = [d for d in glob.glob(os.path.join(work, "mnt", phase, "*")) if os.path.isdir(d)]
        if len(found) != 1:
            problems.append(f"{phase}: {len(found)} results directories")
            continue
        d = found[0]
        plan = json.load(open(os.path.join(d, "plan.json")))
        trials = {t["id"]: t for t in plan["trials"]}
        blocks = collections.defaultdict(list)
        for t in plan["trials"]:
            blocks[t["block"]].append(t["id"])
        partner = {t: [o for o in blocks[trials[t]["block"]] if o != t] for t in trials}
        # Runs: every planned run in the journal exactly once; every trial in the ledger once.
        seen = collections.Counter((j["trial"], j["workload"], j["run"]) for j in jsonl(os.path.join(d, "journal.jsonl")))
        planned = {(t, "dd-write", 0) for t in trials}
        lost = len(planned - set(seen))
        dup = sum(n - 1 for n in seen.values() if n > 1) + len(set(seen) - planned)
        ledger = collections.Counter(j["trial"] for j in jsonl(os.path.join(d, "trials.jsonl")))
        lost += len(set(trials) - set(ledger))
        dup += sum(n - 1 for n in ledger.values() if n > 1)
        totals["trials"] += len(trials)
        totals["lost"] += lost
        totals["duplicated"] += dup
        offsets = ledger_offsets(os.path.join(d, "trials.jsonl"))
        finished = os.path.exists(os.path.join(d, "analysis.json"))
        if not finished:
            problems.append(f"{phase}: no analysis.json (the run did not finish)")
        results, consoles = {}, {}
        for t in trials:
            p = os.path.join(d, "trials", t, "result.json")
            results[t] = json.load(open(p)) if os.path.exists(p) else None
            text = ""
            for c in sorted(glob.glob(os.path.join(d, "trials", t, "console*.log"))):
                text += open(c, errors="replace").read()
            consoles[t] = set(re.findall(r"abvm-fault: (\S+) trial " + re.escape(t) + r" ", text))

        # Host faults of this phase, by session.
        pf = [f for f in faults if f[0] == phase]
        session_end = {}
        for f in pf:
            if f[2] in ("end", "abvm-kill", "sigint", "fs-full", "fs-ro"):
                session_end[f[1]] = int(f[4])
        host_hit = collections.defaultdict(list)  # trial -> fault kinds that hit it
        for f in pf:
            kind = f[2]
            if kind == "end":
                if f[3] not in ("0", "1", "4"):
                    problems.append(f"{phase} session {f[1]}: abvm ended by itself with exit {f[3]}")
                continue
            injected[kind] += 1
            if kind == "qemu":
                trial, at = f[4], int(f[6])
                host_hit[trial].append("qemu")
                r = results.get(trial)
                if r is None:
                    problems.append(f"{phase}: QEMU of {trial} killed, no result.json")
                    continue
                texts = " ".join(r.get("retried", []) + [r.get("detail", "")])
                same_session = at <= offsets.get(trial, -1) < session_end.get(f[1], 1 << 62)
                # Its own domain named as the reason of a retried attempt, or an infra-error.
                if f[5] in texts and "ended unexpectedly" in texts or r["outcome"] == "infra-error":
                    recorded[kind] += 1
                    notes["qemu: retried or infra-error"] += 1
                elif not same_session:
                    recorded[kind] += 1
                    notes["qemu: its session ended before the trial did; ran again whole later"] += 1
                elif r["outcome"] in ("ok", "partner-failed", EXPECTED.get(drawn(seed, phase, rate, trial))):
                    recorded[kind] += 1
                    notes["qemu: killed after the trial's end record (nothing lost)"] += 1
                else:
                    problems.append(f"{phase}: QEMU kill of {trial} not recorded: {r['outcome']} {texts[:200]}")
            elif kind in ("daemon-kill", "daemon-stop"):
                busy = f[5]
                log = open(os.path.join(work, "logs", f"{phase}-{f[1]}.log"), errors="replace").read()
                said = any(w in log for w in ("leaves the pool", "moves to another host", "was lost", "connection to"))
                if busy.startswith("busy:"):
                    trial = busy.split(":", 1)[1]
                    host_hit[trial].append(kind)
                    r = results.get(trial)
                    if r and (r["attempts"] > 1 or r["outcome"] == "infra-error" or said):
                        recorded[kind] += 1
                    else:
                        problems.append(f"{phase} session {f[1]}: {kind} while {trial} ran on the daemon, not recorded: "
                                        f"{r and r['outcome']}")
                else:
                    recorded[kind] += 1
                    notes[f"{kind}: no guest on the daemon at that moment" + (" (abvm said so)" if said else "")] += 1
            elif kind == "abvm-kill":
                recorded[kind] += 1  # checked by the run counts: nothing lost or duplicated
            else:
                rc = f[3]
                log = open(os.path.join(work, "logs", f"{phase}-{f[1]}.log"), errors="replace").read()
                want = {"sigint": ("130", "--resume"), "fs-full": ("3", "No space left on device"),
                        "fs-ro": ("3", "Read-only file system")}[kind]
                if rc == want[0] and want[1] in log and (kind == "sigint" or "--resume" in log):
                    recorded[kind] += 1
                elif rc in ("0", "1", "4") and kind != "sigint":
                    recorded[kind] += 1
                    notes[f"{kind}: the run ended before the fault reached it"] += 1
                else:
                    tail = " | ".join(log.strip().splitlines()[-3:])
                    problems.append(f"{phase} session {f[1]}: {kind}: exit {rc}, expected {want[0]} with "
                                    f"'{want[1]}': {tail[:400]}")
                if kind == "fs-ro" and f[5] != "ok":
                    problems.append(f"{phase} session {f[1]}: fs-ro repair: {f[5]}")

        # Guest faults, drawn per trial; every trial's outcome explained.
        outcomes = collections.Counter()
        for t in trials:
            r = results[t]
            if r is None:
                continue
            out = r["outcome"]
            outcomes[out] += 1
            k = drawn(seed, phase, rate, t)
            if k and k not in consoles[t]:
                problems.append(f"{phase} {t}: drew {k} but its console does not say so ({consoles[t]})")
            if not k and consoles[t] - {"none"}:
                problems.append(f"{phase} {t}: console says {consoles[t]}, the draw says none")
            paced = DESIGN[phase] == "co-scheduled"
            partner_fault = any(drawn(seed, phase, rate, o) or host_hit.get(o) for o in partner[t])
            if k:
                injected["guest-" + k] += 1
                if out == EXPECTED[k]:
                    recorded["guest-" + k] += 1
                elif paced and out == "partner-failed" and partner_fault:
                    recorded["guest-" + k] += 1
                    notes[f"guest-{k}: its partner failed first (both of the block faulty)"] += 1
                elif out == "infra-error" and host_hit.get(t):
                    recorded["guest-" + k] += 1
                    notes[f"guest-{k}: a host fault hit it on every attempt (infra-error)"] += 1
                else:
                    problems.append(f"{phase} {t}: drew {k}, recorded {out}: {r.get('detail', '')[:300]}")
            else:
                if out == "ok":
                    pass
                elif paced and out == "partner-failed" and partner_fault:
                    pass
                elif out == "infra-error" and host_hit.get(t):
                    pass
                else:
                    problems.append(f"{phase} {t}: no fault drawn, yet {out}: {r.get('detail', '')[:300]}")
            over = r["seconds"] - TIMEOUT
            if over > worst[0]:
                worst = (over, f"{phase} {t} ({out}, {r['seconds']:.1f} s)")
            if over > SLACK:
                problems.append(f"{phase} {t}: {r['seconds']:.1f} s, {over:.1f} s past its {TIMEOUT} s timeout")
        sessions = len({f[1] for f in pf})
        per_phase.append(f"{phase} ({DESIGN[phase]}{', two lanes' if phase == 'co' else ''}"
                         f"{', pool: embedded + test libvirtd' if phase == 'pool' else ''}): {len(trials)} trials, "
                         f"{sum(outcomes.values())} recorded ({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))}), "
                         f"{sessions} abvm sessions, runs lost {lost}, duplicated {dup}")
        if lost or dup:
            problems.append(f"{phase}: {lost} runs lost, {dup} duplicated")

    # Leftovers.
    left = []
    for name in ("leftovers-at-end.txt", "leftovers-after-75s.txt"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            left.append((name, [line.strip() for line in open(p) if line.strip()]))
    pids = {line.split()[2] for line in open(os.path.join(work, "abvm-pids")) if line.strip()}
    state = [n for n in open(os.path.join(work, "embedded-state.txt")).read().split()
             if n.startswith("abvm-") and n.split("-")[1].split(".")[0] in pids]
    final_left = left[-1][1] if left else []

    print("soak figures")
    for line in per_phase:
        print("  " + line)
    print(f"  trials: {totals['trials']}; runs lost: {totals['lost']}, duplicated: {totals['duplicated']}")
    print(f"  faults injected: {sum(injected.values())} ("
          + ", ".join(f"{k} {v}" for k, v in sorted(injected.items())) + ")")
    print(f"  faults recorded as what they were: {sum(recorded.values())} ("
          + ", ".join(f"{k} {v}" for k, v in sorted(recorded.items())) + ")")
    for k, v in sorted(notes.items()):
        print(f"    {k}: {v}")
    print(f"  worst overshoot past the {TIMEOUT} s trial timeout: {worst[0]:.1f} s ({worst[1]})")
    for name, items in left:
        print(f"  left behind ({name}): {len(items)}" + "".join(f"\n    {i}" for i in items))
    print(f"  embedded driver state of the soak's abvm processes left: {len(state)}")
    if final_left or state:
        problems.append(f"left behind: {final_left + state}")
    for p in problems:
        print("  PROBLEM: " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
