#!/usr/bin/env bash
# Time, peak memory and analysis.json size of `abvm analyze --a A --b B --json` on plain-number
# files of 2 x 100,000 and 2 x 1,000,000 values (issue 11 item 7: 2 x 1M took 14 s and 2.2 GB,
# with a 353 MB JSON listing every run). Targets: peak RSS under 1 GiB at 2 x 1M, JSON under 5 MB.
#
# usage: harness/bench/analyze_size.sh [BUILD_DIR] [SIZES...]   (default: build, 100000 1000000)
# Exit status: 0 within the targets, 1 over them, 2 when something is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
abvm=$build/abvm
[ -x "$abvm" ] || { echo "analyze_size.sh: $abvm not found; build first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "analyze_size.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/abvm-analyze-size-XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
for n in "${sizes[@]}"; do
  /usr/bin/python3 "$here/harness/bench/seed_like_numbers.py" "$n" "$work/a.txt" "$work/b.txt"
  set +e
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$abvm" analyze --a "$work/a.txt" --b "$work/b.txt" \
    --unit B/s --higher-is-better --json "$work/analysis.json" > /dev/null 2> "$work/stderr.txt"
  rc=$?
  set -e
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 4 ]; then
    echo "analyze_size.sh: abvm analyze failed at 2 x $n (exit $rc):" >&2
    cat "$work/stderr.txt" >&2
    exit 2
  fi
  read -r seconds user sys kib < "$work/time.txt"
  json_bytes=$(stat -c %s "$work/analysis.json")
  echo "2 x $n: ${seconds} s wall (${user} s user, ${sys} s sys), peak RSS $((kib / 1024)) MiB, analysis.json $((json_bytes / 1024)) KiB (exit $rc)"
  if [ "$kib" -gt $((1024 * 1024)) ] || [ "$json_bytes" -gt $((5 * 1000 * 1000)) ]; then status=1; fi
done
exit $status
