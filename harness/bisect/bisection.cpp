#include "bisect/bisection.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "bisect/step_experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "plan/looks.hpp"
#include "plan/plan.hpp"
#include "results/directory.hpp"
#include "verdict/look.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

// A step whose kernels cannot be prepared: not an Error of the bisection (the search goes on
// around the step), so not an abvm::Error either.
class StepSkipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The caller's preparer, whose Errors (a patch that does not apply, a kernel that does not build)
// skip the step instead of ending the bisection. Infrastructure errors still end it.
class SkippingPreparer final : public GuestPreparer {
 public:
  explicit SkippingPreparer(GuestPreparer& inner) : inner_(inner) {}
  PreparedGuests prepare(const Experiment& e) override {
    try {
      return inner_.prepare(e);
    } catch (const Error& ex) {
      throw StepSkipped(ex.what());
    }
  }

 private:
  GuestPreparer& inner_;
};

double trial_seconds(const ResultsDir& dir) {
  double s = 0;
  for (const auto& l : read_ledger(dir.ledger())) s += l.seconds;
  return s;
}

// "kernel 3 (unpatched+3) against kernel 0 (unpatched)".
std::string describe(const BisectPlan& plan, const StepQuestion& q) {
  return fmt::format("kernel {} ({}) against kernel {} ({})", q.kernel, kernel_label(plan, q.kernel), q.reference,
                     kernel_label(plan, q.reference));
}

}  // namespace

BisectSetup setup_bisection(const Experiment& e, const fs::path& config_file, const BisectSettings& settings) {
  BisectSetup s{.series = load_bisect_series(e)};
  const int n = static_cast<int>(s.series.patches.size());
  const int max_steps = settings.max_steps.value_or(default_max_steps(n));
  if (max_steps < 1) throw Error(fmt::format("--max-steps {} must be at least 1", max_steps));
  if (settings.max_boots_per_side && *settings.max_boots_per_side < first_look_boots(e)) {
    throw Error(fmt::format("--max-boots {} is less than the {} boots per side every step needs before its first look "
                            "(schedule.boots_per_side in {}): give at least that",
                            *settings.max_boots_per_side, first_look_boots(e), e.source));
  }
  const fs::path config = fs::absolute(config_file);
  BisectPlan& p = s.plan;
  p = {.abvm_version = ABVM_VERSION,
       .experiment = e.name,
       .config = config,
       .config_dir = config.parent_path(),
       .started = utc_iso8601(std::chrono::system_clock::now()),
       .base_recipe = e.a.kernel,
       .tip_recipe = e.b.kernel,
       .base_label = e.a.label,
       .max_steps = max_steps,
       .confidence = e.analysis.confidence,
       .step_confidence = step_confidence(e.analysis.confidence, max_steps),
       .margin = e.analysis.margin,
       .max_boots_per_side = settings.max_boots_per_side,
       .seed = choose_seed(e)};
  for (int i = 0; i < n; ++i) {
    const SeriesEntry& patch = s.series.patches[static_cast<std::size_t>(i)];
    p.patches.push_back({.index = i + 1, .name = patch.name, .sha256 = text_sha256(patch.text), .commit = patch.commit});
  }
  return s;
}

BisectDir start_bisection(const Experiment& e, const BisectSetup& setup, const fs::path& root) {
  const BisectDir dir(create_results_dir(root, e.name + "-bisect", std::chrono::system_clock::now()));
  write_file_atomic(dir.config(), e.source_text);
  write_kernel_recipes(setup.series, dir.kernels());
  write_bisect_plan(dir, setup.plan);
  return dir;
}

Experiment load_bisect_experiment(const BisectDir& dir, const BisectPlan& plan) {
  return load_experiment_text(read_file(dir.config()), plan.config.string(), plan.config_dir);
}

int boots_used(const std::vector<StepRecord>& steps) {
  int n = 0;
  for (const auto& s : steps) n += s.boots_per_side;
  return n;
}

LookDecision step_looks(const Experiment& step) {
  // Shared: a std::function copies what it holds, and every copy must keep the one reader.
  auto looks = std::make_shared<LookDecider>(step);
  return [looks](const ResultsDir& d, double confidence) -> std::optional<std::string> {
    const StepJudgement j = judge_step(looks->analysis(d.root(), confidence));
    if (j.finding == StepFinding::unknown) return std::nullopt;
    return std::string(to_string(j.finding));
  };
}

BisectState bisection_state(const BisectPlan& plan, const std::vector<StepRecord>& steps, int first_look) {
  const bool budget_spent =
      plan.max_boots_per_side && *plan.max_boots_per_side - boots_used(steps) < first_look;
  const auto answers = answers_of(steps);
  return bisect_state({.patches = static_cast<int>(plan.patches.size()), .max_steps = plan.max_steps}, answers,
                      budget_spent);
}

Bisection::Bisection(BisectDir dir, BisectCollaborators collaborators)
    : dir_(std::move(dir)), c_(std::move(collaborators)) {}

GuestDriver& Bisection::driver() {
  if (driver_ == nullptr) driver_ = &c_.connect();
  return *driver_;
}

BisectEnd Bisection::run(const std::string& uri) {
  std::optional<ResultsLock> lock;
  try {
    lock.emplace(dir_.root());
  } catch (const Error&) {
    throw Error(fmt::format("{}: another abvm bisect is using this directory; wait for it to end, or stop it "
                            "(Ctrl-C) and continue with 'abvm bisect --resume {}'",
                            dir_.root().string(), dir_.root().string()));
  }
  BisectPlan plan = read_bisect_plan(dir_);
  if (plan.uri.empty() && !uri.empty()) {
    plan.uri = uri;
    write_bisect_plan(dir_, plan);
  }
  const Experiment e = load_bisect_experiment(dir_, plan);
  BisectEnd end{.steps = read_step_ledger(dir_, [&](const std::string& w) { c_.observer.note(w); })};
  for (end.state = bisection_state(plan, end.steps, first_look_boots(e)); end.state.next;
       end.state = bisection_state(plan, end.steps, first_look_boots(e))) {
    const int step = static_cast<int>(end.steps.size()) + 1;
    std::optional<int> budget;
    if (plan.max_boots_per_side) budget = *plan.max_boots_per_side - boots_used(end.steps);
    c_.observer.note(fmt::format("step {} of at most {}: is {} slower?", step, plan.max_steps,
                                 describe(plan, *end.state.next)));
    auto record = take_measured(e, plan, step, *end.state.next, budget);
    if (!record) record = run_step(e, plan, step, *end.state.next, budget, uri);
    if (!record) {
      end.interrupted = true;
      break;
    }
    append_line_durable(dir_.ledger(), to_step_line(*record));
    c_.observer.note(fmt::format("step {}: {}", step, record->judgement.reason));
    end.steps.push_back(std::move(*record));
    if (c_.step_done) c_.step_done(bisection_state(plan, end.steps, first_look_boots(e)), end.steps);
  }
  end.boots_per_side = boots_used(end.steps);
  return end;
}

// The measured comparison as the step: judged as the step's own looks would judge those results, at
// the level of the step's look after as many blocks (plan/looks.hpp; a step stopped at that look
// would have seen the same data). Not taken (nullopt: the step runs) when it is not this question,
// its block count is no look of the step's schedule, or the step's level does not decide there:
// the night's own looks are at its wider level, and a bisection step must hold its share of the error.
std::optional<StepRecord> Bisection::take_measured(const Experiment& e, const BisectPlan& plan, int step,
                                                   const StepQuestion& q, std::optional<int> budget) {
  if (!c_.measured || step != 1 || !(c_.measured->question == q)) return std::nullopt;
  const ResultsDir rd(c_.measured->results_dir);
  const StepSetup setup{.step = step, .question = q, .seed = step_seed(plan.seed, step), .max_boots_per_side = budget};
  StepRecord r{.step = step, .question = q, .results_dir = fs::relative(rd.root(), dir_.root()).string()};
  try {
    const Experiment measured = load_saved_experiment(rd, read_manifest(rd));
    const Plan done = read_plan(rd);
    const int blocks = done.blocks - done.set_aside_blocks;
    const LookSchedule looks = make_look_schedule(step_experiment(e, dir_, plan, setup));
    const Look* look = look_at(looks, blocks);  // points into `looks`
    if (look == nullptr) {
      c_.observer.note(fmt::format("step {}: the comparison measured in {} stopped after {} blocks, no look of the "
                                   "step's schedule; the step runs",
                                   step, rd.root().string(), blocks));
      return std::nullopt;
    }
    r.judgement = judge_step(LookDecider(measured).analysis(rd.root(), look->confidence));
    if (r.judgement.finding == StepFinding::unknown) {
      c_.observer.note(fmt::format("step {}: the comparison measured in {} does not decide at the step's level "
                                   "({:.4g} % after {} blocks); the step measures it again",
                                   step, rd.root().string(), look->confidence * 100, blocks));
      return std::nullopt;
    }
    r.boots_per_side = done.blocks;
    r.confidence = look->confidence;
    r.stop_reason = fmt::format("taken from the comparison already measured in {}, at the step's look after {} blocks",
                                rd.root().string(), blocks);
    r.trial_seconds = trial_seconds(rd);
  } catch (const Error& ex) {
    c_.observer.note(fmt::format("step {}: the comparison measured in {} cannot be read ({}); the step runs",
                                 step, rd.root().string(), ex.what()));
    return std::nullopt;
  }
  return r;
}

// A new step's results directory; a step begun by an earlier session goes on in its own, as it
// was set up then (its config.toml is what it runs).
ResultsDir Bisection::start_step(const Experiment& e, const BisectPlan& plan, const StepSetup& setup,
                                 const std::string& uri) {
  const Experiment se = step_experiment(e, dir_, plan, setup);
  return start_run(se, make_plan(se, setup.seed), dir_.steps(), plan.config, uri);
}

std::optional<StepRecord> Bisection::run_step(const Experiment& e, const BisectPlan& plan, int step,
                                              const StepQuestion& q, std::optional<int> budget, const std::string& uri) {
  const StepSetup setup{.step = step, .question = q, .seed = step_seed(plan.seed, step), .max_boots_per_side = budget};
  const auto existing = dir_.step_dirs(e.name, step);
  const bool resuming = !existing.empty();
  const ResultsDir rd = resuming ? ResultsDir(existing.back()) : start_step(e, plan, setup, uri);
  const Experiment se = load_saved_experiment(rd, read_manifest(rd));
  SkippingPreparer preparer(c_.preparer);
  Runner runner(se, rd,
                {.connect = [this] { return std::vector<HostDriver>{{.name = "", .driver = &driver()}}; },
                 .preparer = preparer,
                 .observer = c_.observer,
                 .decide = step_looks(se),
                 .stop_requested = c_.stop_requested});
  StepRecord r{.step = step, .question = q, .results_dir = fs::relative(rd.root(), dir_.root()).string()};
  RunEnd run;
  try {
    run = runner.run({.resuming = resuming, .uri = uri});
  } catch (const StepSkipped& ex) {
    r.detail = ex.what();
    r.judgement.reason = fmt::format("unknown: the step's kernels could not be prepared ({})", ex.what());
    return r;
  } catch (const InfraError& ex) {
    throw InfraError(fmt::format("step {} ({}): {}; the bisection goes on from there with: abvm bisect --resume {}",
                                 step, describe(plan, q), ex.what(), dir_.root().string()));
  }
  if (run.status == RunStatus::running) return std::nullopt;
  // A workload that cannot work fails every step alike: the bisection cannot go on.
  if (run.status == RunStatus::failed) throw InfraError(fmt::format("step {} ({}): {}", step, describe(plan, q), run.failure));
  try {
    r.judgement = judge_step(c_.finish(se, rd, run));
  } catch (const Error& ex) {
    r.detail = ex.what();
    r.judgement.reason = fmt::format("unknown: nothing to analyse ({})", ex.what());
  }
  r.boots_per_side = read_plan(rd).blocks;
  r.confidence = run.final_confidence;
  r.stop_reason = run.stop_reason;
  r.trial_seconds = trial_seconds(rd);
  return r;
}

}  // namespace abvm
