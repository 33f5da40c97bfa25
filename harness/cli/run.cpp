#include "cli/decision_options.hpp"
#include "cli/run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/report.hpp"
#include "run/journal_sink.hpp"
#include "config/experiment.hpp"
#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "guest/accel.hpp"
#include "guest/domain_xml.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "kernels/kernel.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/modules.hpp"
#include "plan/looks.hpp"
#include "plan/plan.hpp"
#include "report/json_report.hpp"
#include "report/junit.hpp"
#include "report/terminal.hpp"
#include "run/environment.hpp"
#include "run/interrupt.hpp"
#include "run/orchestrator.hpp"
#include "run/progress.hpp"
#include "results/directory.hpp"
#include "run/scratch.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kInterruptedExit = 130;

struct RunArgs {
  std::string config;
  std::string resume;
  bool dry_run = false;
  std::string results_root;
  std::string connect;
  bool keep_scratch = false;
  std::string junit;
};

std::string full_cmdline(const SideSpec& side) {
  std::string c(kGuestKernelCmdline);
  if (!side.cmdline.empty()) c += " " + side.cmdline;
  return c;
}

std::vector<TrialToRun> to_run(const std::vector<Trial>& trials) {
  std::vector<TrialToRun> out;
  for (const auto& t : trials) out.push_back({.id = t.id, .side = t.side, .block = t.block, .position = t.position});
  return out;
}

void say(const std::string& text) { std::fprintf(stderr, "abvm: %s\n", text.c_str()); }

// The experiment file as loaded when the run started: the copy in the results directory is
// read back on --resume with the original location (relative paths resolve against it).
Experiment load_saved_experiment(const fs::path& dir, const json& run_info) {
  return load_experiment_text(read_file(dir / "config.toml"), run_info.at("config").get<std::string>(),
                              fs::path(run_info.at("config_dir").get<std::string>()));
}

// ---- dry run -------------------------------------------------------------------------------

int dry_run(const Experiment& e, const fs::path& results_root) {
  const std::uint64_t seed = e.schedule.seed != 0 ? e.schedule.seed : 1;
  const Plan plan = make_plan(e, seed);
  std::string out;
  out += fmt::format("abvm run --dry-run {}: nothing is booted; no libvirt connection is made.\n", e.source);
  if (e.schedule.seed == 0) {
    out += "seed: schedule.seed = 0, so a real run picks a fresh seed (recorded in plan.json); shown with seed 1\n";
  }
  out += "\n== plan ==\n" + describe_plan(plan);
  if (e.schedule.sequential.enabled) {
    const LookSchedule looks = make_look_schedule(e);
    out += fmt::format("\nsequential stopping ({}): looks after", to_string(looks.correction));
    for (const auto& l : looks.looks) out += fmt::format(" {} (confidence {:.4f})", l.boots_per_side, l.confidence);
    out += " boots per side\n";
  }
  // Paths that exist only once the run starts are shown as placeholders in angle brackets.
  const fs::path placeholder_dir = fs::absolute(results_root) / fmt::format("{}-<timestamp>", e.name);
  for (Side id : {Side::a, Side::b}) {
    const SideSpec& side = e.side(id);
    DomainSpec d;
    d.name = domain_name(fmt::format("t0000-{}", to_string(id)), 0);
    d.kernel = abvm_cache_dir() / "kernels" / fmt::format("<build of {}>", side.kernel) / "vmlinuz";
    d.initrd = placeholder_dir / "trials/<trial>/initrd.img";
    d.cmdline = full_cmdline(side);
    d.machine = side.machine;
    d.scratch_disk = e.disk.path.empty() ? placeholder_dir / "scratch.raw" : e.disk.path;
    d.disk = side.device;
    d.console_log = placeholder_dir / "trials/<trial>/console.log";
    d.accelerator = e.guest.accelerator.value_or(Accelerator::tcg);
    out += fmt::format("\n== side {} ({}): kernel recipe '{}' ==\n", to_string(id), side.label, side.kernel);
    if (!e.guest.accelerator) out += "(accelerator: auto, decided by a KVM probe boot at run time)\n";
    out += domain_xml(d);
  }
  GuestJob job{.trial_id = plan.trials.empty() ? "t0000" : plan.trials[0].id,
               .nonce = "0000000000000000",  // a fresh random nonce per boot at run time
               .workloads = e.workloads};
  out += "\n== guest job (appended to the initramfs of every trial; trial id and nonce vary) ==\n";
  out += serialise_job(job);
  std::cout << out << std::flush;
  return 0;
}

// ---- analysis ------------------------------------------------------------------------------

struct Decision {
  Analysis analysis;
  std::string json_text;
  std::string summary;
};

// Analyses the results directory at `confidence`; prints the terminal summary when `print`.
Decision decide(const Experiment& e, const fs::path& dir, double confidence, bool print, bool color) {
  SampleSet samples = load_results_dir(dir);
  if (!e.analysis.metrics.empty()) {
    std::vector<MetricSamples> chosen;
    for (const auto& sel : e.analysis.metrics) {
      for (const auto& m : samples.metrics) {
        if (m.name != sel.name) continue;
        chosen.push_back(m);
        if (sel.better) chosen.back().better = *sel.better == Better::higher ? Better::higher : Better::lower;
      }
    }
    samples.metrics = std::move(chosen);
  }
  AnalysisOptions options;
  options.margin = e.analysis.margin;
  options.confidence = confidence;
  options.seed = e.analysis.seed;
  Decision d{.analysis = analyze(samples, options)};
  ReportSource source{.kind = "results", .results_dir = dir.string(), .a_label = e.a.label, .b_label = e.b.label};
  d.json_text = json_report_text(d.analysis, source);
  d.summary = terminal_report(d.analysis, {.a_label = e.a.label, .b_label = e.b.label, .color = false});
  if (print && color) {
    std::cout << terminal_report(d.analysis, {.a_label = e.a.label, .b_label = e.b.label, .color = true});
  } else if (print) {
    std::cout << d.summary;
  }
  return d;
}

// ---- the run -------------------------------------------------------------------------------

struct Prepared {
  GuestImage image;
  std::map<std::string, KernelArtifact> kernels;  // by recipe
  std::map<std::string, std::string> modules;     // by recipe
};

Prepared prepare_guests(const Experiment& e) {
  Prepared p;
  say("guest image ...");
  p.image = build_guest_image();
  for (const SideSpec* side : {&e.a, &e.b}) {
    if (p.kernels.contains(side->kernel)) continue;
    say(fmt::format("kernel '{}' ...", side->kernel));
    const KernelRecipe recipe = load_kernel_recipe(side->kernel);
    KernelArtifact k = build_kernel(recipe);
    p.modules[side->kernel] = k.modules_dir ? build_modules_archive(*k.modules_dir, kGuestModules) : std::string();
    p.kernels.emplace(side->kernel, std::move(k));
  }
  return p;
}

json kernels_json(const Experiment& e, const Prepared& p) {
  json j = json::object();
  for (Side id : {Side::a, Side::b}) {
    const SideSpec& side = e.side(id);
    const KernelArtifact& k = p.kernels.at(side.kernel);
    j[to_string(id)] = {{"label", side.label},  {"recipe", side.kernel},        {"release", k.release},
                          {"image", k.image.string()}, {"cmdline", full_cmdline(side)}, {"identity", k.identity}};
  }
  return j;
}

json image_json(const GuestImage& image) {
  return {{"path", image.path.string()},
          {"sha256", image.sha256},
          {"compressed_size", image.compressed_size},
          {"files", image.contents.size()}};
}

std::string hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

int execute(const Experiment& e, const fs::path& dir, const RunArgs& args, bool resuming) {
  ResultsLock lock(dir);
  install_interrupt_handlers();
  const fs::path run_json = dir / "run.json";
  json info = json::parse(read_file(run_json));
  Plan plan = plan_from_json(json::parse(read_file(dir / "plan.json")));

  std::vector<std::string> notes;
  for (const auto& stale : remove_stale_temporaries(dir)) {
    notes.push_back("removed a half-written file of an earlier abvm process: " + stale.string());
  }
  const auto ledger = read_ledger(dir / "trials.jsonl", [&](const std::string& w) { notes.push_back(w); });
  const std::set<std::string> done = done_trials(ledger);
  const auto kept = prune_journal(dir / "journal.jsonl", done, notes);
  for (const auto& n : notes) say(n);
  if (resuming) say(fmt::format("resuming {}: {} of {} trials done", dir.string(), done.size(), plan.trials.size()));

  const std::string status = info.value("status", "running");
  const bool finished_before = status != "running";

  Prepared prepared;
  std::unique_ptr<LibvirtDriver> driver;
  Accelerator accel = Accelerator::tcg;
  std::string accel_reason;
  if (!finished_before) {
    prepared = prepare_guests(e);
    write_file_atomic(dir / "kernels.json", kernels_json(e, prepared).dump(2) + "\n");
    write_file_atomic(dir / "image.json", image_json(prepared.image).dump(2) + "\n");
    const std::string uri = !args.connect.empty() ? args.connect
                            : info.contains("uri") && !info["uri"].get<std::string>().empty()
                                ? info["uri"].get<std::string>()
                                : LibvirtDriver::embedded_uri();
    info["uri"] = uri;
    say(fmt::format("connecting to {} ...", uri));
    driver = std::make_unique<LibvirtDriver>(uri);
    // Guests of a killed abvm process are ours to remove. libvirt may still be reconnecting to
    // them (it then refuses with "cannot acquire state change lock"): that must not stop a
    // --resume, since the new trials use domains of their own names.
    try {
      for (const auto& name : driver->destroy_leftovers()) say("destroyed leftover domain " + name);
    } catch (const InfraError& ex) {
      say(fmt::format("warning: {}; continuing (list running domains with 'virsh -c {} list')", ex.what(), uri));
    }
  }

  const fs::path journal = dir / "journal.jsonl";
  JournalSink sink(journal, e.workloads, hostname());
  sink.remember(kept);

  RunSummary summary;
  const LookSchedule looks = make_look_schedule(e);
  double confidence = e.analysis.confidence;
  if (!finished_before) {
    // Accelerator: forced by the config, or probed (a KVM boot that must print a record).
    if (!e.guest.accelerator) {
      AccelProbe probe;
      const KernelArtifact& k = prepared.kernels.at(e.a.kernel);
      probe.kernel = k.image;
      probe.work_dir = dir / "accel-probe";
      fs::create_directories(probe.work_dir);
      probe.initrd = probe.work_dir / "initrd.img";
      GuestJob job{.trial_id = "probe", .nonce = make_nonce(), .workloads = {}};
      write_guest_initrd(probe.initrd, prepared.image, prepared.modules.at(e.a.kernel), build_job_archive(job));
      probe.cmdline = std::string(kGuestKernelCmdline);
      probe.marker = "ABVM1:" + job.nonce + ":";
      const AccelChoice choice = choose_accelerator(*driver, probe);
      fs::remove(probe.initrd);
      accel = choice.accelerator;
      accel_reason = choice.reason;
      if (const auto w = accelerator_warning(choice); !w.empty()) say("warning: " + w);
    } else {
      accel = *e.guest.accelerator;
      accel_reason = "set by guest.accelerator in the experiment file";
      if (accel == Accelerator::tcg) say("warning: TCG (emulation): the numbers describe the emulator as much as the kernel");
    }
    write_file_atomic(dir / "environment.json", run_environment(driver->versions(), accel, accel_reason).dump(2) + "\n");
    write_file_atomic(run_json, info.dump(2) + "\n");

    ExecutionSpec spec;
    spec.results_dir = dir;
    spec.base_image = prepared.image.path;
    for (Side id : {Side::a, Side::b}) {
      const SideSpec& side = e.side(id);
      SideBoot& boot = id == Side::a ? spec.a : spec.b;
      boot = {.label = side.label,
              .kernel = prepared.kernels.at(side.kernel).image,
              .cmdline = full_cmdline(side),
              .modules_archive = prepared.modules.at(side.kernel),
              .machine = side.machine,
              .disk = side.device};
    }
    spec.workloads = e.workloads;
    spec.scratch_disk = prepare_scratch_disk(e.disk, dir, !resuming);
    spec.accelerator = accel;
    spec.boot_timeout = e.schedule.boot_timeout;
    spec.run_timeout = e.schedule.run_timeout;
    spec.infra_retries = e.schedule.infra_retries;

    ProgressPrinter progress(stderr, ::isatty(STDERR_FILENO) != 0);
    double previous_seconds = 0;  // wall time of earlier sessions, for the budget
    for (const auto& l : ledger) previous_seconds += l.seconds;
    const auto session_start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start).count();
    };
    double mean_trial = 0;
    std::size_t total = plan.trials.size();
    std::size_t done_count = done.size();
    const auto remaining = [&]() -> std::optional<double> {
      if (mean_trial <= 0) return std::nullopt;
      return mean_trial * static_cast<double>(total - std::min(total, done_count));
    };
    const auto sides = [&](const TrialToRun& t) {
      return fmt::format("{} {} ({})", t.id, to_string(t.side), e.side(t.side).label);
    };
    int last_look = -1;
    std::string stop_reason;
    // A look: analyse what is there at this look's confidence; stop when it is conclusive.
    const auto look = [&](int boots) {
      const Look* l = look_at(looks, boots);
      if (l == nullptr || boots == last_look) return BlockDecision::go_on;
      last_look = boots;
      confidence = l->confidence;
      progress.message(fmt::format("look {} after {} boots per side (confidence {:.4f})", l->index + 1, boots,
                                   l->confidence));
      try {
        const Decision d = decide(e, dir, l->confidence, false, false);
        if (d.analysis.verdict != Verdict::inconclusive) {
          stop_reason = fmt::format("verdict {} at look {}", to_string(d.analysis.verdict), l->index + 1);
          return BlockDecision::stop;
        }
      } catch (const Error& ex) {
        progress.message(fmt::format("look {}: no analysis yet ({})", l->index + 1, ex.what()));
      }
      return BlockDecision::go_on;
    };
    Controls controls;
    controls.stop_requested = [] { return interrupt_requested(); };
    controls.on_trial_start = [&](const TrialToRun& t, std::size_t d, std::size_t n) {
      done_count = d;
      total = n;
      progress.update({.done = d, .total = n, .current = sides(t), .elapsed_seconds = elapsed(),
                       .remaining_seconds = remaining(), .effect = sink.effect_estimate()});
    };
    controls.on_trial_end = [&](const TrialProgress& p) {
      done_count = p.done;
      total = p.total;
      mean_trial = p.mean_trial_seconds;
      const TrialResult& r = *p.result;
      const std::string last = fmt::format("{} {}", sides(r.trial), to_string(r.outcome));
      if (r.outcome != Outcome::ok || !r.retried.empty()) {
        progress.message(fmt::format("{}{}{}", last, r.detail.empty() ? "" : ": " + r.detail,
                                     r.retried.empty() ? "" : fmt::format(" (after {} boots)", r.attempts)));
      }
      progress.update({.done = p.done, .total = p.total, .elapsed_seconds = elapsed(),
                       .remaining_seconds = remaining(), .effect = sink.effect_estimate(), .last = last});
    };
    if (e.schedule.sequential.enabled) {
      controls.at_block_end = [&](int block) { return look(block + 1); };
    }
    controls.extend = [&]() -> std::vector<TrialToRun> {
      if (!e.schedule.sequential.enabled) return {};
      // A look missed by an interruption right after its block is made now.
      if (look(plan.blocks) == BlockDecision::stop) return {};
      const auto& seq = e.schedule.sequential;
      if (plan.blocks >= seq.max_boots_per_side) {
        stop_reason = fmt::format("budget of {} boots per side spent", seq.max_boots_per_side);
        return {};
      }
      if (previous_seconds + elapsed() >= std::chrono::duration<double>(seq.max_wall_time).count()) {
        stop_reason = "wall-time budget spent";
        return {};
      }
      const int extra = std::min(seq.look_every, seq.max_boots_per_side - plan.blocks);
      const std::size_t before = plan.trials.size();
      plan = extend_plan(plan, extra);
      write_file_atomic(dir / "plan.json", plan_to_json(plan).dump(2) + "\n");
      progress.message(fmt::format("inconclusive: {} more blocks ({} boots per side)", extra, plan.blocks));
      std::vector<Trial> more(plan.trials.begin() + static_cast<std::ptrdiff_t>(before), plan.trials.end());
      return to_run(more);
    };

    // abvm's own scratch image goes whenever this session ends (a resume makes a new one), so a
    // stopped or failed nightly job leaves no disk image behind; a SIGKILL leaves it to the resume.
    const bool own_scratch = e.disk.path.empty() && !args.keep_scratch;
    struct ScratchRemover {
      fs::path path;
      ~ScratchRemover() {
        std::error_code ec;
        if (!path.empty()) fs::remove(path, ec);
      }
    } scratch_remover{own_scratch ? spec.scratch_disk : fs::path()};
    Orchestrator orchestrator(*driver, spec, sink);
    try {
      summary = orchestrator.run(to_run(plan.trials), done, controls);
    } catch (const InfraError& ex) {
      // The machine failed mid-run (results filesystem read-only or full, libvirt gone): the
      // guest is destroyed by then and every finished trial is on disk; say how to go on.
      progress.finish();
      throw InfraError(fmt::format("{}; the running guest was destroyed and the finished trials are kept in {}; "
                                   "when the cause is fixed, continue with: abvm run --resume {}",
                                   ex.what(), dir.string(), dir.string()));
    }
    progress.finish();
    if (summary.interrupted) {
      say(fmt::format("interrupted (signal {}): the running guest was destroyed; {} trials done are kept in {}",
                      interrupt_signal(), done.size() + summary.ran, dir.string()));
      say(fmt::format("continue with: abvm run --resume {}", dir.string()));
      return kInterruptedExit;
    }
    info["status"] = summary.stopped_early ? "stopped" : "complete";
    if (!stop_reason.empty()) info["stop_reason"] = stop_reason;
    info["final_confidence"] = confidence;
    write_file_atomic(run_json, info.dump(2) + "\n");
    if (!stop_reason.empty()) say("sequential stopping: " + stop_reason);
  } else {
    confidence = info.value("final_confidence", e.analysis.confidence);
    say(fmt::format("{}: every trial is done ({}); analysing again", dir.string(), status));
  }

  const Decision d = decide(e, dir, confidence, true, ::isatty(STDOUT_FILENO) != 0);
  write_file_atomic(dir / "analysis.json", d.json_text);
  write_file_atomic(dir / "summary.txt", d.summary);
  // The analysis is saved first: a report that cannot be written loses nothing gathered.
  say(fmt::format("report: {}", write_results_dir_report(dir).string()));
  if (!args.junit.empty()) {
    write_file_atomic(args.junit, junit_report(nlohmann::json::parse(d.json_text), {.suite = e.name}));
  }
  say(fmt::format("results: {}", dir.string()));
  return exit_code_for(d.analysis.verdict);
}

int run_command(const RunArgs& args) {
  if (!args.resume.empty()) {
    if (!args.config.empty()) throw Error("give either CONFIG or --resume DIR, not both");
    if (args.dry_run) throw Error("--dry-run does not apply to --resume");
    const fs::path dir = args.resume;
    if (!fs::exists(dir / "run.json") || !fs::exists(dir / "plan.json")) {
      throw Error(fmt::format("{}: not an abvm results directory (no run.json/plan.json); give the directory "
                              "'abvm run' printed",
                              dir.string()));
    }
    const json info = json::parse(read_file(dir / "run.json"));
    const Experiment e = load_saved_experiment(dir, info);
    return execute(e, dir, args, true);
  }
  if (args.config.empty()) throw Error("nothing to run: give an experiment file (abvm run CONFIG) or --resume DIR");
  const Experiment e = load_experiment(args.config);
  const fs::path root = args.results_root.empty() ? fs::path(ABVM_SOURCE_DIR) / "results" : fs::path(args.results_root);
  if (args.dry_run) return dry_run(e, root);

  std::uint64_t seed = e.schedule.seed;
  if (seed == 0) {
    std::random_device rd;
    while (seed == 0) seed = (std::uint64_t{rd()} << 32) ^ rd();
  }
  const Plan plan = make_plan(e, seed);
  const fs::path dir = create_results_dir(root, e.name, std::chrono::system_clock::now());
  write_file_atomic(dir / "config.toml", e.source_text);
  write_file_atomic(dir / "plan.json", plan_to_json(plan).dump(2) + "\n");
  const fs::path config = fs::absolute(args.config);
  const json info = {{"abvm_version", ABVM_VERSION},
                     {"config", config.string()},
                     {"config_dir", config.parent_path().string()},
                     {"uri", args.connect},
                     {"started", utc_iso8601(std::chrono::system_clock::now())},
                     {"status", "running"}};
  write_file_atomic(dir / "run.json", info.dump(2) + "\n");
  say(fmt::format("results directory: {} (seed {})", dir.string(), seed));
  return execute(e, dir, args, false);
}

}  // namespace

Command add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "Run an A/B experiment on real guests (QEMU through libvirt) and decide");
  sub->footer(
      "Results go to results/<experiment>-<UTC time>/: config, plan and seed, environment, kernel and image "
      "identities, journal.jsonl (one line per run), trials/<id>/ (console, domain XML, raw output), analysis.json"
      ", summary.txt and report.html.\n"
      "Ctrl-C destroys the running guest and keeps everything; continue with 'abvm run --resume DIR'.\n" +
      std::string(kVerdictExitCodes) + ", 130 interrupted.");
  sub->add_option("config", args->config, "Experiment file (TOML), see configs/");
  sub->add_option("--resume", args->resume, "Continue the interrupted run in this results directory");
  sub->add_flag("--dry-run", args->dry_run, "Print the plan, each side's domain XML and the guest job; boot nothing");
  sub->add_option("--results-dir", args->results_root, "Where results/<experiment>-<time>/ is created")
      ->default_str("<repository>/results");
  sub->add_option("--connect", args->connect, "libvirt URI (default: the embedded QEMU driver, no daemon)");
  sub->add_flag("--keep-scratch", args->keep_scratch, "Keep abvm's scratch disk image after the run");
  sub->add_option("--junit", args->junit, "Also write JUnit XML (one test case per metric) to this path");
  return {sub, [args] { return run_command(*args); }};
}

}  // namespace abvm::cli
