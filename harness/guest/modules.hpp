#pragma once
// The second initramfs piece: the kernel modules a guest needs before it can see its
// scratch disk, for kernels that build virtio as modules (Debian's cloud kernel does).
#include <filesystem>
#include <string>
#include <vector>

namespace abvm {

// Modules in load order (dependencies first), each with the path of its file.
struct ModuleFile {
  std::string name;                // e.g. "virtio_blk"
  std::filesystem::path path;      // the .ko, .ko.xz, .ko.zst or .ko.gz file
};

// Resolves `wanted` (module names; '-' and '_' are the same) and their dependencies for the
// kernel whose modules live in `modules_dir` (.../lib/modules/<version>). Dependencies come
// from the kernel's own modules.dep; a tree without one (a .deb unpacked with dpkg-deb -x,
// where depmod never ran) falls back to each module's "depends" field (kmod's modinfo).
// Modules built into the kernel (modules.builtin) are left out. Throws Error naming the
// module when one is neither a module file nor built in.
std::vector<ModuleFile> resolve_modules(const std::filesystem::path& modules_dir,
                                        const std::vector<std::string>& wanted);

// A newc cpio archive with abvm/modules/<name>.ko (decompressed, because busybox insmod
// loads plain ELF only) and abvm/modules.order listing the files in load order, which the
// agent insmods one by one. Returns an empty string when every wanted module is built in.
std::string build_modules_archive(const std::filesystem::path& modules_dir, const std::vector<std::string>& wanted);

}  // namespace abvm
