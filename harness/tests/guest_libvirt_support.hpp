#pragma once
// Shared by the guest_libvirt_* tests: one embedded libvirt connection per test binary (the
// first one in a fresh root costs ~45 s of QEMU probing), a Debian cloud kernel, and a tiny
// busybox initramfs whose /init does what the kernel command line asks (`abvm_test=MODE`; the
// kernel hands unknown name=value parameters to init as environment variables):
//   poweroff  prints ABVM-TEST-UP, writes ABVM-DISK-WRITTEN to /dev/vda, prints the disk's
//             virtio feature bits (ABVM-FEATURES 0101...) and queue count (ABVM-MQ n), then
//             ABVM-TEST-DONE, and powers off
//   written   writes ABVM-DISK-WRITTEN to /dev/vda as poweroff does, prints ABVM-TEST-WRITTEN and
//             waits for a line from its console (the host reads the running guest's statistics)
//   hang      prints ABVM-TEST-UP and ABVM-TEST-HANGING, then ABVM-TEST-TICK every second forever
//   crash     prints ABVM-TEST-UP and exits, so the kernel panics ("Attempted to kill init")
//   echo      prints ABVM-TEST-WAITING, reads a line from its console and prints
//             "ABVM-ECHO-GOT <line>", then powers off (input typed through the console stream)
//   lastword  prints ABVM-TEST-ALMOST, a second later ABVM-TEST-LAST-WORD, and powers off at
//             once: a reader that is not reading just then loses the last line with the pty
//             when QEMU exits (guest/console_stream.hpp)
//   dd        prints the disk's queue limits (ABVM-LIMITS <max_segments> <max_sectors_kb>), then
//             $abvm_dd_runs times (default 1), each after half a second's pause, busybox dd of
//             $abvm_dd_count blocks of $abvm_dd_bs from /dev/zero to /dev/vda with O_DIRECT
//             ("ABVM-DD <run> <dd's records-out line>"); busybox dd prints no time, so each run is
//             timed by the kernel: a line written to /dev/kmsg just before and just after it (the
//             shell's own echo, no process started), printed back from dmesg with its printk time
//             in microseconds: "ABVM-TIME [   12.345678] ABVM-T0 <run>" and ABVM-T1; then
//             ABVM-TEST-DONE and power off
// Anything missing from the environment (not root, no QEMU, no network for the kernel) makes
// the tests skip with the reason, never pass.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <string>

#include "environment_skip.hpp"
#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm::test {

struct TestGuest {
  std::filesystem::path kernel;
  std::filesystem::path initrd;
  std::filesystem::path work;   // per-binary scratch directory (console logs, disks)
};

// The virtio modules of Debian's cloud kernel, in dependency order (modinfo -F depends).
inline const char* const kVirtioModules[] = {"drivers/virtio/virtio_ring", "drivers/virtio/virtio",
                                             "drivers/virtio/virtio_pci_modern_dev",
                                             "drivers/virtio/virtio_pci_legacy_dev",
                                             "drivers/virtio/virtio_pci", "drivers/block/virtio_blk"};

inline constexpr const char* kInit = R"INIT(#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
  $B insmod /mods/$m.ko || echo "ABVM-TEST-INSMOD-FAILED $m"
done
echo ABVM-TEST-UP
case "$abvm_test" in
  poweroff)
    i=0
    while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do $B sleep 0.05; i=$((i+1)); done
    echo ABVM-DISK-WRITTEN | $B dd of=/dev/vda bs=512 count=1 conv=sync 2>/dev/null && $B sync
    echo "ABVM-FEATURES $($B cat /sys/block/vda/device/features)"
    echo "ABVM-MQ $($B ls /sys/block/vda/mq | $B wc -l)"
    echo ABVM-TEST-DONE
    $B poweroff -f ;;
  written)
    i=0
    while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do $B sleep 0.05; i=$((i+1)); done
    echo ABVM-DISK-WRITTEN | $B dd of=/dev/vda bs=512 count=1 conv=sync 2>/dev/null && $B sync
    echo ABVM-TEST-WRITTEN
    read -r line
    $B poweroff -f ;;
  hang)
    echo ABVM-TEST-HANGING
    while true; do $B sleep 1; echo ABVM-TEST-TICK; done ;;
  crash)
    exit 1 ;;
  echo)
    echo ABVM-TEST-WAITING
    read -r line
    echo "ABVM-ECHO-GOT $line"
    $B poweroff -f ;;
  dd)
    i=0
    while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do $B sleep 0.05; i=$((i+1)); done
    echo "ABVM-LIMITS $($B cat /sys/block/vda/queue/max_segments) $($B cat /sys/block/vda/queue/max_sectors_kb)"
    r=0
    while [ $r -lt "${abvm_dd_runs:-1}" ]; do
      $B sleep 0.5
      echo "ABVM-T0 $r" > /dev/kmsg
      $B dd if=/dev/zero of=/dev/vda bs="$abvm_dd_bs" count="$abvm_dd_count" oflag=direct 2> /dd.out
      echo "ABVM-T1 $r" > /dev/kmsg
      echo "ABVM-DD $r $($B tail -n 1 /dd.out)"
      r=$((r+1))
    done
    $B dmesg | $B sed -n 's/^\(.*ABVM-T[01] [0-9]*\)$/ABVM-TIME \1/p'
    echo ABVM-TEST-DONE
    $B poweroff -f ;;
  lastword)
    echo ABVM-TEST-ALMOST
    $B sleep 1
    echo ABVM-TEST-LAST-WORD
    $B poweroff -f ;;
esac
$B poweroff -f
)INIT";

// Debian's cloud kernel, downloaded and unpacked once into the cache.
inline std::filesystem::path debian_kernel(const std::filesystem::path& dir) {
  const auto done = dir / "ready";
  if (!std::filesystem::exists(done)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "deb");
    // Resolve the metapackage to the concrete image package: its vmlinuz and modules match.
    std::string depends = run_checked({"apt-cache", "depends", "linux-image-cloud-amd64"});
    auto pos = depends.find("Depends: linux-image-");
    if (pos == std::string::npos) throw InfraError("apt-cache depends linux-image-cloud-amd64: no image package");
    auto end = depends.find('\n', pos);
    std::string package = depends.substr(pos + 9, end - pos - 9);
    run_checked({"apt-get", "download", package}, {.cwd = dir / "deb"});
    for (const auto& e : std::filesystem::directory_iterator(dir / "deb")) {
      run_checked({"dpkg-deb", "-x", e.path().native(), (dir / "root").native()});
    }
    write_file_atomic(done, package);
  }
  for (const auto& e : std::filesystem::directory_iterator(dir / "root" / "boot")) {
    if (e.path().filename().native().starts_with("vmlinuz-")) return e.path();
  }
  throw InfraError("no vmlinuz in " + (dir / "root" / "boot").native());
}

inline std::filesystem::path build_initramfs(const std::filesystem::path& kernel, const std::filesystem::path& dir) {
  const auto tree = dir / "tree";
  std::filesystem::remove_all(tree);
  for (const char* d : {"bin", "proc", "sys", "dev", "mods"}) std::filesystem::create_directories(tree / d);
  std::filesystem::copy_file("/bin/busybox", tree / "bin" / "busybox");
  const std::string release = kernel.filename().native().substr(std::string("vmlinuz-").size());
  const auto moddir = kernel.parent_path().parent_path() / "lib" / "modules" / release / "kernel";
  for (const char* m : kVirtioModules) {
    auto src = moddir / (std::string(m) + ".ko");
    std::filesystem::copy_file(src, tree / "mods" / src.filename());
  }
  write_file_atomic(tree / "init", kInit);
  std::filesystem::permissions(tree / "init", std::filesystem::perms(0755));
  std::string list = ".\n";
  for (const auto& e : std::filesystem::recursive_directory_iterator(tree)) {
    list += std::filesystem::relative(e.path(), tree).native() + "\n";
  }
  std::string archive = run_checked({"cpio", "--quiet", "-o", "-H", "newc", "--owner", "0:0"},
                                    {.cwd = tree, .stdin_data = list});
  const auto out = dir / "initramfs.cpio";
  write_file_atomic(out, archive);
  return out;
}

// Why the real-guest tests cannot run here, or nothing.
inline std::optional<std::string> missing_environment() {
  if (::geteuid() != 0) return "libvirt's embedded driver here needs root (QEMU runs as root)";
  if (!find_program("qemu-system-x86_64")) return "qemu-system-x86_64 is not installed (harness/setup.sh)";
  if (!find_program("cpio") || !std::filesystem::exists("/bin/busybox")) return "cpio or busybox-static missing";
  return std::nullopt;
}

// Set up once per binary; on failure every test that asks skips with the reason.
struct Shared {
  std::unique_ptr<LibvirtDriver> driver;
  TestGuest guest;
  std::string skip_reason;  // the machine cannot run guests at all: skip (fail under CI=true)
  std::string error;        // the environment is there but abvm failed: fail
};

inline Shared& shared() {
  static Shared s = [] {
    Shared r;
    if (auto why = missing_environment()) {
      r.skip_reason = *why;
      return r;
    }
    const auto base = abvm_cache_dir() / "test" / "guest-libvirt";
    // A machine that runs guests but cannot fetch the kernel fails the tests: not a skip.
    try {
      r.guest.kernel = debian_kernel(base / "debian-kernel");
      r.guest.work = std::filesystem::temp_directory_path() / fmt::format("abvm-guest-libvirt-{}", ::getpid());
      std::filesystem::create_directories(r.guest.work);
      r.guest.initrd = build_initramfs(r.guest.kernel, r.guest.work);
      r.driver = std::make_unique<LibvirtDriver>(LibvirtDriver::embedded_uri());
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }();
  return s;
}

#define ABVM_REQUIRE_LIBVIRT()                                               \
  do {                                                                       \
    auto& s_ = ::abvm::test::shared();                                      \
    if (!s_.skip_reason.empty()) ABVM_SKIP_WITHOUT(s_.skip_reason);             \
    ASSERT_TRUE(s_.driver) << s_.error;                                      \
  } while (0)

}  // namespace abvm::test
