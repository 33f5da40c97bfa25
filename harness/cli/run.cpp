#include "cli/run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/decision_options.hpp"
#include "cli/report.hpp"
#include "cli/results_analysis.hpp"
#include "config/experiment.hpp"
#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "core/resources.hpp"
#include "guest/domain_xml.hpp"
#include "guest/job.hpp"
#include "guest/libvirt_driver.hpp"
#include "plan/calibration.hpp"
#include "plan/looks.hpp"
#include "plan/plan.hpp"
#include "report/json_report.hpp"
#include "report/junit.hpp"
#include "report/terminal.hpp"
#include "results/directory.hpp"
#include "run/interrupt.hpp"
#include "run/prepare.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {
namespace {
namespace fs = std::filesystem;

struct RunArgs {
  std::string config;
  std::string resume;
  bool dry_run = false;
  std::string results_root;
  std::string connect;
  bool keep_scratch = false;
  std::string junit;
};

void say(const std::string& text) { std::fprintf(stderr, "abvm: %s\n", text.c_str()); }

// The terminal as a run's observer: one progress line rewritten in place on a terminal, plain
// lines in logs.
class TerminalObserver final : public RunObserver {
 public:
  void note(const std::string& text) override { printer_.message(text); }
  void progress(const ProgressState& state) override { printer_.update(state); }
  void finish() override { printer_.finish(); }

 private:
  ProgressPrinter printer_{stderr, ::isatty(STDERR_FILENO) != 0};
};

// ---- dry run -------------------------------------------------------------------------------

// What the guests would boot, with the paths that exist only once the run starts shown as
// placeholders in angle brackets.
PreparedGuests placeholder_guests(const Experiment& e) {
  PreparedGuests g;
  g.base_image = abvm_cache_dir() / "images" / "<guest image>";
  for (Side s : kSides) {
    const SideSpec& side = e.side(s);
    const fs::path kernel = abvm_cache_dir() / "kernels" / fmt::format("<build of {}>", side.kernel) / "vmlinuz";
    (s == Side::a ? g.a : g.b) = side_boot(side, kernel, "");
  }
  return g;
}

std::string describe_looks(const Experiment& e) {
  if (!e.schedule.sequential.enabled) return "";
  const LookSchedule looks = make_look_schedule(e);
  std::string out = fmt::format("\nsequential stopping ({}), the looks after each block count:\n",
                                to_string(looks.correction));
  for (const auto& l : looks.looks) {
    out += fmt::format("  {:>5} boots per side: {}\n", l.boots_per_side, describe_look(looks, l));
  }
  return out;
}

// The plan, and each side's first trial's domain XML from the code that boots trials
// (run/orchestrator.hpp trial_domain), then the guest job.
int dry_run(const Experiment& e, const fs::path& results_root) {
  const Plan plan = make_plan(e, e.schedule.seed != 0 ? e.schedule.seed : 1);
  std::string out = fmt::format("abvm run --dry-run {}: nothing is booted; no libvirt connection is made.\n", e.source);
  if (e.schedule.seed == 0) {
    out += "seed: schedule.seed = 0, so a real run picks a fresh seed (recorded in plan.json); shown with seed 1\n";
  }
  out += "\n== plan ==\n" + describe_plan(plan) + describe_looks(e);
  const ResultsDir dir(fs::absolute(results_root) / fmt::format("{}-<timestamp>", e.name));
  const fs::path scratch = e.disk.path.empty() ? dir.scratch_disk() : e.disk.path;
  const ExecutionSpec spec =
      execution_spec(e, placeholder_guests(e), dir, scratch, e.guest.accelerator.value_or(Accelerator::tcg));
  for (Side s : kSides) {
    const auto first = std::find_if(plan.trials.begin(), plan.trials.end(), [&](const Trial& t) { return t.side == s; });
    if (first == plan.trials.end()) continue;
    const SideSpec& side = e.side(s);
    out += fmt::format("\n== side {} ({}): kernel recipe '{}', trial {} ==\n", to_string(s), side.label, side.kernel,
                       first->id);
    if (!e.guest.accelerator) out += "(accelerator: auto, decided by a KVM probe boot at run time)\n";
    out += domain_xml(trial_domain(spec, *first));
  }
  const GuestJob job{.trial_id = plan.trials.empty() ? "t0000" : plan.trials[0].id,
                     .nonce = "0000000000000000",  // a fresh random nonce per boot at run time
                     .workloads = e.workloads};
  out += "\n== guest job (appended to the initramfs of every trial; trial id and nonce vary) ==\n";
  out += serialise_job(job);
  std::cout << out << std::flush;
  return 0;
}

// ---- analysis ------------------------------------------------------------------------------

// The end of every run: analysis.json, summary.txt, the terminal summary, report.html, JUnit.
// The analysis is saved first: a report that cannot be written loses nothing gathered.
int finish_run(const Experiment& e, const ResultsDir& dir, double confidence, const RunArgs& args) {
  const Decision d = decide(e, dir, confidence);
  write_file_atomic(dir.analysis(), d.json_text);
  write_file_atomic(dir.summary(), d.summary);
  std::cout << (::isatty(STDOUT_FILENO) != 0
                    ? terminal_report(d.analysis, {.a_label = e.a.label, .b_label = e.b.label, .color = true,
                                                   .seconds_per_block = d.seconds_per_block})
                    : d.summary)
            << std::flush;
  const fs::path report = write_results_dir_report(dir.root());
  if (!args.junit.empty()) {
    write_file_atomic(args.junit, junit_report(nlohmann::json::parse(d.json_text), {.suite = e.name}));
  }
  say(fmt::format("report: {}", report.string()));
  say(fmt::format("results: {}", dir.root().string()));
  return exit_code_for(d.analysis.verdict);
}

// ---- the run -------------------------------------------------------------------------------

// The host's design calibration (plan/calibration.hpp) against the experiment's budget.
void warn_about_budget(const Experiment& e) {
  if (const auto calibration = read_calibration(abvm_cache_dir() / "calibration.json")) {
    if (const auto warning = budget_warning(e, *calibration, host_name())) say("warning: " + *warning);
  }
}

// The libvirt connection: --connect, else the one the run used before, else the embedded driver.
// A run that used the embedded driver resumes with it, in whatever root is free now: the private
// root of a run that found the shared one busy went with its process.
std::string connection_uri(const RunArgs& args, const RunManifest& manifest) {
  if (!args.connect.empty()) return args.connect;
  if (!manifest.uri.empty() && !manifest.uri.starts_with("qemu:///embed")) return manifest.uri;
  return LibvirtDriver::embedded_uri();
}

// Connects and removes what a killed abvm process left running. libvirt may still be
// reconnecting to those guests (it then refuses with "cannot acquire state change lock"): that
// must not stop a --resume, since the new trials use domains of their own names.
std::unique_ptr<LibvirtDriver> connect_libvirt(const std::string& uri, RunObserver& observer) {
  observer.note(fmt::format("connecting to {} ...", uri));
  auto driver = std::make_unique<LibvirtDriver>(uri);
  try {
    for (const auto& name : driver->destroy_leftovers()) observer.note("destroyed leftover domain " + name);
  } catch (const InfraError& ex) {
    observer.note(fmt::format("warning: {}; continuing (list running domains with 'virsh -c {} list')", ex.what(), uri));
  }
  return driver;
}

int execute(const Experiment& e, const ResultsDir& dir, const RunArgs& args, bool resuming) {
  const RunManifest manifest = read_manifest(dir);
  if (manifest.status != RunStatus::running) {
    say(fmt::format("{}: every trial is done ({}); analysing again", dir.root().string(), to_string(manifest.status)));
    return finish_run(e, dir, run_confidence(e, manifest), args);
  }
  install_interrupt_handlers();
  const std::string uri = connection_uri(args, manifest);
  TerminalObserver observer;
  BuildingPreparer preparer([&](const std::string& s) { observer.note(s); });
  std::unique_ptr<LibvirtDriver> driver;
  const LookDecision look = [&](const ResultsDir& d, double confidence) -> std::optional<std::string> {
    const Verdict v = decide(e, d, confidence).analysis.verdict;
    if (v == Verdict::inconclusive) return std::nullopt;
    return std::string(to_string(v));
  };
  Runner runner(e, dir,
                {.connect = [&]() -> GuestDriver& { return *(driver = connect_libvirt(uri, observer)); },
                 .preparer = preparer,
                 .observer = observer,
                 .decide = look,
                 .stop_requested = [] { return interrupt_requested(); }});
  const RunEnd end = runner.run({.resuming = resuming, .keep_scratch = args.keep_scratch, .uri = uri});
  if (end.status == RunStatus::running) {
    say(fmt::format("interrupted (signal {}): the running guest was destroyed; {} trials done are kept in {}",
                    interrupt_signal(), end.trials_done, dir.root().string()));
    say(fmt::format("continue with: abvm run --resume {}", dir.root().string()));
    return static_cast<int>(ExitCode::interrupted);
  }
  if (!end.stop_reason.empty()) say("sequential stopping: " + end.stop_reason);
  return finish_run(e, dir, end.final_confidence, args);
}

int run_command(const RunArgs& args) {
  if (!args.resume.empty()) {
    if (!args.config.empty()) throw Error("give either CONFIG or --resume DIR, not both");
    if (args.dry_run) throw Error("--dry-run does not apply to --resume");
    // Absolute: the guests get paths inside it, and libvirt takes absolute paths only.
    const ResultsDir dir = ResultsDir::open_run(fs::absolute(args.resume));
    return execute(load_saved_experiment(dir, read_manifest(dir)), dir, args, true);
  }
  if (args.config.empty()) throw Error("nothing to run: give an experiment file (abvm run CONFIG) or --resume DIR");
  const Experiment e = load_experiment(args.config);
  warn_about_budget(e);
  const fs::path root = fs::absolute(args.results_root.empty() ? default_results_root() : fs::path(args.results_root));
  if (args.dry_run) return dry_run(e, root);
  const std::uint64_t seed = choose_seed(e);
  const ResultsDir dir = start_run(e, make_plan(e, seed), root, args.config, args.connect);
  say(fmt::format("results directory: {} (seed {})", dir.root().string(), seed));
  return execute(e, dir, args, false);
}

}  // namespace

Command add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "Run an A/B experiment on real guests (QEMU through libvirt) and decide");
  sub->footer(
      "Results go to results/<experiment>-<UTC time>/ under the working directory: config, plan and seed, "
      "environment, kernel and image identities, journal.jsonl (one line per run), trials/<id>/ (console, domain "
      "XML, raw output), analysis.json, summary.txt and report.html.\n"
      "Ctrl-C destroys the running guest and keeps everything; continue with 'abvm run --resume DIR'.\n" +
      std::string(kVerdictExitCodes) + ", 130 interrupted.");
  sub->add_option("config", args->config, "Experiment file (TOML), see configs/");
  sub->add_option("--resume", args->resume, "Continue the interrupted run in this results directory");
  sub->add_flag("--dry-run", args->dry_run, "Print the plan, each side's domain XML and the guest job; boot nothing");
  sub->add_option("--results-dir", args->results_root, "Where results/<experiment>-<time>/ is created")
      ->default_str("./results");
  sub->add_option("--connect", args->connect,
                  "libvirt URI (default: the embedded QEMU driver, no daemon); a daemon's URI such as "
                  "qemu+ssh://root@HOST/system gets the guests' files as storage volumes (README: Running on many hosts)");
  sub->add_flag("--keep-scratch", args->keep_scratch, "Keep abvm's scratch disk image after the run");
  sub->add_option("--junit", args->junit, "Also write JUnit XML (one test case per metric) to this path");
  return {sub, [args] { return run_command(*args); }};
}

}  // namespace abvm::cli
