#!/usr/bin/python3
"""Swaps the vCPU threads of the two QEMU guests running on this host between host CPUs 0 and 1 every
PERIOD seconds (default 0.01), so that each guest of a co-scheduled pair spends the same time on each
CPU (README, Quick start: what a pair on two CPUs does not share). Runs until killed; with any other
number of vCPU threads than two (two 1-vCPU guests, as the demo's) it swaps nothing and gives back
CPUs 0-1 to those it swapped. Root, local QEMU only. An experiment beside
`abvm run`, not part of it:  /usr/bin/python3 harness/bench/vcpu_swap.py 0.01 & build-main/abvm run CONFIG"""
import glob, os, signal, sys, time
period = float(sys.argv[1]) if len(sys.argv) > 1 else 0.01
def vcpu_tids():
    out = []
    for p in glob.glob('/proc/[0-9]*/comm'):
        try:
            if not open(p).read().startswith('qemu-system'):
                continue
        except OSError:
            continue
        pid = p.split('/')[2]
        for t in glob.glob(f'/proc/{pid}/task/*/comm'):
            try:
                if open(t).read().startswith('CPU '):
                    out.append(int(t.split('/')[4]))
            except OSError:
                pass
    return sorted(out)
flip = 0
tids, last_scan = [], 0

def release(*_):
    # Killed mid-run: leave no guest pinned to one CPU (libvirt gave every vCPU CPUs 0-1).
    for t in tids:
        try: os.sched_setaffinity(t, {0, 1})
        except OSError: pass
    sys.exit(0)
signal.signal(signal.SIGTERM, release)
signal.signal(signal.SIGINT, release)
while True:
    now = time.monotonic()
    if now - last_scan > 0.5:
        new = vcpu_tids()
        if new != tids and len(tids) == 2:
            for t in tids:
                try: os.sched_setaffinity(t, {0, 1})
                except OSError: pass
        tids, last_scan = new, now
    if len(tids) == 2:
        flip ^= 1
        try:
            os.sched_setaffinity(tids[0], {flip})
            os.sched_setaffinity(tids[1], {1 - flip})
        except OSError:
            last_scan = 0
    time.sleep(period)
