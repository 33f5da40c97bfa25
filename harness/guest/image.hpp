#pragma once
// The guest's base initramfs: busybox-static, GNU dd (+ its shared libraries), a static fio
// built from Debian's fio source package, and the agent (guests/agent/init.sh) as /init.
// Kernel-independent, built once from the recipe guests/base.toml and cached by a content hash
// of everything that goes into it, so the second build is a lookup.
//
// What a guest boots is three concatenated archives (the kernel unpacks each in turn):
//   base image (gzip cpio)  +  modules archive (guest/modules, per kernel, may be empty)
//   +  job archive (guest/job, per trial, a few hundred bytes)
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

// The kernel command line abvm boots guests with: the serial console carries the records;
// panic=-1 reboots at once on a panic (QEMU -no-reboot / libvirt on_reboot=destroy turn that
// into an exit the host sees, so a crash is told apart from a hang); quiet keeps boot text
// short; rdinit=/init runs the agent from the initramfs.
inline constexpr std::string_view kGuestKernelCmdline = "console=ttyS0 panic=-1 quiet rdinit=/init";

// Modules the agent needs on kernels that build virtio as modules.
inline const std::vector<std::string> kGuestModules = {"virtio_pci", "virtio_blk"};

struct GuestImageOptions {
  std::filesystem::path recipe;      // empty: guests/base.toml of abvm's data (core/resources.hpp)
  std::filesystem::path cache_dir;   // empty: abvm_cache_dir()
  bool rebuild = false;              // ignore a cached image (the static fio stays cached)
};

struct GuestImage {
  std::filesystem::path path;          // the gzip-compressed cpio archive
  std::uint64_t compressed_size = 0;   // bytes
  std::string sha256;                  // of the file at `path`
  std::vector<std::string> contents;   // paths inside the archive
};

// Builds (or finds in the cache) the base image. Throws Error when the recipe is wrong or a
// Debian package is missing (naming the package; harness/setup.sh installs them), InfraError
// when a build step fails on this machine (with the command and its output's tail).
GuestImage build_guest_image(const GuestImageOptions& options = {});

// "path\nsize\nsha256" lines for `abvm guest build`, e.g.
//   image   /root/.cache/abvm/images/base-<hash>.cpio.gz
//   size    3112345 bytes (2.97 MiB)
//   sha256  <hex>
//   files   412
std::string describe_guest_image(const GuestImage& image);

// Writes the initrd a guest boots: the base image, then the modules archive (may be empty),
// then the job archive, each piece starting on a 4-byte boundary as the kernel requires.
void write_guest_initrd(const std::filesystem::path& out, const GuestImage& image, std::string_view modules_archive,
                        std::string_view job_archive);

}  // namespace abvm
