#!/usr/bin/env bash
# The nightly job's logic, shared by .github/workflows/nightly.yml and .gitlab-ci.yml (README,
# "Nightly CI"), run from the repository root with the kernel tree cloned into linux/ and the
# history (nightly/) and abvm's kernel build cache restored by the CI cache:
#
#   .ci/nightly.sh run CONFIG   abvm nightly CONFIG --history nightly (tonight's head against the
#                               last good commit, bisected when it regresses), then abvm history
#                               (nightly/history.html) and abvm export --kcidb of the night
#                               (nightly/kcidb.json). Never fails: it records abvm nightly's exit
#                               code in nightly/nightly.env for the verdict step.
#   .ci/nightly.sh verdict [--inconclusive-exit N]
#                               0 passes; a regression fails (exit 1); inconclusive (4) warns and
#                               exits N (default 4: GitLab's allow_failure: exit_codes shows it as a
#                               warning; GitHub passes 0 and gets a ::warning:: annotation); any other
#                               code (2 input, 3 infrastructure, 130 interrupted, a crash) fails with it.
# abvm nightly itself decides what the history keeps: only a night that completes without regressing
# (exit 0 or 4) makes its head the last good commit.
set -uo pipefail
cd "$(dirname "$0")/.."
abvm=${ABVM:-build/abvm}
state=nightly/nightly.env

annotate() {  # level message: a GitHub annotation, or a plain line elsewhere
  if [ "${GITHUB_ACTIONS:-}" = true ]; then echo "::$1::$2"; else echo "nightly: $1: $2"; fi
}

step_run() {
  mkdir -p nightly && touch nightly/.start
  # A night's directory is kept as long as the CI keeps its artifact (30 days here and in the
  # workflows): then the history keeps its line, and the page says the night is no longer kept.
  find nightly/nights -mindepth 1 -maxdepth 1 -type d -mtime +"${ABVM_NIGHTLY_KEEP_DAYS:-30}" \
    -exec rm -rf {} + 2>/dev/null
  "$abvm" nightly "$1" --history nightly
  local rc=$? night
  "$abvm" history nightly
  # Tonight's directory, when a night ran (a head that has not moved makes none).
  night=$(find nightly/nights -mindepth 2 -maxdepth 2 -name night.json -newer nightly/.start 2>/dev/null |
          head -n 1 | xargs -r dirname | xargs -r basename)
  if [ -n "$night" ]; then
    "$abvm" export --kcidb "nightly/nights/$night" --output nightly/kcidb.json
  fi
  printf 'nightly_rc=%s\nnight=%s\n' "$rc" "$night" >"$state"
  echo "nightly: abvm nightly exit $rc (night ${night:-none})"
}

step_verdict() {
  local inconclusive_exit=4 nightly_rc=none night=""
  if [ "${1:-}" = --inconclusive-exit ]; then inconclusive_exit=$2; fi
  # shellcheck disable=SC1090
  [ -f "$state" ] && . "$state"
  case "$nightly_rc" in
    0) return 0 ;;
    1) annotate error "regression (night $night): see nightly/history.html and the night's report"; return 1 ;;
    4) annotate warning "inconclusive (night $night): more runs would settle it"; return "$inconclusive_exit" ;;
    none) annotate error "the run step recorded nothing"; return 3 ;;
    *) annotate error "abvm nightly failed (exit $nightly_rc): see its output"; return "$nightly_rc" ;;
  esac
}

case "${1:-}" in
  run) [ $# -eq 2 ] || { echo "usage: $0 run CONFIG" >&2; exit 2; }; step_run "$2"; exit 0 ;;
  verdict) shift; step_verdict "$@"; exit $? ;;
  *) echo "usage: $0 run CONFIG | verdict [--inconclusive-exit N]" >&2; exit 2 ;;
esac
