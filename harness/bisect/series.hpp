#pragma once
// The patch series an `abvm bisect` experiment asks about, and the kernels of its steps.
//
// The experiment is an ordinary one (config/experiment.hpp): side B's kernel is a recipe built
// from source with a patch series, side A's kernel its base: the same source, base config,
// fragments and make arguments, and patches that are the first ones of B's (often none). The
// series to bisect is B's patches after A's. Or both are git recipes (kernels/kernel.hpp) of one
// local tree at two commits, A's an ancestor of B's with no merge between: the series is then the
// commits of A..B, each as `git format-patch` writes it, applied on A's commit. The two sides must
// not differ in anything else (command line, device, machine): a step compares kernels, nothing
// but kernels.
//
// Kernel k of the bisection (k = 0..N) is the base plus the series' first k patches, written as a
// recipe of its own (kernels/kernel-<k>.toml in the bisection's directory, with the patches and
// fragments next to it, so that a resumed bisection builds what the first session did). Every
// kernel shares one source, so one kept build tree, and each build recompiles what its patches
// touch. Built kernels are cached by content (kernels/kernel.hpp): kernel k of a second bisection
// of the same series is the same cache entry, and kernel 0 of a series of files is side A's own.
#include <filesystem>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "kernels/kernel.hpp"

namespace abvm {

// One patch of the kernels' series, as abvm bisect writes it next to each kernel's recipe.
struct SeriesEntry {
  std::string name;     // as the series file names it; a git range: "0001-<subject>.patch"
  std::string text;     // the patch itself
  std::string commit;   // a git range: the commit it is; "" otherwise
};

struct BisectSeries {
  std::string base_recipe;             // side A's kernel as the experiment names it
  std::string tip_recipe;              // side B's
  // How every kernel is built: its source (a git range: the base commit), config, fragments and
  // make arguments. Its own patches are not used: each kernel has its series below.
  KernelRecipe build;
  std::vector<SeriesEntry> base_patches;  // every kernel's first patches (side A's own)
  std::vector<SeriesEntry> patches;       // the series, in order
  bool git_range = false;
};

// Loads both sides' recipes and checks that they form a series (see above). Throws Error naming
// the experiment file, line and key, and what to do.
BisectSeries load_bisect_series(const Experiment& experiment,
                                const std::filesystem::path& kernels_dir = default_kernels_dir());

// Writes the recipes kernel-0.toml ... kernel-<N>.toml (and their series files, and copies of the
// patches and fragments) into `dir` and returns their paths, index k for kernel k.
std::vector<std::filesystem::path> write_kernel_recipes(const BisectSeries& series, const std::filesystem::path& dir);

}  // namespace abvm
