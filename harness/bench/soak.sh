#!/usr/bin/env bash
# Chaos soak of abvm (issues 6 and 22; not in CI: minutes of real guests under TCG).
#
#   harness/bench/soak.sh [TRIALS] [ABVM] [SEED]      defaults: 200, build/abvm, 1
#
# Runs the real abvm with real guests in three phases, one experiment each, TRIALS trials in all
# (SOAK_CO, SOAK_SEQ and SOAK_POOL set each phase's own count; SOAK_PHASES="co seq pool" picks
# phases):
#   co    design co-scheduled (paced blocks: both guests at once, the host's go/stop windows) on
#         one lane of two CPUs (schedule.cpu_sets = ["0-1"]: co-scheduled needs two), the embedded libvirt driver;
#   seq   design sequential-blocks, the embedded driver;
#   pool  sequential-blocks over a pool of two hosts: the embedded driver and a test libvirtd of
#         the soak's own (harness/bench/soak_libvirtd.py: its own mount namespace, qemu+tcp:// on
#         127.0.0.1; never this machine's libvirtd).
# Every results directory lies on a small ext4 image the soak loop-mounts itself (errors=remount-ro).
# While a phase runs, faults are drawn at random from SEED, one after another, from the table:
#   qemu         kill -9 on a running guest's QEMU (the session goes on);
#   abvm-kill    SIGKILL on abvm, then `abvm run --resume`;
#   sigint       SIGINT on abvm (Ctrl-C): it must exit 130; then `--resume`;
#   fs-full      the results filesystem filled up with a file: abvm must stop (exit 3, No space left
#                on device); the file removed, `--resume`;
#   fs-ro        the results filesystem turned read-only by the kernel (ext4 trigger_fs_error):
#                abvm must stop (exit 3, Read-only file system); unmounted, e2fsck, mounted, `--resume`;
#   daemon-kill  (pool) the test libvirtd SIGKILLed, restarted 1-3 s later (the session goes on);
#   daemon-stop  (pool) the test libvirtd SIGSTOPped for 20-35 s, then SIGKILLed and restarted.
# And in the guests, per trial: both sides' command lines carry abvm.fault_seed and
# abvm.fault_rate (SOAK_FAULT_RATE percent, default 12), so the agent (guests/agent/init.sh) draws
# from the seed and the trial id whether that trial panics, hangs, floods its console or forges
# records of another trial.
#
# Then harness/bench/soak_check.py reads every results directory and the fault log and prints:
# trials per phase, faults injected per kind, faults recorded as what they were, runs lost or
# duplicated, the worst overshoot of a trial past its timeout, and the QEMUs and domains left
# behind. Exits 1 when any check fails; the work directory is kept then (and with SOAK_KEEP=1).
set -euo pipefail

trials=${1:-200}
abvm=${2:-build/abvm}
seed=${3:-1}
py=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
rate=${SOAK_FAULT_RATE:-12}
phases=${SOAK_PHASES:-co seq pool}
n_co=${SOAK_CO:-$(( (trials * 2 / 5) / 4 * 4 ))}
n_pool=${SOAK_POOL:-$(( (trials / 4) / 2 * 2 ))}
n_seq=${SOAK_SEQ:-$(( trials - n_co - n_pool ))}
(( trials >= 4 )) || { echo "soak: TRIALS must be >= 4" >&2; exit 2; }
for n in "$n_co" "$n_seq" "$n_pool"; do
  (( n >= 4 && n % 2 == 0 )) || { echo "soak: each phase needs an even count >= 4 (co $n_co, seq $n_seq, pool $n_pool)" >&2; exit 2; }
done
abvm=$(realpath "$abvm")
[[ -x $abvm ]] || { echo "soak: no abvm binary at $abvm (build it, or give its path)" >&2; exit 2; }
# A soak that cannot run fails and says why, in CI or not: it never skips.
missing=()
(( EUID == 0 )) || missing+=("root (the embedded libvirt driver runs QEMU as root; loop mounts)")
command -v qemu-system-x86_64 >/dev/null || missing+=("qemu-system-x86_64 (harness/setup.sh installs it)")
[[ -x $py ]] || missing+=("$py (harness/setup.sh installs python3)")
[[ -x /usr/sbin/libvirtd ]] || missing+=("/usr/sbin/libvirtd (harness/setup.sh: libvirt-daemon)")
for p in mkfs.ext4 e2fsck unshare nsenter findmnt virsh; do command -v $p >/dev/null || missing+=("$p"); done
if (( ${#missing[@]} )); then
  { echo "soak: cannot run here, this machine lacks:"; printf '  %s\n' "${missing[@]}"; } >&2
  exit 1
fi

work=$(mktemp -d /tmp/abvm-soak-XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/tmp" "$work/logs"
echo "soak: phases '$phases' (co $n_co, seq $n_seq, pool $n_pool trials), seed $seed, guest fault rate $rate %, work directory $work"
RANDOM=$seed
faults=$work/faults.tsv   # phase session kind rc extra...
: >"$faults"
: >"$work/abvm-pids"
mgr=""
port=""
# QEMUs of libvirt's capability probes in the embedded root (a probe's QEMU runs on when the abvm
# that started it is killed during the probe): those there before the soak are not its own.
probes() { pgrep -f "qmp unix:$HOME/.cache/abvm/libvirt/lib/qemu/qmp-" | sort || true; }
probes >"$work/probes-before.txt"

cleanup() {
  set +e
  [[ -n $mgr ]] && kill -TERM "$mgr" 2>/dev/null && wait "$mgr" 2>/dev/null
  mountpoint -q "$mnt" && umount "$mnt"
}
trap cleanup EXIT

# ---- the test libvirtd (made before the results filesystem is mounted: its namespace must not
# hold that mount, or a read-only fault could not be repaired) -----------------------------------
if [[ " $phases " == *" pool "* ]]; then
  port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cache=$work/daemon-cache
  # QEMU's capabilities, probed once per cache (~45 s): start from the tests' cache when there is one.
  [[ -d /var/tmp/abvm-test-libvirtd-cache/0/qemu ]] && cp -a /var/tmp/abvm-test-libvirtd-cache/0 "$cache"
  "$py" "$here/soak_libvirtd.py" "$work/daemon" "$cache" "$port" >>"$work/logs/daemon-manager.log" 2>&1 &
  mgr=$!
  for _ in $(seq 1 1200); do [[ -s $work/daemon/daemon.pid ]] && break; sleep 0.1; done
  [[ -s $work/daemon/daemon.pid ]] || { echo "soak: the test libvirtd did not start (see $work/daemon/daemon.log)" >&2; exit 1; }
fi
daemon_uri="qemu+tcp://127.0.0.1:$port/system"
daemon_pid() { cat "$work/daemon/daemon.pid" 2>/dev/null || true; }
restart_daemon() {
  rm -f "$work/daemon/daemon.pid"
  kill -USR1 "$mgr"
  for _ in $(seq 1 1200); do [[ -s $work/daemon/daemon.pid ]] && return 0; sleep 0.1; done
  echo "soak: the test libvirtd did not come back" >&2
  return 1
}

# ---- the results filesystem --------------------------------------------------------------------
image=$work/results.ext4
truncate -s "${SOAK_RESULTS_SIZE:-600M}" "$image"
mkfs.ext4 -q -m 0 "$image"
mount_results() { mount -o loop,errors=remount-ro "$image" "$mnt"; }
mount_results
loopdev() { basename "$(findmnt -n -o SOURCE "$mnt")"; }

experiment() {  # phase design boots_per_side extra-schedule-lines
  cat <<EOF
name = "soak-$1"
description = "abvm chaos soak: short trials with random host and guest faults"

[guest]
kernel = "debian-cloud"
accelerator = "tcg"

[disk]
size = "16M"
preallocate = true

[sides.A]
label = "direct"
cmdline_append = "abvm.fault_seed=$seed-$1 abvm.fault_rate=$rate"

[sides.B]
label = "dma-api"
device.iommu_platform = true
cmdline_append = "abvm.fault_seed=$seed-$1 abvm.fault_rate=$rate"

[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 2
oflag = ["direct"]
repetitions = 1

[schedule]
design = "$2"
boots_per_side = $3
seed = $seed
infra_retries = 1
boot_timeout = "40s"
run_timeout = "15s"
console_limit = "1M"
$4
EOF
}

results_dir() { find "$mnt/$1" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n1 || true; }
# "<pid> <domain>" of every QEMU running a guest of abvm process $1 (the embedded driver's and
# the test daemon's alike: the domain name carries abvm's pid)
qemus_of() {
  local p cmd name
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    if [[ $cmd == *qemu-system*"guest=abvm-$1."* ]]; then
      name=${cmd#*guest=}
      echo "${p#/proc/} ${name%%,*}"
    fi
  done
}
alive() { kill -0 "$1" 2>/dev/null; }
# Waits up to $2 s for process $1 to end; sets rc (its exit status; 999 when it had to be killed).
wait_end() {
  local i
  for (( i = 0; i < $2 * 10; i++ )); do alive "$1" || break; sleep 0.1; done
  if alive "$1"; then kill -9 "$1" 2>/dev/null; set +e; wait "$1"; set -e; rc=999; return; fi
  set +e; wait "$1"; rc=$?; set -e
}
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
lsize() { stat -c %s "$(results_dir "$1")/trials.jsonl" 2>/dev/null || echo 0; }  # the ledger's size now
note() { printf '%s\n' "$*" >>"$faults"; echo "soak: $(date +%T) $*"; }

# One phase: sessions of abvm (the first `run`, then `run --resume`), each ended by a fault or by
# the run's end; faults drawn one after another while a session runs.
run_phase() {  # phase kinds...
  local phase=$1; shift
  local kinds=("$@") session=0 pid d args log fault delay q qs victim trial extra busy unexpected=0
  while :; do
    d=$(results_dir "$phase")
    if [[ -n $d ]]; then args=(run --resume "$d"); else args=(run --results-dir "$mnt/$phase" "$work/$phase.toml"); fi
    session=$((session + 1))
    log=$work/logs/$phase-$session.log
    TMPDIR=$work/tmp "$abvm" "${args[@]}" >"$log" 2>&1 &
    pid=$!
    echo "$phase $session $pid" >>"$work/abvm-pids"
    while :; do
      delay=$(( ${SOAK_GAP_MIN:-8} * 1000 + (RANDOM * 32768 + RANDOM) % (${SOAK_GAP_SPAN:-40} * 1000) ))
      while (( delay > 0 )) && alive "$pid"; do sleep 0.2; delay=$((delay - 200)); done
      if ! alive "$pid"; then
        set +e; wait "$pid"; rc=$?; set -e
        note "$phase $session end $rc $(lsize "$phase")"
        if (( rc == 0 || rc == 1 || rc == 4 )); then return 0; fi
        # abvm stopped by itself with no fault that calls for it: recorded, resumed (at most 5 times)
        unexpected=$((unexpected + 1))
        (( unexpected <= 5 )) || { echo "soak: $phase: abvm keeps stopping by itself (see $log)" >&2; return 1; }
        break
      fi
      fault=${kinds[$((RANDOM % ${#kinds[@]}))]}
      case $fault in
        qemu)
          mapfile -t qs < <(qemus_of "$pid")
          (( ${#qs[@]} )) || continue
          q=${qs[$((RANDOM % ${#qs[@]}))]}
          victim=${q%% *}
          kill -9 "$victim" 2>/dev/null || continue
          trial=$(cut -d- -f3 <<<"${q#* }")
          note "$phase $session qemu - $trial ${q#* } $(lsize "$phase")"
          ;;
        daemon-kill|daemon-stop)
          busy=idle
          while read -r q; do
            [[ -n $q ]] && grep -q /var/lib/abvm/pool "/proc/${q%% *}/cmdline" 2>/dev/null && busy=busy:$(cut -d- -f3 <<<"${q#* }")
          done < <(qemus_of "$pid")
          if [[ $fault == daemon-stop ]]; then
            kill -STOP "$(daemon_pid)"
            sleep $((20 + RANDOM % 16))
          fi
          kill -9 "$(daemon_pid)"
          sleep $((1 + RANDOM % 3))
          restart_daemon
          note "$phase $session $fault - $(lsize "$phase") $busy $(wc -c <"$log")"
          ;;
        abvm-kill)
          kill -9 "$pid"; set +e; wait "$pid"; set -e
          note "$phase $session abvm-kill - $(lsize "$phase")"
          break
          ;;
        sigint)
          kill -INT "$pid"
          wait_end "$pid" 90
          note "$phase $session sigint $rc $(lsize "$phase")"
          break
          ;;
        fs-full)
          # at once (fallocate), then the last blocks
          fallocate -l $(( $(stat -f -c '%a * %S' "$mnt") )) "$mnt/fill" 2>/dev/null || true
          dd if=/dev/zero of="$mnt/fill" bs=1M oflag=append conv=notrunc >/dev/null 2>&1 || true
          dd if=/dev/zero of="$mnt/fill2" bs=4k >/dev/null 2>&1 || true
          wait_end "$pid" 240
          rm -f "$mnt/fill" "$mnt/fill2"
          note "$phase $session fs-full $rc $(lsize "$phase")"
          break
          ;;
        fs-ro)
          echo "abvm soak" >"/sys/fs/ext4/$(loopdev)/trigger_fs_error"
          wait_end "$pid" 240
          extra=ok
          for _ in $(seq 1 100); do umount "$mnt" 2>/dev/null && break; sleep 0.3; done
          if mountpoint -q "$mnt"; then extra=still-mounted; else
            e2fsck -fy "$image" >>"$work/logs/e2fsck.log" 2>&1 || (( $? <= 1 )) || extra=fsck-failed
            mount_results
          fi
          note "$phase $session fs-ro $rc $(lsize "$phase") $extra"
          break
          ;;
      esac
    done
  done
}

status=0
for phase in $phases; do
  case $phase in
    co)
      experiment co co-scheduled $((n_co / 2)) 'cpu_sets = ["0-1"]' >"$work/co.toml"
      run_phase co qemu qemu qemu abvm-kill abvm-kill sigint fs-full fs-ro || status=1 ;;
    seq)
      experiment seq sequential-blocks $((n_seq / 2)) "" >"$work/seq.toml"
      run_phase seq qemu qemu qemu abvm-kill abvm-kill sigint fs-full fs-ro || status=1 ;;
    pool)
      experiment pool sequential-blocks $((n_pool / 2)) "" >"$work/pool.toml"
      printf '\n[hosts]\nuris = ["qemu:///embed?root=%s", "%s"]\n' "$HOME/.cache/abvm/libvirt" "$daemon_uri" >>"$work/pool.toml"
      run_phase pool qemu qemu abvm-kill sigint fs-full fs-ro daemon-kill daemon-kill daemon-stop || status=1 ;;
    *) echo "soak: no phase '$phase' (co, seq, pool)" >&2; exit 2 ;;
  esac
done

# ---- leftovers: QEMUs of any abvm process of the soak, domains on the test daemon -------------
leftovers() {
  local phase session pid
  while read -r phase session pid; do qemus_of "$pid"; done <"$work/abvm-pids"
  probes | comm -13 "$work/probes-before.txt" - | sed 's/^/capability probe QEMU (embedded root) pid /'
  if [[ -n $mgr ]]; then
    virsh -c "$daemon_uri" list --all --name 2>/dev/null | sed -n 's/^\(abvm-.*\)/domain \1 on the test daemon/p'
  fi
}
leftovers >"$work/leftovers-at-end.txt"
# A SIGKILLed abvm's guests on a remote host (the test daemon) are not its to clean up at the next
# start (the pid in their name says nothing there): they power off by themselves when their hold
# time passes with no word from the host (60 s); a guest that hangs never does. Seen again later.
if [[ -s $work/leftovers-at-end.txt ]]; then
  sleep 75
  leftovers >"$work/leftovers-after-75s.txt"
fi
ls /root/.cache/abvm/libvirt/run/qemu 2>/dev/null >"$work/embedded-state.txt" || true

set +e
"$py" "$here/soak_check.py" "$work" "$seed" "$rate" $phases
check=$?
set -e
(( check == 0 )) || status=1
if (( status == 0 )) && [[ -z ${SOAK_KEEP:-} ]]; then
  cleanup
  trap - EXIT
  rm -rf "$work"
else
  echo "soak: kept $work for inspection"
fi
exit $status
