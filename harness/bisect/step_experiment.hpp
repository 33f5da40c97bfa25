#pragma once
// The experiment one bisection step runs: the bisect experiment itself with side A booting the
// reference kernel and side B the kernel asked about (their recipes under the bisection's
// kernels/), each labelled by its kernel, and the step's name, seed, level and boot budget. It is
// an ordinary experiment: written as the step's config.toml, `abvm run --resume` and `abvm
// analyze` read it as any other, and everything else (workloads, design, margin, metrics,
// sequential looks) is the bisect experiment's own.
#include <cstdint>
#include <optional>
#include <string>

#include "bisect/directory.hpp"
#include "config/experiment.hpp"

namespace abvm {

struct StepSetup {
  int step = 0;                           // 1-based
  StepQuestion question;
  std::uint64_t seed = 0;                 // of the step's trial order
  // The step's budget in boots per side (what is left of the bisection's), or nullopt for the
  // experiment's own. Never below its boots_per_side (the caller ends the bisection first).
  std::optional<int> max_boots_per_side;
};

// The seed of step `step`'s trial order, from the bisection's seed: distinct per step, nonzero,
// and within the 63 bits schedule.seed takes.
std::uint64_t step_seed(std::uint64_t bisect_seed, int step);

// The step's experiment file (TOML). Comments of the bisect experiment are not kept.
std::string step_experiment_text(const Experiment& bisect_experiment, const BisectDir& dir, const BisectPlan& plan,
                                 const StepSetup& setup);

// The same, loaded: relative paths in it (a disk image, fio job files) resolve against the bisect
// experiment's directory, as they did there.
Experiment step_experiment(const Experiment& bisect_experiment, const BisectDir& dir, const BisectPlan& plan,
                           const StepSetup& setup);

// The boots per side a step needs before its first look: the experiment's boots_per_side.
int first_look_boots(const Experiment& experiment);

}  // namespace abvm
