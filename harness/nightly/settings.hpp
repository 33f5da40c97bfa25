#pragma once
// The experiment file of `abvm nightly`: an ordinary abvm experiment (config/experiment.hpp: the
// workloads, the design, the budget of each night's A/B, the margin) with a [nightly] table that
// names what the nightly follows:
//
//   [nightly]
//   tree = "/srv/linux"          # a local git tree (relative paths: to this file), fetched by the CI;
//                                # it may be cloned to another path each night
//   branch = "master"            # the branch whose head each night measures
//   base = "v6.1"                # side A of the first night (then: the last good commit)
//   url = "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"  # required: the
//                                # tree's identity in the history's key (history.hpp), reports, KCIDB
//   recipe = "linux-6.1-virtio"  # how each commit is built: its config, fragments and make_args
//   drift_every = 7              # every 7th night, head is also compared with the last good
//                                # commit of 7 nights before (0: never; default 7)
//   [nightly.bisect]             # a night that regresses is bisected within these budgets
//   max_boots = 60               # boots per side over all steps (default: each step's own budget)
//   max_wall_time = "2h"         # the bisection stops there and reports the range it has left
//   max_steps = 8                # default: abvm bisect's for the number of commits
//
// The nightly sets both sides (each side's kernel is one of the night's two commits, its label the
// commit's short sha): the file must not set guest.kernel or [sides], and the sides differ in
// nothing else (a night compares kernels).
// Unknown keys of [nightly] are errors at their line, as everywhere in abvm's files.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "config/experiment.hpp"
#include "kernels/kernel.hpp"

namespace abvm {

struct NightlySettings {
  std::filesystem::path tree;  // absolute; where the commits are read and built, not who the tree is
  std::string branch;
  std::string base;
  std::string url;             // https://...: who the tree is, in the history's key (history.hpp)
  std::string recipe;
  int drift_every = 7;
  std::optional<int> bisect_max_boots;
  std::optional<std::chrono::milliseconds> bisect_max_wall;
  std::optional<int> bisect_max_steps;
};

struct NightlyExperiment {
  std::filesystem::path file;   // absolute
  NightlySettings nightly;
  KernelRecipe build;           // the recipe named by nightly.recipe: config, fragments, make_args
  std::string experiment_text;  // the file without its [nightly] tables (their lines left blank)
  Experiment experiment;        // loaded from experiment_text (its sides' kernels are the night's)
  std::string sha256;           // of the whole file: part of every history line's key
};

// Reads and checks the file. Throws Error "file:line: ..." naming the key and what to do.
NightlyExperiment load_nightly_experiment(const std::filesystem::path& file,
                                          const std::filesystem::path& kernels_dir = default_kernels_dir());

// `text` with the lines of its [nightly] and [nightly.*] tables blanked (line numbers kept).
std::string without_nightly_tables(std::string_view text);

}  // namespace abvm
