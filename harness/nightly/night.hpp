#pragma once
// One night of `abvm nightly`: the branch head (B) against the last good commit (A), both built
// from one kept build tree, run co-scheduled with the experiment's sequential stopping; a
// regression bisected over the commits between them within the file's budgets; every drift_every
// nights the head also against the last good commit of drift_every nights before; one line of the
// history (history.hpp) for the night.
//
// The night's directory, <history>/nights/<B's short sha>-<UTC time>/:
//   night.json              the night's history line
//   experiment.toml         the night's A/B experiment (the file's, with the night's kernels)
//   kernels/kernel-<k>.toml A (k = 0) plus the first k commits: the recipes abvm bisect writes,
//                           of nightly.tree at one anchor commit with A as one patch on it (0000);
//                           the anchor is kept from night to night (history.hpp), so that every
//                           night builds in the same kept build tree and recompiles only what changed
//   run/<experiment>-<time>/  the A/B run (journal, analysis.json, report.html)
//   bisect/<experiment>-bisect-<time>/  the bisection, when the night regressed
//   drift/                  the drift comparison's kernels, experiment and run, when one was due
//
// Exit codes are abvm run's: 0 no change or improvement, 1 regression (the night's or the
// drift's), 4 inconclusive, 3 infrastructure, 130 interrupted; 2 (bad input) is thrown as Error
// before anything is recorded. Only 0 and 4 make B the last good commit.
#include <chrono>
#include <functional>
#include <string>

#include "bisect/bisection.hpp"
#include "nightly/history.hpp"
#include "nightly/settings.hpp"
#include "run/runner.hpp"

namespace abvm {

struct NightCollaborators {
  std::function<GuestDriver&()> connect;  // called once, when the first run needs guests
  GuestPreparer& preparer;
  RunObserver& observer;
  StepAnalysis finish;                    // a finished results directory's analysis, its outputs written
  std::function<LookDecision(const Experiment&)> looks;  // a run's sequential looks
  std::function<bool()> stop_requested;
  // The bisection's wall-time budget is measured on it.
  std::function<std::chrono::steady_clock::time_point()> clock = [] { return std::chrono::steady_clock::now(); };
};

struct NightOptions {
  std::string uri;                        // recorded in run.json and bisect-plan.json
  bool reanchor = false;                  // nightly.base again, not the history's anchor (history.hpp)
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

struct NightEnd {
  NightRecord record;
  int exit_code = 0;
};

// Runs tonight. Throws Error for bad input (nothing recorded) and InfraError after recording the
// night as an infrastructure failure.
NightEnd run_night(const NightlyExperiment& x, const History& history, const NightOptions& options,
                   const NightCollaborators& collaborators);

}  // namespace abvm
