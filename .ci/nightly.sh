#!/usr/bin/env bash
# The nightly A/B job's logic, shared by .github/workflows/nightly.yml and .gitlab-ci.yml (README,
# "Nightly CI", says what it means). Three steps, run in this order from the repository root with
# the baseline (if the CI cache had one) in baseline/:
#
#   .ci/nightly.sh run CONFIG   abvm run into results/, the report and JUnit XML, and abvm compare
#                               against baseline/ when there is one. Never fails: it records the
#                               exit codes in results/nightly.env for the next steps.
#   .ci/nightly.sh baseline     a completed run (exit 0, 1 or 4: it has its analysis) that did not
#                               regress (run and compare both not 1) replaces baseline/. Prints
#                               replaced=true|false (GitHub: append it to $GITHUB_OUTPUT).
#   .ci/nightly.sh verdict [--inconclusive-exit N]
#                               fails (exit 1) on a regression; fails with abvm's code on anything
#                               but 0/1/4 (usage or input error 2, infrastructure 3, Ctrl-C 130, a
#                               crash), or when no run completed; on inconclusive (4) warns and exits
#                               N (default 4: GitLab's allow_failure: exit_codes shows it as a
#                               warning; GitHub passes 0 and gets a ::warning:: annotation).
set -uo pipefail
cd "$(dirname "$0")/.."
abvm=${ABVM:-build/abvm}
state=results/nightly.env

annotate() {  # level message: a GitHub annotation, or a plain line elsewhere
  if [ "${GITHUB_ACTIONS:-}" = true ]; then echo "::$1::$2"; else echo "nightly: $1: $2"; fi
}

completed() { case "$1" in 0 | 1 | 4) return 0 ;; *) return 1 ;; esac; }

step_run() {
  local config=$1 run_rc compare_rc=none dir report_rc=none
  mkdir -p results
  # Absolute: abvm run refuses a relative results directory once it builds the domain XML (exit 2).
  "$abvm" run "$config" --results-dir "$PWD/results"
  run_rc=$?
  # The run's own directory: the newest one abvm made under results/ (there is one per run).
  dir=$(find results -mindepth 1 -maxdepth 1 -type d -newer "$state.start" -printf '%T@ %p\n' 2>/dev/null |
        sort -n | tail -n 1 | cut -d' ' -f2-)
  if [ -n "$dir" ] && [ -f "$dir/analysis.json" ]; then
    "$abvm" report "$dir" --junit results/junit.xml
    report_rc=$?
    if [ -f baseline/journal.jsonl ]; then
      "$abvm" compare "$dir" baseline --json results/compare.json --html results/compare.html \
        --junit results/compare-junit.xml
      compare_rc=$?
    fi
  fi
  {
    echo "run_rc=$run_rc"
    echo "dir=$dir"
    echo "report_rc=$report_rc"
    echo "compare_rc=$compare_rc"
    echo "baseline=$(cat baseline/.nightly-run 2>/dev/null || echo none)"
  } >"$state"
  echo "nightly: abvm run exit $run_rc ($dir), abvm report exit $report_rc, abvm compare exit $compare_rc"
}

load_state() {
  if [ ! -f "$state" ]; then
    run_rc=none dir="" report_rc=none compare_rc=none baseline=none
    return
  fi
  # shellcheck disable=SC1090
  . "$state"
}

step_baseline() {
  load_state
  # A compare that failed (2, 3) does not keep the old baseline: a baseline that cannot be compared
  # with (an older abvm's, a damaged one) would otherwise fail every night after.
  if completed "$run_rc" && [ -n "$dir" ] && [ -f "$dir/analysis.json" ] && [ "$run_rc" != 1 ] &&
     [ "$compare_rc" != 1 ]; then
    rm -rf baseline.new && cp -a "$dir" baseline.new && basename "$dir" >baseline.new/.nightly-run &&
      rm -rf baseline && mv baseline.new baseline
    echo "nightly: $dir is the new baseline" >&2
    echo "replaced=true"
  else
    echo "nightly: the baseline stays $(cat baseline/.nightly-run 2>/dev/null || echo '(none)')" >&2
    echo "replaced=false"
  fi
}

step_verdict() {
  local inconclusive_exit=4
  if [ "${1:-}" = --inconclusive-exit ]; then inconclusive_exit=$2; fi
  load_state
  echo "nightly: abvm run exit $run_rc, abvm compare exit $compare_rc against the baseline $baseline"
  if [ "$run_rc" = none ]; then annotate error "the run step did not record anything"; return 3; fi
  if ! completed "$run_rc"; then
    annotate error "abvm run failed (exit $run_rc): see its output and the results artifact"
    return "$run_rc"
  fi
  if [ -z "$dir" ] || [ ! -f "$dir/analysis.json" ]; then
    annotate error "abvm run exited $run_rc but left no analysis.json"; return 3
  fi
  if [ "$report_rc" != 0 ] && [ "$report_rc" != 1 ] && [ "$report_rc" != 4 ]; then
    annotate error "abvm report failed (exit $report_rc)"; return 3
  fi
  if [ "$compare_rc" != none ] && ! completed "$compare_rc"; then
    annotate error "abvm compare against the baseline failed (exit $compare_rc)"
    return "$compare_rc"
  fi
  if [ "$run_rc" = 1 ] || [ "$compare_rc" = 1 ]; then
    annotate error "regression (abvm run exit $run_rc, abvm compare exit $compare_rc): see the report in the artifact"
    return 1
  fi
  [ "$compare_rc" = none ] && annotate notice "no baseline yet: this night's run becomes the first one"
  if [ "$run_rc" = 4 ] || [ "$compare_rc" = 4 ]; then
    annotate warning "inconclusive (abvm run exit $run_rc, abvm compare exit $compare_rc): more runs would settle it"
    return "$inconclusive_exit"
  fi
  return 0
}

case "${1:-}" in
  run)
    [ $# -eq 2 ] || { echo "usage: $0 run CONFIG" >&2; exit 2; }
    mkdir -p results && touch -d '-1 second' "$state.start" 2>/dev/null || touch "$state.start"
    step_run "$2"
    exit 0 ;;
  baseline) step_baseline ;;
  verdict) shift; step_verdict "$@"; exit $? ;;
  *) echo "usage: $0 run CONFIG | baseline | verdict [--inconclusive-exit N]" >&2; exit 2 ;;
esac
