#!/bin/sh
# abvm in-guest agent: /init of the guest initramfs (busybox ash).
#
# Contract (the host side is harness/guest/job.cpp and harness/guest/records.cpp):
#  - reads the job from /abvm/job (written by abvm's per-trial cpio archive), never with eval:
#    every value is one whole line, taken literally, so a job cannot inject shell code;
#  - loads the kernel modules listed in /abvm/modules.order (absent when virtio is built in),
#    each with the <module>.<param>=<value> words of the kernel command line, as modprobe would
#    (a built-in driver gets them from the kernel itself; insmod takes only its own arguments);
#  - finds each workload's scratch disk by its virtio serial (never writes to any other disk) and
#    puts /dev/<disk> in place of "@scratch" in the arguments;
#  - runs the job's steps in order. In a paced job (pace together|turns: two guests measured as a
#    pair) each step is a window the host opens and closes for both guests (see run_paced_step):
#    the agent prepares the run, prints READY, waits for the host's "go <step>", measures, keeps the
#    same load going unmeasured (the filler, when the job says fill 1) and prints DONE, waits for
#    "stop <step>", and only then prints the run's records, so that it never prints while its
#    partner measures. "abort" (the partner failed) ends the steps early;
#  - prints framed, checksummed records on the console (format below), then waits for the host to
#    end it (the host destroys the guest once it has the END record: a guest that powers off with
#    its console open can deadlock libvirt 9.0), and powers off by itself only when no word comes
#    within the job's hold time (a dead abvm never leaves a guest running).
#
# Record line:  ABVM2:<nonce>:<seq>:<type>:<payload>:<md5>   (MARK, below)
#   md5 = md5sum of "<nonce>:<seq>:<type>:<payload>" (lowercase hex). seq counts from 0.
#   Free text (kernel release, cmdline, tool output, dmesg) is base64 so any byte survives
#   and every record stays within [A-Za-z0-9+/=,._:-]; fields inside a payload are ','-separated.
#   Types: BEGIN trial_b64,uptime | UNAME b64 | KVERSION b64 (uname -v) | CMDLINE b64
#          FEATURES serial,bits|none (one per scratch disk the job names)
#          NEXT workload,index,warmup (an unpaced run's preparation begins: the host's cost edge)
#          RUN workload,index,warmup,t_start | OUT b64chunk | RUNEND workload,index,status,t_end
#          paced steps: READY step,t (waiting for "go <step>") | DONE step (measured; waiting for
#          "stop <step>"; made before READY, so its time comes later, as RUNEND's t_done)
#          RUN workload,index,warmup,t_start,step,t_ready,t_go
#          RUNEND workload,index,status,t_end,t_fill,t_stop,t_load_end,fills,t_done (after the window)
#          CPU workload,index,busy,all (after RUNEND: the guest's /proc/stat CPU ticks over the run,
#              USER_HZ = 10 ms each, busy = user+nice+system+irq+softirq, all adds idle+iowait+steal)
#          MODPARAM b64("<module>.<param>=<value>") | DMESG b64 | ERROR b64 | END record_count
#   Times (t_*) are the guest's CLOCK_MONOTONIC in seconds (clock_now). The host maps them to its own
#   clock from when live records (BEGIN, READY, DONE with RUNEND's t_done, unpaced RUN and RUNEND)
#   reached it and when it typed go and stop (harness/run/designs/windows.hpp).
#
# Test-only faults (harness/tests/run_guest_faults_e2e_test.cpp): the kernel command-line word
# abvm.test_fault=<fault> makes the agent misbehave on purpose, so that tests can prove what abvm
# records for a guest that lies. No experiment key sets it: only a command line written by hand with
# this exact word does, and the value is one of:
#   garbage     binary noise on the console before the runs (tolerated: it holds no record marker),
#               then a copy of a real record with a wrong checksum (the records cannot be trusted)
#   forge       before END, records of another trial (foreign nonce) carrying a fake run
#   truncate    stops in the middle of the first run's output record and powers off (no END)
#   nopoweroff  prints every record, then never powers off (abvm must end the trial at END)
#   flood       before the runs, one endless line of nested record markers ("ABVM2:<nonce>:" over and
#               over): abvm must stop the guest at schedule.console_limit and keep its head and tail
#   foreign-build  reports another kernel build (uname -v) than the one booted: abvm must record the
#               trial as a mismatch of its side and say so with the verdict
#   never-ready a paced guest that hangs before its first READY (its partner must not wait forever)
#   hang-window a paced guest that hangs in its first measured run, after the go
#   deaf        a paced guest that never hears the go of its first step (a go lost on the way)
#   panic       the kernel crashes (sysrq c) at the start of the first measured run (after the go
#               when paced): abvm must record a panic
#   hang        the agent hangs at the start of the first measured run (after the go when paced):
#               abvm must end the trial at its timeout
# Drawn per trial (the soak, harness/bench/soak.sh): abvm.fault_seed=<word> with
# abvm.fault_rate=<percent> (default 10) and abvm.fault_kinds=<kind>,<kind>... (default
# panic,hang,flood,forge) draws one fault per trial, the same for the same seed and trial id: n is
# the first 8 hex digits of md5("<seed>:<trial>") as a number; the trial gets a fault when
# n % 100 < rate, and then kind number (n / 100) % <number of kinds>. The agent says what it drew on
# the console ("abvm-fault: <kind> trial <trial> seed <seed>", no record) before its first record.
# abvm.test_fault wins over a draw. Without abvm.fault_seed nothing is drawn.
#
# Host-side test modes (not used in a guest): ABVM_AGENT_MODE=parse prints each parsed workload
# as NUL-separated fields; ABVM_AGENT_MODE=emit prints sample records (an unpaced and a paced run);
# ABVM_AGENT_MODE=steps runs the job's steps with the host's words read from $ABVM_CONSOLE and
# @scratch as $ABVM_DISK; ABVM_AGENT_MODE=modopts prints "<module> <option>" for each module option
# of $ABVM_CMDLINE. See the guest_* tests.

PATH=/usr/bin:/bin:/usr/sbin:/sbin
export PATH
JOB=${ABVM_JOB:-/abvm/job}
CONSOLE=${ABVM_CONSOLE:-/dev/console}  # where the host's words come from
WORK=${ABVM_WORK:-/run/abvm}
# The record format's marker and version (harness/guest/record_scanner.hpp kMarker): format 2
# added the CPU and NEXT records.
MARK=ABVM2:
NONCE=none
SEQ=0
CHUNK=600
TEST_FAULT=
FAULT_SEED=
FAULT_RATE=10
FAULT_KINDS=panic,hang,flood,forge

# A record line is at most 16384 bytes (harness/guest/records.hpp kMaxRecordLength; the parser
# refuses longer ones): a longer body is replaced by an ERROR record saying so. Sets BODY.
record_body() {  # seq type payload
  BODY="$NONCE:$1:$2:$3"
  if [ ${#BODY} -gt 16345 ]; then
    BODY="$NONCE:$1:ERROR:$(printf 'record %s of %s bytes is too long' "$2" ${#BODY} | base64 -w 0)"
  fi
}
rec() {
  record_body "$SEQ" "$1" "$2"
  sum=$(printf '%s' "$BODY" | md5sum)
  printf '%s%s:%s\n' "$MARK" "$BODY" "${sum%% *}"
  SEQ=$((SEQ + 1))
}
# One record of type $1 per line of file $2, their checksums from one md5sum: a fork costs tens of
# ms under TCG, and a run's output or the dmesg lines are dozens of records.
rec_lines() {  # its variables are rl_*: the callers' loops use n, i and p
  rl_dir=$WORK/rec$SEQ.  # a name of its own per call: no fork to clear it
  rl_n=0
  while IFS= read -r rl_p; do
    record_body $((SEQ + rl_n)) "$1" "$rl_p"
    rl_i=00000$rl_n
    printf '%s' "$BODY" > "$rl_dir${rl_i#"${rl_i%?????}"}"  # five digits: the glob sorts them in order
    rl_n=$((rl_n + 1))
  done < "$2"
  [ $rl_n = 0 ] && return 0
  md5sum "$rl_dir"* > "$WORK/rl.sums"
  while read -r rl_sum rl_f; do
    IFS= read -r BODY < "$rl_f"
    printf '%s%s:%s\n' "$MARK" "$BODY" "$rl_sum"
  done < "$WORK/rl.sums"
  SEQ=$((SEQ + rl_n))
}
b64() { printf '%s' "$1" | base64 -w 0; }
# Sets NOW to the guest's CLOCK_MONOTONIC in seconds with 6 decimals, from /proc/timer_list's
# "now at <ns> nsecs" (its third line), with builtins only: no fork in a measured window, and
# /proc/uptime's 10 ms are too coarse to tell a window's overlap. /proc/uptime when it is missing.
clock_now() {
  ns=
  { read -r _; read -r _; read -r _ _ ns _; } < /proc/timer_list 2>/dev/null
  case "$ns" in
    ''|*[!0-9]*) read -r NOW _ < /proc/uptime ;;
    *) us=00000$(( (ns / 1000) % 1000000 )); NOW=$((ns / 1000000000)).${us#"${us%??????}"} ;;
  esac
}
error() { rec ERROR "$(b64 "$1")"; }
# Sets CPU_BUSY and CPU_ALL to the guest's CPU time so far, in USER_HZ ticks (10 ms), from the first
# line of /proc/stat ("cpu user nice system idle iowait irq softirq steal ..."), with builtins only as
# clock_now reads the clock: busy is user+nice+system+irq+softirq, all adds idle, iowait and steal.
# Both stay 0 when it cannot be read (the host then records no guest CPU for the run).
cpu_ticks() {
  CPU_BUSY=0 CPU_ALL=0 c_u= c_st=0
  read -r _ c_u c_n c_s c_i c_w c_q c_sq c_st _ < /proc/stat 2>/dev/null
  case "$c_u$c_n$c_s$c_i$c_w$c_q$c_sq$c_st" in ''|*[!0-9]*) return 0 ;; esac
  CPU_BUSY=$((c_u + c_n + c_s + c_q + c_sq))
  CPU_ALL=$((CPU_BUSY + c_i + c_w + c_st))
}
# The run's CPU record, from the ticks read before it (c0_busy, c0_all) and after it (CPU_BUSY, CPU_ALL).
rec_cpu() {  # name index
  rec CPU "$1,$2,$((CPU_BUSY - c0_busy)),$((CPU_ALL - c0_all))"
}

# Parses $JOB into $WORK/<i>/{name,disk,kind,repetitions,warmup,sync,drop_caches,scheduler_none,args,
# jobfile} and $WORK/steps ("<workload> <warmup> <index>" per line, the default order when the job
# gives none). Sets NWORK, PACE, FILL, WAIT and HOLD. Returns 1 (after an ERROR record) on a
# malformed job.
parse_job() {
  NWORK=0
  PACE=free
  FILL=0
  WAIT=600
  HOLD=60
  [ -r "$JOB" ] || { error "no job file at $JOB"; return 1; }
  mkdir -p "$WORK" || return 1
  first=1
  cur=
  complete=0
  while IFS= read -r line; do
    key=${line%% *}
    val=${line#* }
    [ "$key" = "$line" ] && val=
    if [ $first = 1 ]; then
      [ "$line" = "abvm-job 4" ] || { error "not an abvm job (version 4): $line"; return 1; }
      first=0
      mkdir -p "$WORK" && : > "$WORK/steps" || return 1
      continue
    fi
    case "$key" in
      trial) TRIAL=$val ;;
      nonce) NONCE=$val ;;
      scratch) SCRATCH_SERIAL=$val ;;
      pace)
        case "$val" in free|together|turns) PACE=$val ;; *) error "job: bad pace '$val'"; return 1 ;; esac ;;
      fill|wait|hold)
        case "$val" in *[!0-9]*|'') error "job: bad $key '$val'"; return 1 ;; esac
        case "$key" in fill) FILL=$val ;; wait) WAIT=$val ;; hold) HOLD=$val ;; esac ;;
      step)
        case "$val" in
          *[!0-9\ ]*|'') error "job: bad step '$val'"; return 1 ;;
        esac
        printf '%s\n' "$val" >> "$WORK/steps"
        ;;
      workload)
        cur=$WORK/$NWORK
        NWORK=$((NWORK + 1))
        mkdir -p "$cur"
        printf '%s' "$val" > "$cur/name"
        : > "$cur/args"
        ;;
      disk|kind|repetitions|warmup|sync|drop_caches|scheduler_none)
        [ -n "$cur" ] || { error "job: '$key' outside a workload"; return 1; }
        printf '%s' "$val" > "$cur/$key"
        ;;
      arg)
        [ -n "$cur" ] || { error "job: 'arg' outside a workload"; return 1; }
        printf '%s\n' "$val" >> "$cur/args"
        ;;
      jobline)
        [ -n "$cur" ] || { error "job: 'jobline' outside a workload"; return 1; }
        printf '%s\n' "$val" >> "$cur/jobfile"
        ;;
      end) cur= ;;
      done) complete=1; break ;;
      *) error "job: unknown key '$key'"; return 1 ;;
    esac
  done < "$JOB"
  [ $complete = 1 ] || { error "job file truncated (no 'done' line)"; return 1; }
  [ -s "$WORK/steps" ] || default_steps
  return 0
}

# Each workload's warm-ups, then its measured runs, workload after workload.
default_steps() {
  i=0
  while [ $i -lt "$NWORK" ]; do
    n=0; w=$(cat "$WORK/$i/warmup"); while [ $n -lt "$w" ]; do echo "$i 1 $n"; n=$((n + 1)); done
    n=0; r=$(cat "$WORK/$i/repetitions"); while [ $n -lt "$r" ]; do echo "$i 0 $n"; n=$((n + 1)); done
    i=$((i + 1))
  done > "$WORK/steps"
}

# Finds the virtio-blk disk whose serial is $1; sets DISK (e.g. vda).
find_scratch() {
  DISK=
  tries=0
  while [ $tries -lt 200 ]; do
    for d in /sys/block/vd*; do
      [ -r "$d/serial" ] || continue
      read -r s < "$d/serial"
      if [ "$s" = "$1" ]; then DISK=${d##*/}; return 0; fi
    done
    tries=$((tries + 1))
    sleep 0.01
  done
  return 1
}

# Writes workload directory $1's command, one argument per line, to $1/argv: its args with
# @scratch and @jobfile put in and the tool named by path. Done once, before any run.
write_argv() {
  dir=$1
  DISK=$(cat "$dir/dev")
  n=0
  : > "$dir/argv"
  while IFS= read -r a; do
    while :; do
      case "$a" in
        *@scratch*) a="${a%%@scratch*}/dev/$DISK${a#*@scratch}" ;;
        *@jobfile*) a="${a%%@jobfile*}$dir/job.fio${a#*@jobfile}" ;;
        *) break ;;
      esac
    done
    # busybox-static's ash runs its own applets before searching PATH, so a bare "dd" would
    # be busybox dd (no timing line): the tools abvm ships in /usr/bin are named by path.
    if [ $n = 0 ] && [ "${a#*/}" = "$a" ] && [ -x "/usr/bin/$a" ]; then a=/usr/bin/$a; fi
    printf '%s\n' "$a" >> "$dir/argv"
    n=$((n + 1))
  done < "$dir/args"
}

# Runs workload directory $1's command ($1/argv). Output goes to $2 (stdout and stderr together);
# returns the command's status. With PIDFILE set, the command's pid is written there.
run_argv() {
  dir=$1
  out=$2
  set --
  while IFS= read -r a; do set -- "$@" "$a"; done < "$dir/argv"
  if [ -z "$PIDFILE" ]; then
    "$@" > "$out" 2>&1 < /dev/null
    return
  fi
  # The filler's run: in the background, so that its pid can be stopped (a job in the foreground of
  # a subshell cannot be signalled by its own pid).
  "$@" > "$out" 2>&1 < /dev/null &
  echo $! > "$PIDFILE"
  wait $!
}

emit_output() {
  base64 -w "$CHUNK" "$1" > "$1.b64"
  rec_lines OUT "$1.b64"
}

# The file's first line, with builtins only ("" when it is missing): no fork between two runs.
first_line() { LINE=; [ -r "$1" ] && read -r LINE < "$1"; }

prepare_run() {  # dir
  first_line "$1/sync"; [ "$LINE" = 1 ] && sync
  first_line "$1/drop_caches"; [ "$LINE" = 1 ] && echo 3 > /proc/sys/vm/drop_caches
}

# One run of an unpaced job (one guest alone, or one guest measuring both sides): its records as
# it goes.
run_one() {  # dir index warmup
  dir=$1
  first_line "$dir/name"; name=$LINE
  # The host reads this guest's statistics (the run's cost) as NEXT arrives, during the preparation:
  # read as RUN arrived, the read fell into the tool's own time (dd 40-60 ms slower in sequential
  # blocks than paced; README, "Cost").
  rec NEXT "$name,$2,$3"
  prepare_run "$dir"
  clock_now; settle_since "$NOW"
  clock_now; t0=$NOW
  rec RUN "$name,$2,$3,$t0"
  first_run_fault
  if [ "$TEST_FAULT" = truncate ]; then
    printf '%s%s:%s:OUT:dHJ1bmNhdGVk' "$MARK" "$NONCE" "$SEQ"
    sync
    poweroff -f
  fi
  cpu_ticks; c0_busy=$CPU_BUSY c0_all=$CPU_ALL
  run_argv "$dir" "$WORK/out"
  status=$?
  clock_now; t1=$NOW
  cpu_ticks
  emit_output "$WORK/out"
  rec RUNEND "$name,$2,$status,$t1"
  rec_cpu "$name" "$2"
}

# Reads console lines until one is exactly "$1" or "abort", for at most WAIT seconds in all.
# Returns 0 for "$1", 1 for "abort", 2 when no word came in time (after an ERROR record).
wait_word() {
  clock_now; since=${NOW%.*}
  while :; do
    clock_now; left=$((WAIT - ${NOW%.*} + since))
    if [ $left -le 0 ]; then
      error "no '$1' from the host within $WAIT s: the host is gone or lost track of this guest"
      return 2
    fi
    if IFS= read -r -t "$left" line < "$CONSOLE"; then
      [ "$line" = "$1" ] && return 0
      [ "$line" = abort ] && return 1
    else
      sleep 0.05  # the console closed: do not spin until the deadline
    fi
  done
}

# The faster guest's load goes on, unmeasured, until the host's stop (Duet benchmarking: its
# partner must not measure alone on the CPU): the same command again and again, output dropped.
# Nothing but the filler may take the CPU between the end of the measured run and the filler's first
# run, while the partner may still measure (issue 26: a fork costs tens of ms under TCG, and one
# there made the slower side's runs 4-5 ms longer): the filler is forked before READY and parked on
# the FIFO fill.go, which the agent holds open on fd 4 (open_filler_fifo); after the run the agent
# only writes "go" into it. A step that never gets its go releases the parked filler with "skip".
# Every parked filler reads exactly one word, so no word is left for the next step's.
# A run's tool starts SETTLE (0.3 s) after what came before it had ended, as the pause is measured:
# - unpaced, after its preparation: the kernel's work after sync and drop_caches ran into the tool
#   and made every dd run of sequential blocks 45-55 ms longer than a paced one (on ruler-3's 0.27 s
#   dd, L 53-62 ms against 7-8 ms with the pause);
# - paced, after the previous step's stop (SETTLE_FROM below; its load ended within 0.1 s of it, or
#   the pause counts from the load's end): on a throttled disk
#   the filler's and the run's last requests leave the bucket full, and a step that went sooner began
#   behind them (co-scheduled ruler-3: the faster side's dd 12-18 ms longer after a 2.4 s run than as
#   a boot's first; README, "Truth at the margin"). A paced step's own preparation settles while it
#   waits for the go.
# A read with a timeout on a FIFO nobody writes is a sleep without a fork.
SETTLE_US=300000
open_settle_fifo() {
  rm -f "$WORK/settle"
  mkfifo "$WORK/settle" && exec 7<>"$WORK/settle"
}
# Microseconds of a clock_now time ("s.uuuuuu"; /proc/uptime's "s.cc" padded) as USEC.
usec() {
  us_frac=${1#*.}000000
  us_frac=${us_frac%"${us_frac#??????}"}
  USEC=$(( ${1%.*} * 1000000 + 1$us_frac - 1000000 ))
}
# Waits until SETTLE_US have passed since the clock_now time $1.
settle_since() {
  usec "$1"; ss_from=$USEC
  clock_now; usec "$NOW"
  ss_left=$(( SETTLE_US - (USEC - ss_from) ))
  [ "$ss_left" -gt 0 ] || return 0
  [ "$ss_left" -le "$SETTLE_US" ] || ss_left=$SETTLE_US  # a clock that went back: wait it once
  ss_left=00000$((ss_left + 1000))  # read -t counts whole milliseconds: never short of the pause
  read -r -t "0.${ss_left#"${ss_left%??????}"}" -u 7 _settled || :
}
# When the next paced step's settling pause counts from; 0: no step yet. The previous step's stop,
# which both guests of a window hear at once, not each one's own load end: the faster side's filler is
# stopped mid-request and ended later than the slower side's (ruler-3: 48 and 24 ms after the stop), so
# counted from there the slower side was READY first, idled 43 ms against 21 before the go, and started
# its run later in 25 of 30 short-write pairs (median 1.7 ms). From the stop both wait about 24 ms and
# B started later in 74 of 120 (0.6 ms): a pairing with no side waiting longer. (The slower side's
# 1 ms beyond isolation on 0.27 s runs was the same either way: README, Truth at the margin.) A filler
# that took more than 0.1 s to end (killed) is waited for: the pause counts from its end, so that a
# throttled disk's bucket refills.
SETTLE_FROM=0

open_filler_fifo() {
  rm -f "$WORK/fill.go"
  mkfifo "$WORK/fill.go" && exec 4<>"$WORK/fill.go"
}
# The filler's first run is forked here too, parked on the word: on "go" it only execs the tool, so
# that no fork (tens of ms of the shared CPU under TCG) falls into the partner's last milliseconds.
# (On the short write ruler it moved the slower side's excess by -0.26 +- 0.72 ms, inside the noise:
# README, Truth at the margin.) The runs after the first fork as run_argv does.
park_filler() {  # dir
  rm -f "$WORK/fill.stop" "$WORK/fill.done" "$WORK/fill.pid" "$WORK/fill.word"
  echo 0 > "$WORK/fill.count"
  (
    pf_dir=$1
    set --
    while IFS= read -r a; do set -- "$@" "$a"; done < "$pf_dir/argv"
    (
      IFS= read -r word < "$WORK/fill.go"
      echo "$word" > "$WORK/fill.word"
      [ "$word" = go ] && exec "$@" > /dev/null 2>&1 < /dev/null
    ) &
    echo $! > "$WORK/fill.pid"
    wait $!
    first_line "$WORK/fill.word"
    if [ "$LINE" = go ]; then
      n=1
      echo $n > "$WORK/fill.count"
      while [ ! -e "$WORK/fill.stop" ]; do
        PIDFILE=$WORK/fill.pid run_argv "$pf_dir" /dev/null
        n=$((n + 1))
        echo $n > "$WORK/fill.count"
      done
    fi
    : > "$WORK/fill.done"
  ) &
  FILLER=$!
}
release_filler() { echo go >&4; }
unpark_filler() { echo skip >&4; wait "$FILLER"; }

# Kills process $1 and its children (fio's job processes) with SIGKILL, the children first: once
# their parent is gone they belong to init and cannot be told apart.
kill_tree() {
  for s in /proc/[0-9]*/stat; do
    read -r p _ _ pp _ < "$s" 2>/dev/null || continue
    [ "$pp" = "$1" ] && kill -KILL "$p" 2>/dev/null
  done
  kill -KILL "$1" 2>/dev/null
}

# Stops the filler's current run and waits until its loop has ended; sets FILLS to the runs it
# began. Each run gets one SIGTERM (a background job of a script ignores SIGINT; more signals do not
# help a tool that is already ending), and SIGKILL with its children when it has not ended 1-2 s
# later: a fio told to stop while it starts its job can wait for that job forever.
stop_filler() {
  : > "$WORK/fill.stop"
  clock_now; since=${NOW%.*}
  termed=
  while [ ! -e "$WORK/fill.done" ]; do
    first_line "$WORK/fill.pid"
    if [ -n "$LINE" ]; then
      if [ "$LINE" != "$termed" ]; then
        kill "$LINE" 2>/dev/null
        termed=$LINE
      else
        clock_now
        [ $((${NOW%.*} - since)) -ge 2 ] && kill_tree "$LINE"
      fi
    fi
    sleep 0.01
  done
  wait "$FILLER"
  # The loop counts every run once it has ended, the one just stopped included.
  read -r FILLS < "$WORK/fill.count"
}

# DONE's record line for step $1, made before READY (READY is the record before it): its checksum
# is a fork, and DONE is printed when the run ends, while the partner may still measure. DONE carries
# the step alone; the guest time it was printed at comes with the run's RUNEND (t_done).
make_done_line() {  # step
  record_body $((SEQ + 1)) DONE "$1"
  sum=$(printf '%s' "$BODY" | md5sum)
  DONE_LINE="$MARK$BODY:${sum%% *}"
}

# One step of a paced job: a window the host opens with "go <n>" for both guests at once (or for
# one at a time: pace turns) and closes with "stop <n>" once every guest of the window is done.
# Everything that costs time is done before READY (sync, drop caches, the argument vector, the
# parked filler, DONE's record); between the go and the filler's start the agent reads the clock,
# runs the tool, writes "go" to the filler and prints DONE, all with builtins; the run's records
# come only after the stop. Returns wait_word's status (1: abort, 2: no word).
run_paced_step() {  # step dir index warmup
  dir=$2
  first_line "$dir/name"; name=$LINE
  step=$1 index=$3 warm=$4
  prepare_run "$dir"
  set --
  while IFS= read -r a; do set -- "$@" "$a"; done < "$dir/argv"
  [ "$FILL" = 1 ] && park_filler "$dir"
  [ "$TEST_FAULT" = never-ready ] && while :; do sleep 3600; done
  make_done_line "$step"
  [ "$SETTLE_FROM" = 0 ] || settle_since "$SETTLE_FROM"
  clock_now; t_ready=$NOW
  rec READY "$step,$t_ready"
  if [ "$TEST_FAULT" = deaf ] && [ "$step" = 0 ]; then
    wait_word "go never"
    heard=$?
    [ "$FILL" = 1 ] && unpark_filler
    return $heard
  fi
  wait_word "go $step"
  heard=$?
  if [ $heard != 0 ]; then
    [ "$FILL" = 1 ] && unpark_filler
    return $heard
  fi
  clock_now; t_go=$NOW
  [ "$TEST_FAULT" = hang-window ] && while :; do sleep 3600; done
  first_run_fault
  t0=$NOW
  cpu_ticks; c0_busy=$CPU_BUSY c0_all=$CPU_ALL
  "$@" > "$WORK/out" 2>&1 < /dev/null
  status=$?
  clock_now; t1=$NOW
  cpu_ticks
  t_fill=$t1
  FILLS=0
  if [ "$FILL" = 1 ]; then release_filler; clock_now; t_fill=$NOW; fi
  clock_now; t_done=$NOW
  printf '%s\n' "$DONE_LINE"
  SEQ=$((SEQ + 1))
  wait_word "stop $step"
  heard=$?
  clock_now; t_stop=$NOW
  [ "$FILL" = 1 ] && stop_filler
  clock_now; t_load_end=$NOW
  [ "$FILL" = 1 ] || t_load_end=$t1
  SETTLE_FROM=$t_stop
  usec "$t_stop"; sf_stop=$USEC; usec "$t_load_end"
  [ $((USEC - sf_stop)) -le 100000 ] || SETTLE_FROM=$t_load_end
  rec RUN "$name,$index,$warm,$t0,$step,$t_ready,$t_go"
  emit_output "$WORK/out"
  rec RUNEND "$name,$index,$status,$t1,$t_fill,$t_stop,$t_load_end,$FILLS,$t_done"
  rec_cpu "$name" "$index"
  return $heard
}

# Finds every workload's disk (its own serial, else the job's), reports each disk's negotiated
# virtio features once, and prepares it (scheduler none, the fio job file). Returns 1 when a disk
# is missing (after an ERROR record): nothing may run then.
prepare_disks() {
  i=0
  seen=
  while [ $i -lt "$NWORK" ]; do
    dir=$WORK/$i
    serial=$SCRATCH_SERIAL
    [ -s "$dir/disk" ] && serial=$(cat "$dir/disk")
    if ! find_scratch "$serial"; then
      rec FEATURES "$serial,none"
      error "no virtio-blk disk with serial '$serial'"
      return 1
    fi
    printf '%s' "$DISK" > "$dir/dev"
    case " $seen " in
      *" $serial "*) ;;
      *)
        seen="$seen $serial"
        feats=none
        [ -r "/sys/block/$DISK/device/features" ] && read -r feats < "/sys/block/$DISK/device/features"
        rec FEATURES "$serial,$feats"
        ;;
    esac
    if [ -f "$dir/jobfile" ]; then
      sed "s|@scratch|/dev/$DISK|g" "$dir/jobfile" > "$dir/job.fio"
    fi
    write_argv "$dir"
    if [ "$(cat "$dir/scheduler_none" 2>/dev/null)" = 1 ]; then
      echo none > "/sys/block/$DISK/queue/scheduler" 2>/dev/null || error "cannot set scheduler none on $DISK"
    fi
    i=$((i + 1))
  done
  return 0
}

run_steps() {
  n=0
  [ "$PACE" != free ] && [ "$FILL" = 1 ] && { open_filler_fifo || error "cannot make the filler's FIFO"; }
  open_settle_fifo || error "cannot make the settling pause's FIFO"
  while IFS=' ' read -r w warm idx; do
    if [ "$PACE" = free ]; then
      run_one "$WORK/$w" "$idx" "$warm"
    else
      run_paced_step "$n" "$WORK/$w" "$idx" "$warm" || return 1
    fi
    n=$((n + 1))
  done < "$WORK/steps"
}

# After END: the host ends the guest (destroys it). Only when no word comes within HOLD seconds
# (abvm died) does the guest power itself off.
hold_for_host() {
  WAIT=$HOLD
  wait_word bye > /dev/null 2>&1
}

report_dmesg() {
  mkdir -p "$WORK"
  dmesg | grep -iE 'virtio|abvm|iommu|swiotlb|dma api|dma-api|warn|error|bug|oops|call trace' | head -n 200 > "$WORK/dmesg"
  while IFS= read -r l; do b64 "$l"; echo; done < "$WORK/dmesg" > "$WORK/dmesg.b64"
  rec_lines DMESG "$WORK/dmesg.b64"
}

# Test-only (see the header): a crash or a hang at the start of the first measured run.
first_run_fault() {
  case "$TEST_FAULT" in
    panic) TEST_FAULT=; sync; echo c > /proc/sysrq-trigger; while :; do sleep 3600; done ;;
    hang) while :; do sleep 3600; done ;;
  esac
}

# Test-only (see the header): draws this trial's fault from abvm.fault_seed, the rate, the kinds
# and the trial id; sets TEST_FAULT and says what it drew.
draw_fault() {
  [ -n "$FAULT_SEED" ] && [ -z "$TEST_FAULT" ] || return 0
  h=$(printf '%s:%s' "$FAULT_SEED" "${TRIAL:-}" | md5sum)
  h=${h%"${h#????????}"}
  n=$((0x$h))
  case "$FAULT_RATE" in ''|*[!0-9]*) FAULT_RATE=10 ;; esac
  [ $((n % 100)) -lt "$FAULT_RATE" ] || { printf 'abvm-fault: none trial %s seed %s\n' "${TRIAL:-}" "$FAULT_SEED"; return 0; }
  set -- $(printf '%s' "$FAULT_KINDS" | tr ',' ' ')
  [ $# -gt 0 ] || return 0
  k=$(( (n / 100) % $# ))
  shift $k
  TEST_FAULT=$1
  printf 'abvm-fault: %s trial %s seed %s\n' "$TEST_FAULT" "${TRIAL:-}" "$FAULT_SEED"
}

# Test-only (see the header): records that must not be trusted.
fault_garbage() {
  head -c 4096 /dev/urandom | tr -d 'A'
  printf '\n'
  body="$NONCE:$SEQ:DMESG:$(b64 forged)"
  printf '%s%s:00000000000000000000000000000000\n' "$MARK" "$body"
}
fault_flood() {
  c="$MARK$NONCE:"
  while [ ${#c} -lt 4096 ]; do c=$c$c; done
  while :; do printf '%s' "$c"; done
}
fault_forge() {
  real=$NONCE
  realseq=$SEQ
  NONCE=forged${real#??????}
  SEQ=0
  rec BEGIN "$(b64 t9999),0.5"
  rec RUN "dd-write,0,0,1.0"
  rec OUT "$(b64 '8388608 bytes (8.4 MB, 8.0 MiB) copied, 0.0001 s, 84 GB/s')"
  rec RUNEND "dd-write,0,0,1.1"
  rec END "$SEQ"
  NONCE=$real
  SEQ=$realseq
}

# Prints "<module> <option>" for each module option in kernel command line $1, read as kmod's
# modprobe reads /proc/cmdline (libkmod-config.c, kmod_config_parse_kcmdline): words split at
# spaces outside double quotes; the module is what precedes the first unquoted '.', with '-'
# read as '_'; a word with an '=' before that '.' is no module option; a quoted part must
# come after "<module>.<param>=" (mod.p="a b"); quotes stay in the option for the kernel's
# own parser. One pass over the text, whatever it holds.
cmdline_module_options() {
  printf '%s\n' "$1" | awk '{
    n = length($0); w = ""; q = 0; dot = 0; val = 0; ok = 1
    for (i = 1; i <= n + 1; i++) {
      c = i <= n ? substr($0, i, 1) : " "
      if (c == " " && !q) {
        if (ok && dot > 1 && dot < length(w)) {
          m = substr(w, 1, dot - 1); gsub(/-/, "_", m); print m " " substr(w, dot + 1)
        }
        w = ""; dot = 0; val = 0; ok = 1; continue
      }
      w = w c
      if (c == "\"") { q = !q; ok = q ? 0 : (dot && val); continue }
      if (q) continue
      if (c == "." && !dot) dot = length(w)
      else if (c == "=") { if (dot) val = 1; else ok = 0 }
    }
  }'
}

# insmod, unlike modprobe, applies only the options on its own command line: each module gets
# the command line's options for it, in their order (the last of a repeated one wins).
load_modules() {
  [ -r /abvm/modules.order ] || return 0
  opts=/run/abvm-module-options
  cmdline_module_options "$(cat /proc/cmdline)" > "$opts"
  while IFS= read -r m; do
    [ -n "$m" ] || continue
    name=$(printf '%s' "${m%%.ko*}" | tr - _)
    set --
    while IFS=' ' read -r om o; do [ "$om" = "$name" ] && set -- "$@" "$o"; done < "$opts"
    out=$(insmod "/abvm/modules/$m" "$@" 2>&1) || error "insmod $m $* failed: $out"
  done < /abvm/modules.order
}

# The parameters the kernel holds for the virtio modules and every module loaded above, built
# in or not (/sys/module/<m>/parameters): what this guest really ran with, so a side's setting
# can be proved. Write-only parameters cannot be read and are left out.
report_module_params() {
  mkdir -p "$WORK"
  mods="virtio virtio_ring virtio_pci virtio_blk"
  [ -r /abvm/modules.order ] && mods="$mods $(sed 's/\.ko.*//' /abvm/modules.order | tr - _)"
  for m in $(printf '%s\n' $mods | sort -u); do
    for p in "/sys/module/$m/parameters/"*; do
      [ -f "$p" ] || continue
      v=
      if read -r v < "$p" 2>/dev/null || [ -n "$v" ]; then b64 "$m.${p##*/}=$v"; echo; fi
    done
  done > "$WORK/modparams.b64"
  rec_lines MODPARAM "$WORK/modparams.b64"
}

agent_main() {
  mount -t proc proc /proc
  mount -t sysfs sysfs /sys
  mount -t devtmpfs devtmpfs /dev 2>/dev/null
  mkdir -p /run /tmp
  mount -t tmpfs tmpfs /run
  # Keep printk off the console so kernel text cannot split a record line; the parser
  # still recovers from interleaving, and interesting dmesg lines are sent as records.
  echo 1 > /proc/sys/kernel/printk
  for w in $(cat /proc/cmdline); do
    case "$w" in
      abvm.test_fault=*) TEST_FAULT=${w#abvm.test_fault=} ;;
      abvm.fault_seed=*) FAULT_SEED=${w#abvm.fault_seed=} ;;
      abvm.fault_rate=*) FAULT_RATE=${w#abvm.fault_rate=} ;;
      abvm.fault_kinds=*) FAULT_KINDS=${w#abvm.fault_kinds=} ;;
    esac
  done
  # The host types its words (go, stop, abort) into the console: they must not echo back into it.
  stty -echo < "$CONSOLE" 2>/dev/null
  ok=1
  parse_job || ok=0
  draw_fault
  clock_now
  rec BEGIN "$(b64 "${TRIAL:-}"),$NOW"
  rec UNAME "$(b64 "$(uname -r)")"
  kversion=$(uname -v)
  [ "$TEST_FAULT" = foreign-build ] && kversion="#1 SMP foreign-build"
  rec KVERSION "$(b64 "$kversion")"
  rec CMDLINE "$(b64 "$(cat /proc/cmdline)")"
  load_modules
  report_module_params
  if [ $ok = 1 ] && prepare_disks; then
    [ "$TEST_FAULT" = garbage ] && fault_garbage
    [ "$TEST_FAULT" = flood ] && fault_flood
    run_steps
  fi
  report_dmesg
  [ "$TEST_FAULT" = forge ] && fault_forge
  rec END "$SEQ"
  sync
  [ "$TEST_FAULT" = nopoweroff ] || hold_for_host
}

case "${ABVM_AGENT_MODE:-guest}" in
  parse)
    parse_job || exit 1
    printf 'trial\0%s\0nonce\0%s\0scratch\0%s\0pace\0%s\0fill\0%s\0wait\0%s\0hold\0%s\0' \
      "$TRIAL" "$NONCE" "$SCRATCH_SERIAL" "$PACE" "$FILL" "$WAIT" "$HOLD"
    while IFS= read -r st; do printf 'step\0%s\0' "$st"; done < "$WORK/steps"
    i=0
    while [ $i -lt "$NWORK" ]; do
      d=$WORK/$i
      for f in name disk kind repetitions warmup sync drop_caches scheduler_none; do
        printf '%s\0%s\0' "$f" "$(cat "$d/$f" 2>/dev/null)"
      done
      while IFS= read -r a; do printf 'arg\0%s\0' "$a"; done < "$d/args"
      if [ -f "$d/jobfile" ]; then while IFS= read -r a; do printf 'jobline\0%s\0' "$a"; done < "$d/jobfile"; fi
      i=$((i + 1))
    done
    exit 0 ;;
  modopts)
    cmdline_module_options "$ABVM_CMDLINE"
    exit 0 ;;
  steps)
    # The job's steps on the host, the host's words read from $ABVM_CONSOLE, every workload's
    # "@scratch" the file $ABVM_DISK: the paced windows and the filler without a guest.
    parse_job || exit 1
    clock_now
    rec BEGIN "$(b64 "$TRIAL"),$NOW"
    i=0
    while [ $i -lt "$NWORK" ]; do
      printf '%s' "${ABVM_DISK#/dev/}" > "$WORK/$i/dev"
      write_argv "$WORK/$i"
      i=$((i + 1))
    done
    run_steps
    rec END "$SEQ"
    exit 0 ;;
  emit)
    NONCE=$ABVM_NONCE
    rec BEGIN "$(b64 test),1.25"
    rec UNAME "$(b64 "$(uname -r)")"
    rec FEATURES abvm-scratch,0110000000000000000000000000000001000000000000000000000000000000
    rec RUN "demo,0,0,1.50"
    printf '%s' "$ABVM_OUTPUT" > "$WORK/out"
    emit_output "$WORK/out"
    rec RUNEND "demo,0,3,2.75"
    rec CPU "demo,0,7,25"
    rec READY "0,3.000001"
    rec DONE "0"
    rec RUN "paced,0,0,3.100000,0,3.000001,3.050000"
    emit_output "$WORK/out"
    rec RUNEND "paced,0,0,4.400000,4.450000,5.000000,5.100000,2,4.500000"
    rec CPU "paced,0,120,130"
    rec END "$SEQ"
    exit 0 ;;
  *)
    agent_main
    if [ "$TEST_FAULT" = nopoweroff ]; then while :; do sleep 3600; done; fi
    poweroff -f
    # poweroff -f does not return; if it ever did, exiting init panics and panic=-1 reboots.
    exit 1 ;;
esac
