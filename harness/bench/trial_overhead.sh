#!/usr/bin/env bash
# Per-trial overhead outside the guest (libvirt create + destroy + console collection), after the
# first trial. Target: < 0.3 s. Builds abvm_trial_overhead_bench, prepares a kernel (Debian's cloud
# kernel, cached) and a one-line busybox initramfs, runs the benchmark and prints the figures.
#
# usage: harness/bench/trial_overhead.sh [BUILD_DIR]      (root; default BUILD_DIR: build-bench;
#        ABVM_BENCH_BINARY=path skips the build; ABVM_BENCH_CONNECT=URI measures that libvirt daemon,
#        which gets the files as storage volumes, instead of the embedded driver)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build-bench}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/abvm/bench/trial-overhead
work=$(mktemp -d /tmp/abvm-trial-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "trial_overhead.sh: run as root (libvirt's embedded driver runs QEMU as root)" >&2; exit 125; }

bench=${ABVM_BENCH_BINARY:-}   # an already built abvm_trial_overhead_bench, else build it
if [ -z "$bench" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DABVM_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" --target abvm_trial_overhead_bench -j2 >/dev/null
  bench=$build/abvm_trial_overhead_bench
fi

# Kernel: the cloud image package behind the metapackage, downloaded once.
if [ ! -f "$cache/ready" ]; then
  rm -rf "$cache"; mkdir -p "$cache/deb"
  pkg=$(apt-cache depends linux-image-cloud-amd64 | sed -n 's/^ *Depends: \(linux-image-.*\)$/\1/p' | head -1)
  (cd "$cache/deb" && apt-get download "$pkg" >/dev/null 2>&1)
  dpkg-deb -x "$cache"/deb/*.deb "$cache/root"
  touch "$cache/ready"
fi
kernel=$(ls "$cache"/root/boot/vmlinuz-* | head -1)

# Initramfs: busybox and an init that says it is up and then waits to be destroyed.
mkdir -p "$work/tree/bin"
cp /bin/busybox "$work/tree/bin/busybox"
printf '#!/bin/busybox sh\necho ABVM-BENCH-UP\nwhile true; do /bin/busybox sleep 1; done\n' > "$work/tree/init"
chmod 755 "$work/tree/init"
(cd "$work/tree" && find . | cpio --quiet -o -H newc --owner 0:0) > "$work/initramfs.cpio"
truncate -s 64M "$work/scratch.img"

ABVM_BENCH_KERNEL=$kernel ABVM_BENCH_INITRD=$work/initramfs.cpio ABVM_BENCH_WORK=$work \
  "$bench" --benchmark_counters_tabular=true
echo "trial_overhead.sh: 'Time' is stage + start + stop per trial (manual time); target < 300 ms after the warm-up trial"
