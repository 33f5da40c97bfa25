#pragma once
// Guest kernels: recipes (data under kernels/), builds from source, Debian packaged kernels,
// and the content-addressed cache that makes the second build of a recipe instant.
//
// A recipe (kernels/<name>.toml) says where the kernel comes from, which base config and
// config fragments to use and which patch series to apply:
//
//   source    = "linux-source"             # or "debian-package", "tarball", "git"
//   package   = "linux-source-6.1"         # debian-package / linux-source: the Debian package
//   path      = "../linux.tar.xz"          # tarball / git: relative to the recipe file
//   commit    = "v6.1"                     # git only, optional: the commit to build (default HEAD,
//                                          # which must then be clean; a named commit is taken
//                                          # from the object store whatever the work tree holds)
//   config    = "tinyconfig"               # base: tinyconfig, allnoconfig or defconfig
//   fragments = ["fragments/virtio-guest.config"]  # appended, then `make olddefconfig`
//   series    = "patches/virtio-dma-api/series"    # quilt-style series file, optional
//   make_args = ["KCFLAGS=-O2"]            # extra make arguments, optional
//   description = "..."                    # free text, optional
//
// Unknown keys are errors ("file:line: unknown key ..."): a typo must not silently change
// which kernel an experiment measures.
//
// Cache layout under <cache>/ (default: abvm_cache_dir()/kernels):
//   <hash>/identity.json   written last: its presence means the entry is complete
//   <hash>/bzImage, <hash>/config            source builds
//   <hash>/root/boot/vmlinuz-<release>, <hash>/root/lib/modules/<release>/   Debian packages
//   src/<source-hash>/     unpacked, pristine source trees (shared by every recipe)
//   trees/<source-hash>/   one build tree per source, kept between builds: the next build
//                          restores the files the last one's patches touched (listed in
//                          patched-paths.json before any patch is applied), applies its
//                          own, and kbuild recompiles only what changed (seconds for a
//                          one-file patch; a fresh tree takes about 75 s here)
//   ccache/                the compiler cache (CCACHE_BASEDIR + CCACHE_NOHASHDIR): a fresh
//                          build tree reuses the objects of earlier builds.
// <hash> is the sha256 of everything that determines the kernel: the source identity
// (package and version, tarball sha256 or git commit), base config, each fragment's text,
// each patch's sha256 in series order, make arguments, and the compiler's version.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace abvm {

enum class KernelSource {
  debian_package,  // apt-get download + dpkg-deb -x (vmlinuz and modules)
  linux_source,    // Debian's /usr/src/<package>.tar.xz (package linux-source-6.1)
  tarball,         // any kernel source tarball on disk
  git,             // a local git tree; its HEAD commit (clean) or the recipe's `commit` is built
};

std::string_view to_string(KernelSource source);

struct KernelPatch {
  std::string name;                 // as written in the series file
  std::filesystem::path path;       // absolute
};

struct KernelRecipe {
  std::string name;                 // file stem: "linux-6.1-virtio"
  std::filesystem::path file;       // the recipe file (absolute)
  std::string description;
  KernelSource source = KernelSource::linux_source;
  std::string package;              // debian_package / linux_source
  std::filesystem::path path;       // tarball / git (absolute)
  std::string commit;               // git: the commit built (a sha, branch or tag); "" builds HEAD
  std::string base_config = "tinyconfig";
  std::vector<std::filesystem::path> fragments;  // absolute
  std::optional<std::filesystem::path> series;   // absolute
  std::vector<KernelPatch> patches; // read from the series file, in order
  std::vector<std::string> make_args;
};

// kernels/ of abvm's data (core/resources.hpp): the source tree's, or <prefix>/share/abvm/kernels.
std::filesystem::path default_kernels_dir();

// Loads a recipe by name (kernels_dir/<name>.toml) or by path (anything containing '/' or
// ending in ".toml"). Relative paths inside the recipe are relative to the recipe file.
// Throws Error with "file:line: ..." for syntax errors, unknown keys, wrong types, missing
// keys, and for fragments, series files or patches that do not exist.
KernelRecipe load_kernel_recipe(const std::string& name_or_path,
                                const std::filesystem::path& kernels_dir = default_kernels_dir());

struct KernelArtifact {
  std::filesystem::path image;                     // bzImage / vmlinuz
  std::optional<std::filesystem::path> modules_dir; // lib/modules/<release>, packaged kernels
  std::string release;                             // uname -r
  std::string recipe;                              // recipe name (or the package)
  // Recorded with every result that uses the kernel: "release", "version" (uname -v of a
  // source build, package version of a Debian kernel), "source", "config_sha256",
  // "image_sha256", "patches" [{name, sha256}], "cache_key", "built_at", "build_seconds".
  nlohmann::json identity;
  bool cache_hit = false;                          // found complete in the cache
};

struct KernelBuildOptions {
  std::optional<std::filesystem::path> cache_dir;  // default: abvm_cache_dir()/kernels
  int jobs = 2;
  // Progress lines ("unpacking ...", "make bzImage ..."); default: "abvm: kernel: " on stderr.
  std::function<void(std::string_view)> progress;
};

// The cache key of a recipe (see above). Cheap for packaged/linux-source recipes; hashes
// the whole tarball for tarball recipes. Throws Error when the source is missing.
std::string kernel_cache_key(const KernelRecipe& recipe);

// Builds (or finds in the cache) the kernel a recipe describes. Source builds: unpack,
// apply the series with `patch -p1 --forward --batch` (Error naming the patch and the
// failing hunks), `make <base_config>`, append the fragments, `make olddefconfig`, check
// that every `=y` of the fragments survived and that virtio-blk is built in (Error naming
// the option), then `make bzImage` through ccache. A failing compile is an Error with the
// tail of the build log (a patch can break the build); a failing tool is an InfraError.
KernelArtifact build_kernel(const KernelRecipe& recipe, const KernelBuildOptions& options = {});

// The sha256 of a file (a patch, a fragment), as the cache key takes it; and of a text, which
// equals file_sha256 of a file holding it.
std::string file_sha256(const std::filesystem::path& path);
std::string text_sha256(const std::string& text);

// The files a unified or git diff touches, relative to the tree it applies to with `patch -p1`
// ("---"/"+++" headers with their first component stripped, git's rename/copy lines as they
// are; /dev/null skipped), each once, in order of appearance.
std::vector<std::string> paths_touched_by_patch(std::string_view patch_text);

// The check build_kernel runs after `make olddefconfig` (exposed for tests): every option
// the fragments set (the last setting of each wins) must have that value in `config_text`,
// and CONFIG_VIRTIO, _VIRTIO_PCI, _VIRTIO_BLK and _BLK_DEV_INITRD must be =y. Throws Error
// located at the fragment line (or at the recipe file) naming the option and its final value.
void check_kernel_config(const std::vector<std::filesystem::path>& fragments, const std::string& config_text,
                         const std::filesystem::path& recipe_file);

// A Debian packaged kernel: resolves a metapackage (linux-image-cloud-amd64) to the
// concrete linux-image-<release> package, `apt-get download`s it and extracts vmlinuz and
// lib/modules/<release>/ into the cache. Error when the package does not exist.
KernelArtifact fetch_debian_kernel(const std::string& package = "linux-image-cloud-amd64",
                                   const KernelBuildOptions& options = {});

}  // namespace abvm
