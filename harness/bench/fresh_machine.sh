#!/usr/bin/env bash
# Times README's main-job command on a fresh Debian 12: a minimal bookworm made by debootstrap
# (nothing of abvm's installed, empty caches), a clean clone of this repository's HEAD in it, and
# the command run there as root in a chroot (the host's kernel, /dev/kvm and CPUs). Prints the
# time of each step of the command and of the whole, and the verdict.
#
# usage: sudo harness/bench/fresh_machine.sh [DIR=/var/tmp/abvm-fresh]   (needs debootstrap; ~4 GB)
# The bare system is made once in DIR.pristine and copied to DIR for every run, so each run starts
# with nothing of abvm's installed and empty caches. DIR is left for a look (unmounted).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/var/tmp/abvm-fresh}
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine.sh: run it as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh_machine.sh: apt-get install debootstrap" >&2; exit 1; }
mounted=()
cleanup() { for m in $(printf '%s\n' "${mounted[@]}" | tac); do umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
stamp() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(stamp)" 'BEGIN { printf "%.0f", b - a }'; }

pristine=$dir.pristine
if [ ! -e "$pristine/etc/debian_version" ]; then
  echo "== debootstrap bookworm into $pristine (not timed: the fresh machine itself)" >&2
  rm -rf "$pristine"
  debootstrap --variant=minbase bookworm "$pristine" http://deb.debian.org/debian >/dev/null
fi
for m in dev/pts dev sys proc; do umount -l "$dir/$m" 2>/dev/null || true; done
rm -rf "$dir"
cp -a "$pristine" "$dir"
cp /etc/apt/sources.list.d/debian.sources "$dir/etc/apt/sources.list.d/" 2>/dev/null || true
rm -f "$dir/etc/apt/sources.list"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
for m in proc sys dev dev/pts; do
  mkdir -p "$dir/$m"
  case $m in
    proc) mount -t proc proc "$dir/proc" ;;
    sys) mount -t sysfs sysfs "$dir/sys" ;;
    dev) mount --bind /dev "$dir/dev" ;;
    dev/pts) mount --bind /dev/pts "$dir/dev/pts" ;;
  esac
  mounted+=("$dir/$m")
done
rm -rf "$dir/root/abvm"
git -C "$here" archive --format=tar --prefix=abvm/ HEAD | tar -x -C "$dir/root"
# git and the tools the quick start assumes on any Debian machine (not abvm's: those are setup.sh's).
chroot "$dir" apt-get update -qq >/dev/null
chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null

# README's main-job command, split at its && into timed steps (the same words, in order).
cmd=$(awk '/^## Quick start/{q=1} q && /^```/{f=!f; if(!f) exit; next} q && f' "$here/README.md" | head -n 1)
echo "main job: $cmd" >&2
total=$(stamp)
IFS=$'\n' read -r -d '' -a steps < <(printf '%s' "$cmd" | sed 's/ && /\n/g'; printf '\0')
last=$(( ${#steps[@]} - 1 ))
for i in "${!steps[@]}"; do
  step=${steps[$i]}
  t=$(stamp)
  chroot "$dir" /bin/bash -c "cd /root/abvm && $step" > "$dir/root/step.log" 2>&1 || rc=$?
  echo "step ($(since "$t") s): $step" >&2
  # Only `abvm run` may end in a verdict's exit code (1 regression, 4 inconclusive).
  ok=0
  [ "${rc:-0}" -eq 0 ] && ok=1
  [ "$i" -eq "$last" ] && { [ "${rc:-0}" -eq 1 ] || [ "${rc:-0}" -eq 4 ]; } && ok=1
  if [ "$ok" -ne 1 ]; then
    tail -n 30 "$dir/root/step.log" >&2
    echo "fresh_machine.sh: the step failed with exit ${rc}" >&2
    exit 1
  fi
  rc=0
done
echo "to the first verdict: $(since "$total") s" >&2
grep -E "^verdict:|sequential stopping:" "$dir/root/step.log" >&2 || true
