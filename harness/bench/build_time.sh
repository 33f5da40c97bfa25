#!/usr/bin/env bash
# Cold build time of README's main job (`cmake -S . -B build -G Ninja && cmake --build build
# --target abvm`) at two revisions, measured alternately in the same conditions: each revision's
# tree is exported (git archive) once, then every round configures a fresh build directory with an
# empty ccache (a fresh machine's: setup.sh installs ccache, and its first build misses everything)
# and times the build of `abvm`. Rounds go ABBA (before-after, then after-before) so that a host
# whose load drifts hits both alike. Prints each build's wall time with the load average at its
# start and its CPU time (user + system of the compilers and linkers: on a shared, loaded host the
# steadier figure), each revision's medians, and after/before.
#
# usage: harness/bench/build_time.sh BEFORE [AFTER=HEAD] [ROUNDS=2]
#   JOBS=2 (ninja -j), NICE=10 (nice -n). Needs what harness/setup.sh installs; about 4 cold builds.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
before=$(git -C "$here" rev-parse --short "$1")
after=$(git -C "$here" rev-parse --short "${2:-HEAD}")
rounds=${3:-2}
jobs=${JOBS:-2}
niceness=${NICE:-10}
work=$(mktemp -d /tmp/abvm-build-time.XXXXXX)
trap 'rm -rf "$work"' EXIT

for rev in "$before" "$after"; do
  mkdir -p "$work/$rev"
  git -C "$here" archive --format=tar "$rev" | tar -x -C "$work/$rev"
done

stamp() { date +%s.%N; }
# One cold build of `abvm` at `rev`: prints its seconds.
cold_build() {
  local rev=$1 src=$work/$1
  rm -rf "$src/build" "$work/ccache"
  CCACHE_DIR=$work/ccache cmake -S "$src" -B "$src/build" -G Ninja >/dev/null
  local load t
  load=$(cut -d' ' -f1 /proc/loadavg)
  t=$(stamp)
  # `times` in the subshell: its children's user and system time, i.e. the build's.
  local cpu
  cpu=$( (CCACHE_DIR=$work/ccache nice -n "$niceness" cmake --build "$src/build" --target abvm -j "$jobs" \
            >"$work/$rev.log" 2>&1 || exit 1; times) | tail -n 1 |
         awk '{ split($1, u, /[ms]/); split($2, y, /[ms]/); printf "%.1f", u[1] * 60 + u[2] + y[1] * 60 + y[2] }') ||
    { tail -n 30 "$work/$rev.log" >&2; echo "build_time.sh: the build of $rev failed" >&2; exit 1; }
  local s
  s=$(awk -v a="$t" -v b="$(stamp)" 'BEGIN { printf "%.1f", b - a }')
  echo "$rev: $s s wall, $cpu s CPU ($(ninja -C "$src/build" -t commands abvm | wc -l) steps, -j$jobs, load $load at start)" >&2
  echo "$s $cpu"
}

declare -A wall cpu
for ((r = 1; r <= rounds; r++)); do
  order=("$before" "$after")
  [ $((r % 2)) -eq 0 ] && order=("$after" "$before")
  for rev in "${order[@]}"; do
    read -r w c < <(cold_build "$rev")
    wall[$rev]+="$w "
    cpu[$rev]+="$c "
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for what in wall cpu; do
  declare -n t=$what
  mb=$(echo "${t[$before]}" | median)
  ma=$(echo "${t[$after]}" | median)
  echo "$what: before $before ${t[$before]}(median $mb s), after $after ${t[$after]}(median $ma s);" \
    "$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "after/before %.2f", a / b }')"
done
