#!/usr/bin/env bash
# Boot-time benchmark: boots abvm's guest N times under TCG and prints the guest uptime when
# the first workload starts (target < 1.5 s) and the host wall time per boot.
# The initrd (base image + modules + a dd/fio job) comes from one run of the guest boot test
# with ABVM_BOOT_KEEP, so the script measures exactly what the tests boot.
#
# usage: harness/bench/boot_time.sh <build dir> [N=5] [kernel]
#   kernel: a kernel image (default: the Debian cloud kernel, with its modules in the initrd), or
#   "source": the kernel built from kernels/linux-6.1-virtio (virtio built in, no modules archive),
#   prepared by its boot test (abvm_guest_kernel_build_boot_test; builds it if not cached)
set -euo pipefail
build=${1:?usage: boot_time.sh <build dir> [N] [kernel]}
n=${2:-5}
work=$(mktemp -d /tmp/abvm-boottime.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ "${3:-}" = source ]; then
  prepare=("$build/harness/tests/abvm_guest_kernel_build_boot_test" --gtest_filter='*UnpatchedKernelRunsDdAndFio*')
else
  prepare=("$build/harness/tests/abvm_guest_boot_qemu_test" --gtest_filter='*DebianKernelRunsDdAndFio*')
fi
ABVM_BOOT_KEEP=$work "${prepare[@]}" >"$work/prepare.log" 2>&1 || {
  echo "boot_time.sh: preparing the initrd failed; see the test output:" >&2
  tail -20 "$work/prepare.log" >&2
  exit 1
}
kernel=${3:-source}
if [ "$kernel" = source ]; then kernel=$(cat "$work/kernel"); fi  # the kernel the test booted
# "ABVM2:<nonce>:" as guest/records.hpp (record_prefix) spells it, written by the test above;
# the fields after it (<seq>:<type>:<payload>:<md5>) are described there too.
record_prefix=$(cat "$work/record_prefix")
truncate -s 64M "$work/scratch.raw"
echo "kernel: $kernel"
echo "initrd: $(stat -c %s "$work/initrd") bytes"
for i in $(seq 1 "$n"); do
  rm -f "$work/console.log"
  t0=$(date +%s.%N)
  qemu-system-x86_64 -machine q35 -accel tcg -m 512 -nographic -no-reboot -nodefaults -monitor none \
    -kernel "$kernel" -initrd "$work/initrd" -append "console=ttyS0 panic=-1 quiet rdinit=/init" \
    -drive "file=$work/scratch.raw,if=none,id=d0,format=raw" \
    -device virtio-blk-pci,drive=d0,serial=abvm-scratch -serial "file:$work/console.log" >/dev/null 2>&1
  t1=$(date +%s.%N)
  # The first RUN record's payload is workload,index,warmup,t_start (guest uptime).
  first=$(grep -a -o "$record_prefix[0-9]*:RUN:[^:]*" "$work/console.log" | head -1 | awk -F, '{print $4}')
  begin=$(grep -a -o "${record_prefix}0:BEGIN:[^:]*" "$work/console.log" | head -1 | awk -F, '{print $2}')
  printf 'boot %d: agent start %s s, first workload at %s s guest uptime, host wall %.2f s\n' \
    "$i" "${begin:-?}" "${first:-?}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')"
done
