#include "cli/bisect.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bisect/bisection.hpp"
#include "bisect/report.hpp"
#include "bisect/step_experiment.hpp"
#include "cli/run_session.hpp"
#include "config/experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/resources.hpp"
#include "core/vocabulary.hpp"
#include "plan/looks.hpp"
#include "report/html.hpp"
#include "run/interrupt.hpp"
#include "run/prepare.hpp"

namespace abvm::cli {
namespace {
namespace fs = std::filesystem;

struct BisectArgs {
  std::string config;
  std::string resume;
  bool dry_run = false;
  std::string results_root;
  std::string connect;
  int max_steps = 0;   // 0: the default for the series' length
  int max_boots = 0;   // 0: no budget over the steps beyond each step's own
};


BisectSettings settings_of(const BisectArgs& args) {
  BisectSettings s;
  if (args.max_steps != 0) s.max_steps = args.max_steps;
  if (args.max_boots != 0) s.max_boots_per_side = args.max_boots;
  return s;
}

// The series, the error budget and the first step's looks, from the code that runs them.
int dry_run(const Experiment& e, const BisectSetup& setup, const fs::path& root) {
  const BisectPlan& p = setup.plan;
  std::string out = fmt::format("abvm bisect --dry-run {}: nothing is built or booted.\n\n== series ==\n", e.source);
  out += fmt::format("base (kernel 0): {} ({})\n", p.base_recipe, p.base_label);
  for (const auto& patch : p.patches) {
    out += fmt::format("  patch {:>2}: {}{} -> kernel {} ({})\n", patch.index, patch.name,
                       patch.commit.empty() ? "" : " (commit " + short_sha(patch.commit) + ")", patch.index,
                       kernel_label(p, patch.index));
  }
  out += fmt::format(
      "\n== error budget ==\n{:.0f} % for the whole bisection, Bonferroni over at most {} steps: each step at "
      "{:.4f} %, margin {:.0f} %{}\n",
      p.confidence * 100, p.max_steps, p.step_confidence * 100, p.margin * 100,
      p.max_boots_per_side ? fmt::format("; at most {} boots per side over all steps", *p.max_boots_per_side) : "");
  const BisectDir dir(fs::absolute(root) / fmt::format("{}-bisect-<timestamp>", e.name));
  const int n = static_cast<int>(p.patches.size());
  const Experiment first = step_experiment(e, dir, p, {.step = 1, .question = {.kernel = n, .reference = 0}, .seed = 1});
  out += fmt::format("\n== step 1: is kernel {} (the whole series) slower than kernel 0? ==\n", n);
  if (first.schedule.sequential.enabled) {
    const LookSchedule looks = make_look_schedule(first);
    for (const auto& l : looks.looks) {
      out += fmt::format("  {:>5} boots per side: {}\n", l.boots_per_side, describe_look(looks, l));
    }
  } else {
    out += fmt::format("  {} boots per side, one analysis at {:.4f} %\n", first.schedule.boots_per_side,
                       first.analysis.confidence * 100);
  }
  out += "\n== step 1's experiment (each step's is the same with its kernels, seed and budget) ==\n" +
         step_experiment_text(e, dir, p, {.step = 1, .question = {.kernel = n, .reference = 0}, .seed = 1});
  std::cout << out << std::flush;
  return 0;
}

void write_outputs(const BisectDir& dir, const BisectReport& report) {
  write_file_atomic(dir.report_json(), bisect_json_text(report));
  write_file_atomic(dir.summary(), bisect_summary(report));
  write_file_atomic(dir.report_html(), bisect_html(report, load_html_template()));
}

int execute(const BisectDir& dir, const BisectArgs& args) {
  const BisectPlan plan = read_bisect_plan(dir);
  install_interrupt_handlers();
  const std::string uri =
      !args.connect.empty() ? args.connect : (!plan.uri.empty() ? plan.uri : LibvirtDriver::embedded_uri());
  TerminalObserver observer;
  BuildingPreparer preparer([&](const std::string& s) { observer.note(s); });
  std::unique_ptr<LibvirtDriver> driver;
  const StepAnalysis finish = [](const Experiment& e, const ResultsDir& d, const RunEnd& end) {
    return write_run_outputs(e, d, end).analysis;
  };
  Bisection bisection(dir, {.connect = [&]() -> GuestDriver& { return *(driver = connect_libvirt(uri, observer)); },
                            .preparer = preparer,
                            .observer = observer,
                            .finish = finish,
                            .stop_requested = [] { return interrupt_requested(); },
                            .step_done = [&](const BisectState& state, const std::vector<StepRecord>& steps) {
                              write_outputs(dir, {.plan = plan, .steps = steps, .state = state});
                            }});
  const BisectEnd end = bisection.run(uri);
  const BisectReport report{.plan = plan, .steps = end.steps, .state = end.state, .interrupted = end.interrupted};
  write_outputs(dir, report);
  std::cout << bisect_summary(report) << std::flush;
  say(fmt::format("report: {}", dir.report_html().string()));
  say(fmt::format("bisection: {}", dir.root().string()));
  if (end.interrupted) {
    say(fmt::format("interrupted (signal {}): the running guest was destroyed; {} step(s) done are kept in {}",
                    interrupt_signal(), end.steps.size(), dir.root().string()));
    say(fmt::format("continue with: abvm bisect --resume {}", dir.root().string()));
    return static_cast<int>(ExitCode::interrupted);
  }
  return bisect_exit_code(end.state);
}

int bisect_command(const BisectArgs& args) {
  if (args.max_steps < 0 || args.max_boots < 0) throw Error("--max-steps and --max-boots take a positive number");
  if (!args.resume.empty()) {
    if (!args.config.empty()) throw Error("give either CONFIG or --resume DIR, not both");
    if (args.dry_run) throw Error("--dry-run does not apply to --resume");
    if (args.max_steps != 0 || args.max_boots != 0) {
      throw Error("--max-steps and --max-boots are fixed when a bisection starts (its error budget); a resumed "
                  "bisection keeps them");
    }
    return execute(BisectDir::open(fs::absolute(args.resume)), args);
  }
  if (args.config.empty()) throw Error("nothing to bisect: give an experiment file (abvm bisect CONFIG) or --resume DIR");
  const Experiment e = load_experiment(args.config);
  const BisectSetup setup = setup_bisection(e, args.config, settings_of(args));
  const fs::path root = fs::absolute(args.results_root.empty() ? default_results_root() : fs::path(args.results_root));
  if (args.dry_run) return dry_run(e, setup, root);
  const BisectDir dir = start_bisection(e, setup, root);
  say(fmt::format("bisection directory: {} ({} patches, each step at {:.4f} %, seed {})", dir.root().string(),
                  setup.plan.patches.size(), setup.plan.step_confidence * 100, setup.plan.seed));
  return execute(dir, args);
}

}  // namespace

Command add_bisect(CLI::App& app) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* sub = app.add_subcommand(
      "bisect", "Find the patch of side B's series that makes it slower than side A (its base), step by step");
  sub->footer(
      "CONFIG is an experiment whose side B kernel is a recipe with a patch series and whose side A kernel is its "
      "base (the same recipe without those patches); the sides differ in nothing else. abvm bisect first confirms "
      "that the whole series is slower than the base, then bisects it: each step is an abvm run of its own (journal, "
      "resume, sequential looks, analysis.json, report.html) under DIR/steps/, at the level 1 - (1 - confidence) / "
      "max-steps, so the whole bisection keeps the experiment's error rate. A step that stays inconclusive leaves a "
      "range of patches. When a culprit is found, the patches after it are checked for a further share of their own "
      "against the culprit's kernel.\n"
      "Results go to results/<experiment>-bisect-<UTC time>/: bisect.json, bisect.html, summary.txt, steps.jsonl, "
      "kernels/ and steps/. Ctrl-C stops the running step and keeps everything; continue with 'abvm bisect --resume "
      "DIR'.\n"
      "Exit codes: 0 the series is not slower by more than the margin, 1 it is (a culprit or the range holding it "
      "is named), 2 usage or input error, 3 infrastructure error, 4 not settled, 130 interrupted.");
  sub->add_option("config", args->config, "Experiment file (TOML), e.g. configs/virtio-dma-api-bisect.toml");
  sub->add_option("--resume", args->resume, "Continue the interrupted bisection in this directory");
  sub->add_flag("--dry-run", args->dry_run, "Print the series, the error budget and the first step; boot nothing");
  sub->add_option("--results-dir", args->results_root, "Where results/<experiment>-bisect-<time>/ is created")
      ->default_str("./results");
  sub->add_option("--connect", args->connect, "libvirt URI (default: the embedded QEMU driver, no daemon)");
  sub->add_option("--max-steps", args->max_steps,
                  "Steps the bisection may run, over which its error rate is shared (default 3 + 2 ceil(log2 N))");
  sub->add_option("--max-boots", args->max_boots,
                  "Budget in boots per side over all steps (default: none beyond each step's own)");
  return {sub, [args] { return bisect_command(*args); }};
}

}  // namespace abvm::cli
