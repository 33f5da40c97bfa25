#include "cli/run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/decision_options.hpp"
#include "cli/report.hpp"
#include "cli/results_analysis.hpp"
#include "cli/run_session.hpp"
#include "config/design.hpp"
#include "config/experiment.hpp"
#include "config/rules.hpp"
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
#include "run/designs/vcpu_swap.hpp"
#include "run/interrupt.hpp"
#include "run/prepare.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "run/sizing.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {
namespace {
namespace fs = std::filesystem;

struct RunArgs {
  std::string config;
  std::string resume;
  bool dry_run = false;
  std::string results_root;
  std::vector<std::string> connect;
  bool keep_scratch = false;
  std::string junit;
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

// Each workload's command as the guest job gives it (guest/job.hpp workload_argv), and the values a
// rule chose for it (dd's flags follow what it reads and writes), with why: what `abvm config show`
// says of them.
std::string describe_workloads(const Experiment& e) {
  std::string out = "\n== workloads (each boot runs them; @scratch is the scratch disk) ==\n";
  for (std::size_t i = 0; i < e.workloads.size(); ++i) {
    const Workload& w = e.workloads[i];
    out += fmt::format("{}: {}\n", w.name, fmt::join(workload_argv(w), " "));
    const std::string prefix = fmt::format("workload[{}].", i);
    for (const EffectiveValue& v : e.effective) {
      if (v.key.starts_with(prefix) && v.origin.starts_with("default for ")) {
        out += fmt::format("  {} = {}: {}\n", v.key.substr(prefix.size()), v.value, v.origin);
      }
    }
    const auto* dd = std::get_if<DdWorkload>(&w.spec);
    if (dd != nullptr && !rules::names_scratch(dd->input) && !rules::names_scratch(dd->output)) {
      out += "  (neither if nor of is @scratch: it measures the guest's CPU and memory, not the disk)\n";
    }
  }
  return out;
}

// The hosts a dry run shows the lanes of: the pool's URIs, or this machine.
std::vector<std::string> dry_run_hosts(const Experiment& e) {
  return e.hosts.uris.size() > 1 ? e.hosts.uris : std::vector<std::string>{""};
}

// The plan, and each side's first trial's domain XML from the code that boots trials
// (run/execution.hpp trial_domain), then the guest job.
int dry_run(const Experiment& e, const fs::path& results_root) {
  const Plan plan = make_plan(e, e.schedule.seed != 0 ? e.schedule.seed : 1);
  std::string out = fmt::format("abvm run --dry-run {}: nothing is booted; no libvirt connection is made.\n", e.source);
  if (e.schedule.seed == 0) {
    out += "seed: schedule.seed = 0, so a real run picks a fresh seed (recorded in plan.json); shown with seed 1\n";
  }
  out += "\n== plan ==\n" + describe_plan(plan) + describe_looks(e) + describe_workloads(e) + "\n" +
         describe_run_lengths(e);
  if (!e.hosts.uris.empty()) {
    out += fmt::format("\nhosts ({}; blocks go to whichever has a free lane; which ran what is recorded):\n",
                       e.hosts.uris.size() > 1 ? "a pool" : "one");
    for (const auto& uri : e.hosts.uris) out += "  " + uri + "\n";
  }
  const ResultsDir dir(fs::absolute(results_root) / fmt::format("{}-<timestamp>", e.name));
  const auto image = [&](int slot) { return e.disk.path.empty() ? dir.scratch_disk(slot) : e.disk.path; };
  const ExecutionSpec spec = execution_spec(e, placeholder_guests(e), dir, make_lanes(e, image, dry_run_hosts(e)));
  const DesignTraits& design = traits(e.schedule.design);
  if (auto swap = pair_swap(spec, spec.lanes.front(), static_cast<std::size_t>(design.trials_per_block), design.pacing)) {
    out += "\n" + swap->intent() + "\n";
  }
  for (Side s : kSides) {
    const auto first = std::find_if(plan.trials.begin(), plan.trials.end(), [&](const Trial& t) { return t.side == s; });
    if (first == plan.trials.end()) continue;
    const SideSpec& side = e.side(s);
    out += fmt::format("\n== side {} ({}): kernel recipe '{}', trial {} ==\n", to_string(s), side.label, side.kernel,
                       first->id);
    if (!e.guest.accelerator) out += "(accelerator: auto, decided by a KVM probe boot at run time)\n";
    out += domain_xml(trial_domain(spec, *first, spec.lanes.front()));
  }
  if (!plan.trials.empty()) {
    // A fresh random nonce per boot at run time.
    const GuestJob job = trial_job(spec, plan.trials.front(), "0000000000000000");
    out += fmt::format("\n== guest job of trial {} (appended to the initramfs of every trial; trial id, nonce and, in "
                       "same-guest, the sides' order and, with drawn workload orders, the steps vary) ==\n", plan.trials.front().id);
    out += serialise_job(job);
  }
  std::cout << out << std::flush;
  return 0;
}

// ---- analysis ------------------------------------------------------------------------------

// The command that writes a finished run's outputs again: --resume analyses a run whose trials
// are all done without connecting to libvirt or booting anything (execute, below). `abvm
// analyze DIR` writes nothing there, and `abvm report DIR` needs the analysis.json that is missing.
std::string finish_command(const ResultsDir& dir, const RunArgs& args) {
  std::string command = "abvm run --resume " + dir.root().string();
  if (!args.junit.empty()) command += " --junit " + args.junit;
  return command;
}

// The last writes of a run come after every trial it ran is in the journal: when one fails (the
// results filesystem turned read-only, or full), nothing measured is lost, and the user needs the
// command that writes them once the filesystem takes writes again.
void write_final(const ResultsDir& dir, const RunArgs& args, const std::function<void()>& write) {
  try {
    write();
  } catch (const InfraError& ex) {
    throw InfraError(fmt::format("{}; every trial this run ran is recorded in {} (no run was lost); once the "
                                 "filesystem is writable again, write the reports with: {}",
                                 ex.what(), dir.journal().string(), finish_command(dir, args)));
  }
}

// The end of every run: analysis.json, summary.txt and report.html (run_session.hpp), the
// terminal summary, JUnit.
int finish_run(const Experiment& e, const ResultsDir& dir, const RunEnd& end, const RunArgs& args) {
  const Decision d = decide(e, dir, end);
  write_final(dir, args, [&] { write_decision(e, dir, d, end.records); });
  std::cout << (::isatty(STDOUT_FILENO) != 0
                    ? terminal_report(d.report, {.a_label = e.a.label, .b_label = e.b.label, .color = true,
                                                   .seconds_per_block = d.seconds_per_block})
                    : d.summary)
            << std::flush;
  const fs::path report = dir.report_html();
  if (!args.junit.empty()) {
    write_final(dir, args, [&] { write_file_atomic(args.junit, junit_report(d.report, {.suite = e.name})); });
  }
  say(fmt::format("report: {}", report.string()));
  say(fmt::format("results: {}", dir.root().string()));
  // What another design would have cost here (not in analysis.json: a re-analysis must not
  // depend on a calibration made later).
  if (const auto calibration = read_calibration(abvm_cache_dir() / "calibration.json")) {
    if (const auto costs = design_costs(e, *calibration, host_name())) say(*costs);
  }
  return exit_code_for(d.analysis.verdict);
}

// ---- the run -------------------------------------------------------------------------------

// The host's design calibration (plan/calibration.hpp) against the experiment's budget and design.
void warn_about_budget(const Experiment& e) {
  if (const auto calibration = read_calibration(abvm_cache_dir() / "calibration.json")) {
    if (const auto warning = budget_warning(e, *calibration, host_name())) say("warning: " + *warning);
    if (const auto warning = truth_warning(e, *calibration, host_name())) say("warning: " + *warning);
  }
}

// The libvirt connections: --connect (repeated), else the hosts the run used before, else the
// experiment's [hosts], else the embedded driver. A run that used the embedded driver resumes with
// it, in whatever root is free now: the private root of a run that found the shared one busy went
// with its process.
std::vector<std::string> connection_uris(const RunArgs& args, const RunManifest& manifest, const Experiment& e) {
  if (!args.connect.empty()) return args.connect;
  if (!manifest.uris.empty()) return manifest.uris;
  if (!manifest.uri.empty() && !manifest.uri.starts_with("qemu:///embed")) return {manifest.uri};
  if (!e.hosts.uris.empty()) return e.hosts.uris;
  return {LibvirtDriver::embedded_uri()};
}

// A run that stopped without an answer (status failed, run/first_block.hpp): its analysis and reports
// still say what it measured, naming the workload that has no data, and then it ends with why, as an
// infrastructure error (exit 3: the experiment could not be carried out), however often it is resumed.
[[noreturn]] void end_failed(const Experiment& e, const ResultsDir& dir, const RunEnd& end, const RunArgs& args) {
  try {
    finish_run(e, dir, end, args);
  } catch (const Error& ex) {
    say(fmt::format("no analysis: {}", ex.what()));
  }
  throw InfraError(end.failure);
}

int execute(const Experiment& e, const ResultsDir& dir, const RunArgs& args, bool resuming) {
  const RunManifest manifest = read_manifest(dir);
  if (manifest.status != RunStatus::running) {
    // Over before this session: it ended as run.json and the ledger say, nothing of it in memory
    // (its reports read the directory's files).
    const RunEnd over = recorded_run_end(e, dir, manifest);
    if (over.status == RunStatus::failed) end_failed(e, dir, over, args);
    say(fmt::format("{}: every trial is done ({}); analysing again", dir.root().string(), to_string(over.status)));
    return finish_run(e, dir, over, args);
  }
  install_interrupt_handlers();
  const std::vector<std::string> uris = connection_uris(args, manifest, e);
  TerminalObserver observer;
  BuildingPreparer preparer([&](const std::string& s) { observer.note(s); });
  std::vector<std::unique_ptr<LibvirtDriver>> drivers;
  Runner runner(e, dir,
                {.connect = [&] { return connect_hosts(uris, e.hosts, observer, drivers); },
                 .preparer = preparer,
                 .observer = observer,
                 .decide = sequential_looks(e),
                 .stop_requested = [] { return interrupt_requested(); }});
  const RunEnd end = runner.run({.resuming = resuming,
                                 .keep_scratch = args.keep_scratch,
                                 .uri = uris.front(),
                                 .uris = uris.size() > 1 ? uris : std::vector<std::string>{}});
  if (end.status == RunStatus::running) {
    say(fmt::format("interrupted (signal {}): the running guest was destroyed; {} trials done are kept in {}",
                    interrupt_signal(), end.trials_done, dir.root().string()));
    say(fmt::format("continue with: abvm run --resume {}", dir.root().string()));
    return static_cast<int>(ExitCode::interrupted);
  }
  if (end.status == RunStatus::failed) end_failed(e, dir, end, args);
  if (!end.stop_reason.empty()) say("sequential stopping: " + end.stop_reason);
  return finish_run(e, dir, end, args);
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
  const ResultsDir dir = start_run(e, make_plan(e, seed), root, args.config, args.connect.empty() ? "" : args.connect[0]);
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
      std::string(kVerdictExitCodes) +
      " (also: a workload failed in every run of the first block on both sides; the run stops there and quotes the "
      "tool), 130 interrupted.");
  sub->add_option("config", args->config, "Experiment file (TOML), see configs/");
  sub->add_option("--resume", args->resume, "Continue the interrupted run in this results directory");
  sub->add_flag("--dry-run", args->dry_run,
                "Print the plan, each workload's command, each side's domain XML and the guest job; boot nothing");
  sub->add_option("--results-dir", args->results_root, "Where results/<experiment>-<time>/ is created")
      ->default_str("./results");
  sub->add_option("--connect", args->connect,
                  "libvirt URI; repeat it for a pool of hosts, one block per host (per schedule.cpu_sets entry) at "
                  "a time (default: the experiment's [hosts], else the embedded QEMU driver, no daemon); a daemon's "
                  "URI such as "
                  "qemu+ssh://root@HOST/system gets the guests' files as storage volumes (README: Running on many hosts)");
  sub->add_flag("--keep-scratch", args->keep_scratch, "Keep abvm's scratch disk image after the run");
  sub->add_option("--junit", args->junit, "Also write JUnit XML (one test case per metric) to this path");
  return {sub, [args] { return run_command(*args); }};
}

}  // namespace abvm::cli
