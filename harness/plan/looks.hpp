#pragma once
// Sequential stopping: when the orchestrator may look at the data, and how confident each
// look's interval must be so that the experiment as a whole keeps its error rate although it
// looks several times.
//
// Looks happen after boots_per_side blocks, then after every look_every more blocks, up to
// max_boots_per_side (the last look is at the budget even if it is not a multiple). With
// alpha = 1 - analysis.confidence, information fractions t_k = boots at look k / budget and a
// spending function alpha(t), look k may spend alpha(t_k) - alpha(t_{k-1}):
//   obrien-fleming    Lan-DeMets group-sequential boundaries (plan/group_sequential.hpp) with the
//   pocock            O'Brien-Fleming-type or Pocock-type spending function: look k's boundary
//                     c_k accounts for the correlation between looks, and its nominal level
//                     2 (1 - Phi(c_k)) is wider than its increment. O'Brien-Fleming-type asks
//                     early looks for overwhelming evidence and keeps the last look close to the
//                     fixed-sample level (K = 5, 95 %: 95.8 %); Pocock-type gives every look
//                     about the same level (K = 5: 98.3 %), so clear effects stop earlier.
//   pocock-spending   each look at its increment of the Pocock-type function as its own level
//   bonferroni        each look at alpha / K
//                     (these two hold by the union bound whatever the correlation: conservative).
// The look's level is the level of the effect interval, so it is also the level of the
// equivalence decision (the two one-sided tests against the margin at the same boundary: one
// side of a two-sided boundary crosses with at most half the two-sided rate).
// Stopping early (verdict reached, wall-time budget spent) only drops later looks: still valid.
// Without sequential stopping there is one look at the full confidence.
#include <string>
#include <vector>

#include "config/experiment.hpp"

namespace abvm {

struct Look {
  int index = 0;            // 0-based
  int boots_per_side = 0;   // look after this many blocks
  double fraction = 0;      // information fraction t_k = boots_per_side / budget
  double spent = 0;         // the error rate this look may spend: alpha(t_k) - alpha(t_{k-1})
  double boundary = 0;      // c_k: the look decides when |Z_k| >= c_k
  double alpha = 0;         // this look's nominal two-sided level 2 (1 - Phi(c_k)) (>= spent)
  double confidence = 0;    // 1 - alpha: the level this look's interval must use
};

struct LookSchedule {
  LookCorrection correction = LookCorrection::obrien_fleming;
  double overall_alpha = 0;
  std::vector<Look> looks;
};

// Throws std::invalid_argument for impossible arguments (the config loader rules them out).
LookSchedule make_look_schedule(int initial_boots, int look_every, int max_boots, double confidence,
                                LookCorrection correction);

// From the experiment's schedule and analysis settings.
LookSchedule make_look_schedule(const Experiment& experiment);

// "look 2 of 5 at nominal level 99.92 % (boundary 3.357), overall error rate 5 %": what the
// progress notes, the stop reason in run.json and --dry-run say of a look.
std::string describe_look(const LookSchedule& schedule, const Look& look);

// The look made after `boots_per_side` blocks, or nullptr when that is not a look.
const Look* look_at(const LookSchedule& schedule, int boots_per_side);

}  // namespace abvm
