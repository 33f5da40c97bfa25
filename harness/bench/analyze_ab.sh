#!/usr/bin/env bash
# analyze_size.sh's command for two abvm builds in one session, alternated (old, new, old, new, ...)
# so that a noisy host weighs on both alike: each run's wall, user and sys seconds and peak RSS, then
# the min and median of each per build. Their outputs must be the same: analysis.json without its
# timestamps, the terminal output and the exit status are compared after every run.
#
# usage: harness/bench/analyze_ab.sh OLD_ABVM NEW_ABVM [ROUNDS] [N]   (default: 5 rounds, 2 x 1,000,000)
# Exit status: 0 the same outputs, 1 an output differs, 2 when something is missing.
set -uo pipefail
old=$(realpath "$1") new=$(realpath "$2")
rounds=${3:-5} n=${4:-1000000}
here=$(cd "$(dirname "$0")/../.." && pwd)
[ -x /usr/bin/time ] || { echo "analyze_ab.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/abvm-analyze-ab-XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/harness/bench/seed_like_numbers.py" "$n" "$work/a.txt" "$work/b.txt"

status=0
for ((i = 1; i <= rounds; i++)); do
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$bin" analyze --a "$work/a.txt" --b "$work/b.txt" \
      --unit B/s --higher-is-better --json "$work/$side.json" > "$work/$side.term" 2> "$work/$side.err"
    echo "rc=$?" >> "$work/$side.term"
    sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?//g' "$work/$side.json"
    read -r wall user sys kib < "$work/time.txt"
    echo "$side $wall $user $sys $((kib / 1024))" | tee -a "$work/times.txt"
  done
  for f in json term err; do
    cmp -s "$work/old.$f" "$work/new.$f" || { echo "round $i: the $f outputs differ" >&2; status=1; }
  done
done
/usr/bin/python3 - "$work/times.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    side, *figures = line.split()
    runs.setdefault(side, []).append([float(x) for x in figures])
for side, rows in runs.items():
    cols = list(zip(*rows))
    fig = lambda k: "%.2f / %.2f" % (min(cols[k]), statistics.median(cols[k]))
    print(f"{side}: {len(rows)} runs, min / median: wall {fig(0)} s, user {fig(1)} s, sys {fig(2)} s, "
          f"peak RSS {min(cols[3]):.0f} / {statistics.median(cols[3]):.0f} MiB")
PY
[ $status = 0 ] && echo "outputs: the same in every round (analysis.json without timestamps, terminal, stderr, exit status)"
exit $status
