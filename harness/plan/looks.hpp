#pragma once
// Sequential stopping: when the orchestrator may look at the data, and how confident each
// look's interval must be so that the experiment as a whole keeps its error rate although it
// looks several times.
//
// Looks happen after boots_per_side blocks, then after every look_every more blocks, up to
// max_boots_per_side (the last look is at the budget even if it is not a multiple). With K
// planned looks and alpha = 1 - analysis.confidence, look k uses its own alpha_k with
// sum(alpha_k) = alpha, so by the union bound the chance of any false verdict over all looks is
// at most alpha, whatever the correlation between looks (conservative; no normality needed):
//   bonferroni        alpha_k = alpha / K
//   pocock-spending   alpha_k = A(t_k) - A(t_{k-1}), A(t) = alpha * ln(1 + (e - 1) t), the
//                     Lan-DeMets Pocock-type spending function, t_k = boots at look k / budget.
//                     It spends more at early looks than Bonferroni does, so a clear effect can
//                     stop early, and needs no fixed K to be valid when a run stops early.
// Stopping early (verdict reached, wall-time budget spent) only drops later looks: still valid.
// Without sequential stopping there is one look at the full confidence.
#include <vector>

#include "config/experiment.hpp"

namespace abvm {

struct Look {
  int index = 0;            // 0-based
  int boots_per_side = 0;   // look after this many blocks
  double alpha = 0;         // this look's two-sided error rate
  double confidence = 0;    // 1 - alpha: the level this look's interval must use
};

struct LookSchedule {
  LookCorrection correction = LookCorrection::pocock_spending;
  double overall_alpha = 0;
  std::vector<Look> looks;
};

// Throws std::invalid_argument for impossible arguments (the config loader rules them out).
LookSchedule make_look_schedule(int initial_boots, int look_every, int max_boots, double confidence,
                                LookCorrection correction);

// From the experiment's schedule and analysis settings.
LookSchedule make_look_schedule(const Experiment& experiment);

// The look made after `boots_per_side` blocks, or nullptr when that is not a look.
const Look* look_at(const LookSchedule& schedule, int boots_per_side);

}  // namespace abvm
