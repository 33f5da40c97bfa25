#!/usr/bin/env bash
# Times README's first command where it stands, step by step, on the machine as it is (for a plain
# fresh machine: run it before anything else; fresh_machine.sh makes a fresh chroot instead), then
# runs the demo MORE more times back to back. Prints each step's seconds and each demo's verdict,
# its blocks and its three judged estimates (from analysis.json).
#
# usage: harness/bench/first_command.sh [MORE=4]   (as root, from a clone; logs in results/first-command)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
more=${1:-4}
cd "$here" || exit 1
logs=results/first-command
mkdir -p "$logs"
stamp() { date +%s.%N; }
# step NAME CMD...: runs it with its output in $logs/NAME.log, prints its seconds; stops on failure.
step() {
  local name=$1 t0 rc
  shift
  t0=$(stamp)
  "$@" > "$logs/$name.log" 2>&1
  rc=$?
  awk -v a="$t0" -v b="$(stamp)" -v n="$name" -v rc="$rc" 'BEGIN { printf "%-14s %7.1f s  rc=%d\n", n, b - a, rc }'
  return "$rc"
}
# The verdict line and the judged metrics of the demo whose log is $1.
demo_summary() {
  local dir
  dir=$(sed -n 's/^abvm: results: //p' "$1" | tail -1)
  grep -m1 '^verdict' "$1"
  [ -n "$dir" ] && /usr/bin/python3 - "$dir" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1] + "/analysis.json"))
blocks = sum(1 for _ in open(sys.argv[1] + "/trials.jsonl")) // 2
for m in a["metrics"]:
    if not m.get("judged"):
        continue
    e = m["effect"]
    print(f"  {m['name']}: {e['estimate']:.4f} [{e['ci_low']:.4f}, {e['ci_high']:.4f}] {m.get('verdict')}")
print(f"  blocks: {blocks}")
EOF
}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
step setup harness/setup.sh || exit 1
step configure cmake -S . -B build -G Ninja || exit 1
step build cmake --build build --target abvm || exit 1
step demo-1 build/abvm run configs/demo.toml
demo_summary "$logs/demo-1.log"
for i in $(seq 2 $((more + 1))); do
  step "demo-$i" build/abvm run configs/demo.toml
  demo_summary "$logs/demo-$i.log"
done
