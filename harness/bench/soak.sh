#!/usr/bin/env bash
# Soak test of abvm's host-fault handling (issue 6; not in CI: ~5-8 s per trial under TCG).
#
#   harness/bench/soak.sh [TRIALS] [ABVM] [SEED]      defaults: 200, build/abvm, 1
#
# Runs one experiment of TRIALS short trials (one tiny dd each) with the real abvm, the embedded
# libvirt driver and real guests, and injects seeded random faults while it runs:
#   qemu  kill -9 on the running guest's QEMU: must be recorded in that trial's result.json
#         (an infra error, retried once by schedule.infra_retries, or the trial's outcome);
#   abvm  SIGKILL on abvm itself, then `abvm run --resume`: must lose and duplicate nothing.
# Guest-side faults (panic, hang, forged records) are per side, set on the kernel command line
# (see run_guest_faults_e2e_test.cpp), so they cannot be injected at random into one running
# experiment; they are proved by that test instead.
#
# Prints: trials, faults injected, faults recorded correctly, runs lost (must be 0); exits 1 when
# a run is lost or duplicated, a fault went unrecorded, or abvm failed for a reason of its own.
set -euo pipefail

trials=${1:-200}
abvm=${2:-build/abvm}
seed=${3:-1}
py=/usr/bin/python3
(( trials >= 4 && trials % 2 == 0 )) || { echo "soak: TRIALS must be even and >= 4" >&2; exit 2; }
abvm=$(realpath "$abvm")
[[ -x $abvm ]] || { echo "soak: no abvm binary at $abvm (build it, or give its path)" >&2; exit 2; }
# A soak that cannot run fails and says why, in CI or not: it never skips. Its guests are real
# ones on the embedded libvirt driver, which runs QEMU as root.
missing=()
(( EUID == 0 )) || missing+=("root (the embedded libvirt driver runs QEMU as root)")
command -v qemu-system-x86_64 >/dev/null || missing+=("qemu-system-x86_64 (harness/setup.sh installs it)")
[[ -x $py ]] || missing+=("$py (harness/setup.sh installs python3)")
if (( ${#missing[@]} )); then
  { echo "soak: cannot run here, this machine lacks:"; printf '  %s\n' "${missing[@]}"; } >&2
  exit 1
fi

work=$(mktemp -d /tmp/abvm-soak-XXXXXX)
echo "soak: $trials trials, seed $seed, work directory $work"
RANDOM=$seed

cat >"$work/soak.toml" <<EOF
name = "soak"
description = "abvm soak: short trials with random host faults"

[guest]
kernel = "debian-cloud"
accelerator = "tcg"

[disk]
size = "16M"

[sides.A]
label = "direct"

[sides.B]
label = "dma-api"
device.iommu_platform = true

[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 2
oflag = ["direct"]
repetitions = 1

[schedule]
boots_per_side = $((trials / 2))
seed = $seed
infra_retries = 1
boot_timeout = "60s"
run_timeout = "60s"
EOF

results_dir() { find "$work/results" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n1 || true; }
# pid of a QEMU running a guest of abvm process $1, and its domain name
qemu_of() {
  local p
  for p in /proc/[0-9]*; do
    local cmd
    cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
    if [[ $cmd == *qemu-system*"guest=abvm-$1-"* ]]; then
      local name=${cmd#*guest=}
      echo "${p#/proc/} ${name%%,*}"
      return 0
    fi
  done
  return 1
}

injected=0 qemu_kills=0 abvm_kills=0 sessions=0
: >"$work/qemu-kills.txt"   # "<trial id> <domain>" per QEMU killed
final_rc=""
while :; do
  d=$(results_dir)
  if [[ -n $d ]]; then args=(run --resume "$d"); else args=(run --results-dir "$work/results" "$work/soak.toml"); fi
  sessions=$((sessions + 1))
  "$abvm" "${args[@]}" >>"$work/abvm.log" 2>&1 &
  pid=$!
  # One fault per session, or none for about one session in six (which then runs to the end).
  fault=$((RANDOM % 6))
  delay_ms=$((500 + RANDOM % 9000))
  if (( fault == 0 )); then
    set +e; wait "$pid"; final_rc=$?; set -e
    break
  fi
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if ! kill -0 "$pid" 2>/dev/null; then
    set +e; wait "$pid"; final_rc=$?; set -e
    break
  fi
  if (( fault <= 3 )); then
    # kill -9 the running QEMU (wait for the next boot if between two)
    q=""
    for _ in $(seq 1 100); do q=$(qemu_of "$pid") && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if [[ -n $q ]] && kill -9 "${q%% *}" 2>/dev/null; then
      domain=${q#* }
      trial=$(cut -d- -f3 <<<"$domain")
      echo "$trial $domain" >>"$work/qemu-kills.txt"
      injected=$((injected + 1)) qemu_kills=$((qemu_kills + 1))
    fi
    # Let abvm record that trial (its retry boots), then end the session with the abvm kill too.
    if [[ -n $q ]]; then
      for _ in $(seq 1 1200); do
        grep -q "\"trial\":\"$trial\"" "$(results_dir)/trials.jsonl" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  fi
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    set +e; wait "$pid"; set -e
    injected=$((injected + 1)) abvm_kills=$((abvm_kills + 1))
  else
    set +e; wait "$pid"; final_rc=$?; set -e
    break
  fi
done

d=$(results_dir)
[[ -n $d ]] || { echo "soak: no results directory; see $work/abvm.log" >&2; exit 1; }
set +e
"$py" - "$d" "$work/qemu-kills.txt" "$trials" "$injected" "$abvm_kills" "$qemu_kills" "${final_rc:-?}" \
  "$sessions" <<'EOF'
import collections, json, os, sys
d, kills_file, trials, injected, abvm_kills, qemu_kills, rc, sessions = sys.argv[1:]
plan = json.load(open(os.path.join(d, "plan.json")))
planned = {(t["id"], "dd-write", 0) for t in plan["trials"]}
seen = collections.Counter()
for line in open(os.path.join(d, "journal.jsonl")):
    j = json.loads(line)
    seen[(j["trial"], j["workload"], j["run"])] += 1
lost = len(planned - set(seen))
duplicated = sum(n - 1 for n in seen.values() if n > 1)
outcomes = collections.Counter()
for line in open(os.path.join(d, "trials.jsonl")):
    outcomes[json.loads(line)["outcome"]] += 1

# A QEMU kill is recorded correctly when the trial's result names it (a retried attempt or the
# outcome), or when the kill came after abvm had seen the trial's end record (nothing to record:
# that attempt's console holds the end record and the trial was not retried for it).
recorded_qemu, raced, unrecorded = 0, 0, []
for line in open(kills_file):
    trial, domain = line.split()
    try:
        r = json.load(open(os.path.join(d, "trials", trial, "result.json")))
    except FileNotFoundError:
        unrecorded.append(f"{trial}: no result.json"); continue
    texts = r.get("retried", []) + [r.get("detail", "")]
    if any("ended unexpectedly" in t for t in texts):
        recorded_qemu += 1
    elif r["outcome"] == "ok" and r["attempts"] == 1:
        raced += 1
    else:
        unrecorded.append(f"{trial}: {r['outcome']} {texts}")
# An abvm kill is recorded correctly when nothing was lost or duplicated and the run finished.
finished = os.path.exists(os.path.join(d, "analysis.json"))
recorded_abvm = int(abvm_kills) if (lost == 0 and duplicated == 0 and finished) else 0
print(f"trials: {len(plan['trials'])} planned, {sum(outcomes.values())} recorded "
      f"({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))}); {sessions} abvm sessions, last exit {rc}")
print(f"faults injected: {injected} (kill -9 QEMU {qemu_kills}, SIGKILL abvm + resume {abvm_kills})")
print(f"faults recorded correctly: {recorded_qemu + raced + recorded_abvm} "
      f"(QEMU kills in result.json {recorded_qemu}, after the trial's end {raced}, abvm kills {recorded_abvm})")
print(f"runs lost: {lost} (duplicated: {duplicated})")
for u in unrecorded: print(f"  unrecorded QEMU kill: {u}")
ok = lost == 0 and duplicated == 0 and finished and not unrecorded and rc in ("0", "1", "4")
sys.exit(0 if ok else 1)
EOF
status=$?
if (( status == 0 )); then
  rm -rf "$work"
else
  # abvm's own words on why it ended (an infrastructure error says what to check).
  echo "soak: the end of $work/abvm.log:" >&2
  tail -n 15 "$work/abvm.log" >&2 || true
  echo "soak: kept $work for inspection" >&2
fi
exit $status
