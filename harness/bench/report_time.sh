#!/usr/bin/env bash
# Report generation time for a 2 x 1,000-run experiment: synthesises a results directory whose
# journal holds 1,000 dd runs per side (250 boots x 4 runs, plus one fio run per boot), then times
# `abvm analyze DIR --html` (analysis, plots through report/plot.py, HTML). Target: under 10 s.
#
# usage: harness/bench/report_time.sh [BUILD_DIR]     (default: build)
# Exit status: 0 within the target, 1 over it, 2 when something is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
abvm=$build/abvm
[ -x "$abvm" ] || { echo "report_time.sh: $abvm not found; build first (cmake --build $build)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/abvm-report-time-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/results"
/usr/bin/python3 "$here/harness/tests/data/report/make_journal.py" "$work/results/journal.jsonl" \
  --boots 250 --runs 4 --b-ratio 0.97 --noise 0.03 --seed 11
runs=$(grep -c '"workload":"dd-write"' "$work/results/journal.jsonl")
echo "journal: $runs dd runs + $(grep -c fio-seqwrite "$work/results/journal.jsonl") fio runs ($((runs / 2)) per side)"

start=$(date +%s.%N)
set +e
"$abvm" analyze "$work/results" --html "$work/report.html" --json "$work/analysis.json" > "$work/stdout.txt"
rc=$?
set -e
end=$(date +%s.%N)
if [ "$rc" -ge 2 ] && [ "$rc" -ne 4 ]; then
  echo "report_time.sh: abvm analyze failed (exit $rc)" >&2
  exit 2
fi
seconds=$(echo "$end - $start" | bc -l 2>/dev/null || /usr/bin/python3 -c "print($end - $start)")
plots=$(grep -o '<img src="data:image/png' "$work/report.html" | wc -l)
printf 'report generation (2 x %d runs, %d plots, %d KiB HTML): %.2f s (target < 10 s)\n' \
  "$((runs / 2))" "$plots" "$(( $(stat -c %s "$work/report.html") / 1024 ))" "$seconds"
/usr/bin/python3 -c "import sys; sys.exit(0 if $seconds < 10 else 1)" || { echo "report_time.sh: over the 10 s target" >&2; exit 1; }
