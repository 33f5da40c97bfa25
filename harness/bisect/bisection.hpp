#pragma once
// The bisect stage's front door: a bisect experiment to a finished bisection directory.
//
//   start_bisection()   creates results/<experiment>-bisect-<time>/ with config.toml, the kernel
//                       recipes of every step, bisect-plan.json
//   Bisection::run()    holds the lock; replays the ledger through the strategy (strategy.hpp);
//                       runs each step it asks for as an abvm run of its own (run/runner.hpp: the
//                       same journal, resume, faults and looks; the step's analysis, analysis.json
//                       and report.html by the caller's `finish`), appends the step's ledger line,
//                       and rewrites bisect.json, bisect.html and summary.txt after every step.
//                       A first question already measured (BisectCollaborators::measured, the
//                       night's own comparison) is judged from those results instead of run again.
//                       A step interrupted (Ctrl-C) or whose machine failed is resumed by the next
//                       session, which does not run finished steps again.
//
// Its collaborators are parameters, as the runner's are: the connection (made once, shared by the
// steps), the preparer (kernel builds), the observer, the step's final analysis and outputs (a later
// stage's), the stop request. A step's looks are `abvm run`'s (verdict/look.hpp LookDecider: the
// journal read as it grows, the verdict-deciding analysis alone), judged by the step's finding
// (step_looks). A step whose kernels cannot be prepared (a patch that does not apply or does not
// build: an Error of the preparer) or whose runs give nothing to analyse is `unknown`, as
// `git bisect skip` would leave it, with the reason; the search goes on around it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bisect/directory.hpp"
#include "bisect/series.hpp"
#include "bisect/step_experiment.hpp"
#include "config/experiment.hpp"
#include "run/runner.hpp"
#include "verdict/analysis.hpp"

namespace abvm {

// The experiment's analysis of a step's finished results directory as its run ended (`end`: the
// confidence it decided with, its stop reason and pace), with its outputs written from what the
// run holds in memory (cli/run_session write_run_outputs()); Error when there is nothing to analyse.
using StepAnalysis = std::function<Analysis(const Experiment& step, const ResultsDir& dir, const RunEnd& end)>;

// A comparison of two of the bisection's kernels that was already measured elsewhere: the nightly
// job's own run of the head against the last good commit, which is the bisection's first question.
struct MeasuredComparison {
  StepQuestion question;
  std::filesystem::path results_dir;      // a finished abvm run of that question (its config.toml)
};

struct BisectCollaborators {
  std::function<GuestDriver&()> connect;  // called once, when the first step needs guests
  GuestPreparer& preparer;
  RunObserver& observer;
  StepAnalysis finish;                    // at a step's end: writes analysis.json, summary.txt, report.html
  std::function<bool()> stop_requested;
  // Called after every finished step with the state so far (the caller rewrites the reports).
  std::function<void(const BisectState&, const std::vector<StepRecord>&)> step_done;
  // Taken as step 1 when the bisection first asks its question and its results decide at the look
  // that step would make after as many blocks (take_measured); otherwise the step runs as any other.
  std::optional<MeasuredComparison> measured;
};

struct BisectSettings {
  std::optional<int> max_steps;           // default: default_max_steps(N)
  std::optional<int> max_boots_per_side;  // over all steps; default: each step's own budget only
};

// What a bisection is about, checked: the series and the plan a new bisection would write.
struct BisectSetup {
  BisectSeries series;
  BisectPlan plan;
};

// Checks the experiment (bisect/series.hpp) and the settings and computes the error budget.
// Throws Error naming the file, line and key, or the option.
BisectSetup setup_bisection(const Experiment& experiment, const std::filesystem::path& config_file,
                            const BisectSettings& settings);

// Creates the bisection directory under `root` (results/<experiment>-bisect-<time>/): config.toml,
// kernels/, bisect-plan.json.
BisectDir start_bisection(const Experiment& experiment, const BisectSetup& setup, const std::filesystem::path& root);

struct BisectEnd {
  BisectState state;
  std::vector<StepRecord> steps;
  bool interrupted = false;               // a step was stopped: resume to go on
  int boots_per_side = 0;                 // over every step so far
};

class Bisection {
 public:
  Bisection(BisectDir dir, BisectCollaborators collaborators);

  // Runs what is left of the bisection. Throws Error / InfraError; an InfraError in a step says
  // how to resume.
  BisectEnd run(const std::string& uri);

 private:
  ResultsDir start_step(const Experiment& bisect_experiment, const BisectPlan& plan, const StepSetup& setup,
                        const std::string& uri);
  std::optional<StepRecord> run_step(const Experiment& bisect_experiment, const BisectPlan& plan, int step,
                                     const StepQuestion& q, std::optional<int> budget, const std::string& uri);
  std::optional<StepRecord> take_measured(const Experiment& bisect_experiment, const BisectPlan& plan, int step,
                                          const StepQuestion& q, std::optional<int> budget);
  GuestDriver& driver();

  BisectDir dir_;
  BisectCollaborators c_;
  GuestDriver* driver_ = nullptr;
};

// The bisect experiment as it was given, read back from the directory (its relative paths
// resolve against the original file's directory).
Experiment load_bisect_experiment(const BisectDir& dir, const BisectPlan& plan);

// The state of a bisection from its plan and ledger, with the boots it used and whether its
// boot budget allows another step.
BisectState bisection_state(const BisectPlan& plan, const std::vector<StepRecord>& steps,
                            int first_look_boots);

// Boots per side used by the steps of a ledger.
int boots_used(const std::vector<StepRecord>& steps);

// A step's looks, one LookDecider for all of them (`step` must outlive it): the step's finding
// (bisect/classify.hpp) of the verdict-deciding analysis, nullopt while unknown. It finds at each
// look what judge_step() finds of the full analysis of the same results at the same confidence.
LookDecision step_looks(const Experiment& step);

}  // namespace abvm
