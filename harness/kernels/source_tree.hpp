// A source build's tree: the source's identity, its pristine unpacked copy, the kept build tree
// restored from it, and the recipe's patches applied to that. Internal to kernels/.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

#include "kernels/kernel.hpp"

namespace abvm::kernel_build {

// What the source is: {"type": "linux-source", package, version}, {"type": "tarball", sha256} or
// {"type": "git", commit}. Error when it is missing (or a git tree is dirty).
nlohmann::json source_identity(const KernelRecipe& r);
// The pristine tree under <root>/src/<sha256 of the source identity>/, unpacked once.
std::filesystem::path unpacked_source(const KernelRecipe& r, const nlohmann::json& source,
                                      const std::filesystem::path& root, const KernelBuildOptions& options);
// The build tree <dir>/linux for a build of `recipe`, restored from `pristine` (or copied afresh).
std::filesystem::path prepare_build_tree(const KernelRecipe& recipe, const std::filesystem::path& pristine,
                                         const std::filesystem::path& dir, const KernelBuildOptions& options);
// Applies the recipe's patch series to the build tree, in order.
void apply_patches(const KernelRecipe& recipe, const std::filesystem::path& src, const nlohmann::json& source,
                   const KernelBuildOptions& options);

}  // namespace abvm::kernel_build
