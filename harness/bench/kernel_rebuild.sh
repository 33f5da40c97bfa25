#!/usr/bin/env bash
# Kernel rebuild times in the kept build tree: the patched kernel right after the unpatched one
# (the seed's one-file patch), and the unpatched one again after it. Each build is forced by
# removing only that recipe's cache entry. Target: the patched rebuild in seconds, not minutes
# (a fresh tree compiles every file, through ccache, and relinks: about 75 s here).
#
# usage: harness/bench/kernel_rebuild.sh [BUILD_DIR] [ROUNDS]   (default: build, 3 rounds)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
rounds=${2:-3}
abvm=$build/abvm
[ -x "$abvm" ] || { echo "kernel_rebuild.sh: $abvm not found; build abvm first (cmake --build $build)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/abvm/kernels

# Prints the build's wall time in seconds; the cache entry of RECIPE is removed first.
build_forced() {
  local recipe=$1 key start end ms
  key=$("$abvm" kernel build "$recipe" 2>/dev/null | sed -n 's/^identity //p' |
        /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["cache_key"])')
  rm -rf "${cache:?}/$key"
  start=$(date +%s%N)
  "$abvm" kernel build "$recipe" >/dev/null 2>&1
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  printf '%d.%01d\n' $((ms / 1000)) $(( (ms % 1000) / 100 ))
}

# Both kernels exist (and the tree holds one of them) before anything is timed.
"$abvm" kernel build linux-6.1-virtio >/dev/null 2>&1
"$abvm" kernel build linux-6.1-virtio-dma-api >/dev/null 2>&1

printf '%-6s %-34s %-34s\n' round "patched after unpatched (s)" "unpatched after patched (s)"
for r in $(seq 1 "$rounds"); do
  build_forced linux-6.1-virtio >/dev/null   # the tree now holds the unpatched kernel
  p=$(build_forced linux-6.1-virtio-dma-api)
  u=$(build_forced linux-6.1-virtio)
  printf '%-6s %-34s %-34s\n' "$r" "$p" "$u"
done
