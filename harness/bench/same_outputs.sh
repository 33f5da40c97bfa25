#!/usr/bin/env bash
# Runs two abvm builds on the fixtures and diffs every output of `abvm analyze` (terminal, exit
# status, stderr, analysis.json, JUnit, HTML) apart from timestamps: a refactoring changes none.
# usage: harness/bench/same_outputs.sh OLD_ABVM NEW_ABVM [extra a.txt b.txt]
set -uo pipefail
old=$(realpath "$1") new=$(realpath "$2")
# Both read the data (report template, guests) of this source tree, wherever the binaries are.
export ABVM_DATA_DIR=${ABVM_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
data=$(cd "$(dirname "$0")/../tests/data" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/abvm-same-outputs-XXXXXX")
cases=(
  "seed|--a $data/seed/dd-without-patches.txt --b $data/seed/dd-with-patches.txt"
  "numbers|--a $data/numbers/latency-a.txt --b $data/numbers/latency-b.txt --unit ns --lower-is-better"
  "dd|--a $data/dd/gnu-five-runs.txt --b $data/dd/gnu-1M-64.txt"
  "fio|--a $data/fio/seqwrite.json --b $data/fio/seqwrite-jsonplus.json"
  "results-demo|$data/report/results-demo"
  "results-co|$data/report/results-co-scheduled"
  "results-slower|$data/report/results-slower"
  "journal-ok|$data/journal/results-ok"
)
[ $# -ge 4 ] && cases+=("big|--a $3 --b $4 --unit B/s --higher-is-better")
status=0
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    d=$out/$name.$side; mkdir -p $d
    # shellcheck disable=SC2086
    $bin analyze $args --json $d/a.json --junit $d/j.xml --html $d/r.html > $d/term.txt 2> $d/err.txt
    echo "rc=$?" >> $d/term.txt
    # timestamps only
    sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?//g; s/timestamp="[^"]*"//g; s/time="[^"]*"//g' $d/* 2>/dev/null
  done
  if diff -r $out/$name.old $out/$name.new > $out/$name.diff; then echo "$name: same"; else echo "$name: DIFFERS ($out/$name.diff)"; status=1; fi
done
# The plan, domain XML and guest job of every shipped config, and of the demo under every design.
configs=$(cd "$(dirname "$0")/../../configs" && pwd)
designs=$(mktemp -d "${TMPDIR:-/tmp}/abvm-same-outputs-designs-XXXXXX")
for design in sequential-blocks co-scheduled lockstep same-guest; do
  sed "s/^design = .*/design = \"$design\"/" "$configs/demo.toml" > "$designs/demo-$design.toml"
done
for cfg in "$configs"/*.toml "$designs"/*.toml; do
  name=dry-$(basename "$cfg" .toml)
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    (cd "$designs" && $bin run --dry-run "$cfg" > "$out/$name.$side" 2>&1; echo "rc=$?" >> "$out/$name.$side")
    sed -i -E 's/abvm-[0-9]+\./abvm-PID./g' "$out/$name.$side"  # domain names carry the process id
  done
  if diff "$out/$name.old" "$out/$name.new" > "$out/$name.diff"; then echo "$name: same"; else echo "$name: DIFFERS ($out/$name.diff)"; status=1; fi
done
exit $status
