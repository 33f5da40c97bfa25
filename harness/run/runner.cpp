#include "run/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <future>
#include <optional>
#include <random>
#include <set>

#include "config/rules.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "core/files.hpp"
#include "guest/accel.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "plan/looks.hpp"
#include "run/environment.hpp"
#include "run/first_block.hpp"
#include "run/journal_sink.hpp"
#include "run/scratch.hpp"
#include "run/sizing.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Sequential stopping: the looks at block ends, and more blocks while they are inconclusive
// (plan/looks.hpp). Without it there is one analysis at the end, at the full confidence.
class SequentialLooks {
 public:
  SequentialLooks(const Experiment& e, const ResultsDir& dir, Plan& plan, RunCollaborators& c, double earlier_seconds)
      : e_(e), dir_(dir), plan_(plan), c_(c), looks_(make_look_schedule(e)), earlier_seconds_(earlier_seconds) {}

  double confidence() const { return confidence_; }
  const std::string& stop_reason() const { return stop_reason_; }

  // After block `block` is complete: stop when its look decides. A set-aside sizing block
  // (run/sizing.hpp) is no boot of the analysis: the looks count the blocks after it.
  BlockDecision at_block_end(int block) { return look(block + 1 - plan_.set_aside_blocks); }

  // Every planned trial is done: the next blocks, or none to finish.
  std::vector<Trial> extend() {
    const auto& seq = e_.schedule.sequential;
    if (!seq.enabled) return {};
    // A look missed by an interruption right after its block is made now.
    const int boots = plan_.blocks - plan_.set_aside_blocks;
    if (look(boots) == BlockDecision::stop) return {};
    if (boots >= seq.max_boots_per_side) {
      stop_reason_ = fmt::format("budget of {} boots per side spent", seq.max_boots_per_side);
      return {};
    }
    if (earlier_seconds_ + seconds_since(start_) >= std::chrono::duration<double>(seq.max_wall_time).count()) {
      stop_reason_ = "wall-time budget spent";
      return {};
    }
    const int extra = std::min(seq.look_every, seq.max_boots_per_side - boots);
    const std::size_t before = plan_.trials.size();
    plan_ = extend_plan(plan_, extra);
    write_plan(dir_, plan_);
    c_.observer.note(fmt::format("inconclusive: {} more blocks ({} boots per side)", extra, boots + extra));
    return {plan_.trials.begin() + static_cast<std::ptrdiff_t>(before), plan_.trials.end()};
  }

 private:
  BlockDecision look(int boots) {
    const Look* l = look_at(looks_, boots);
    if (!e_.schedule.sequential.enabled || l == nullptr || boots == last_look_) return BlockDecision::go_on;
    last_look_ = boots;
    confidence_ = l->confidence;
    c_.observer.note(fmt::format("look {} after {} boots per side: {}", l->index + 1, boots, describe_look(looks_, *l)));
    try {
      if (const auto verdict = c_.decide(dir_, l->confidence)) {
        stop_reason_ = fmt::format("verdict {} at {}", *verdict, describe_look(looks_, *l));
        return BlockDecision::stop;
      }
    } catch (const Error& ex) {
      c_.observer.note(fmt::format("look {}: no analysis yet ({})", l->index + 1, ex.what()));
    }
    return BlockDecision::go_on;
  }

  const Experiment& e_;
  const ResultsDir& dir_;
  Plan& plan_;
  RunCollaborators& c_;
  const LookSchedule looks_;
  const double earlier_seconds_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double confidence_ = e_.analysis.confidence;
  int last_look_ = -1;
  std::string stop_reason_;
};

// The progress line: counts, the trials running, times, and the effect so far.
class ProgressFeed {
 public:
  ProgressFeed(const Experiment& e, RunObserver& observer, const JournalSink& sink)
      : e_(e), observer_(observer), sink_(sink) {}

  void running(const TrialProgress& p) { show(p); }

  void ended(const TrialProgress& p) {
    const TrialResult& r = *p.result;
    last_ = fmt::format("{} {}", describe(r.trial), to_string(r.outcome));
    if (r.outcome != Outcome::ok || !r.retried.empty()) {
      observer_.note(fmt::format("{}{}{}", last_, r.detail.empty() ? "" : ": " + r.detail,
                                 r.retried.empty() ? "" : fmt::format(" (after {} boots)", r.attempts)));
    }
    show(p);
  }

 private:
  void show(const TrialProgress& p) {
    std::vector<std::string> running;
    for (const Trial& t : p.running) running.push_back(describe(t));
    observer_.progress({.done = p.done, .total = p.total, .running = std::move(running),
                        .elapsed_seconds = seconds_since(start_), .remaining_seconds = p.remaining_seconds,
                        .effect = sink_.effect_estimate(), .last = last_});
  }
  std::string describe(const Trial& t) const {
    if (traits(e_.schedule.design).both_sides_per_trial) {
      const Side other = t.side == Side::a ? Side::b : Side::a;
      return fmt::format("{} {}+{} ({} + {})", t.id, to_string(t.side), to_string(other), e_.side(t.side).label,
                         e_.side(other).label);
    }
    return fmt::format("{} {} ({})", t.id, to_string(t.side), e_.side(t.side).label);
  }

  const Experiment& e_;
  RunObserver& observer_;
  const JournalSink& sink_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string last_;  // the trial handed over last, with its outcome
};

// abvm's own scratch image goes whenever a session ends (a resume makes a new one), so a
// stopped or failed nightly job leaves no disk image behind; a SIGKILL leaves it to the resume.
struct ScratchRemover {
  std::vector<fs::path> paths;
  ~ScratchRemover() {
    std::error_code ec;
    for (const auto& path : paths) fs::remove(path, ec);
  }
};

}  // namespace

struct Runner::Recovered {
  std::set<std::string> done;
  std::vector<JournalEntry> journal;  // the entries kept, for the running effect estimate
  std::vector<double> trial_seconds;  // what earlier sessions' trials took, in the ledger's order
  double earlier_seconds = 0;         // their sum: the wall time of earlier sessions' trials
};

RunEnd recorded_run_end(const Experiment& e, const ResultsDir& dir, const RunManifest& manifest) {
  RunEnd end{.status = manifest.status,
             .final_confidence = manifest.final_confidence.value_or(e.analysis.confidence),
             .stop_reason = manifest.stop_reason,
             .failure = manifest.failure};
  for (const auto& l : read_ledger(dir.ledger())) end.trial_seconds.push_back(l.seconds);
  end.trials_done = end.trial_seconds.size();
  return end;
}

std::uint64_t choose_seed(const Experiment& e) {
  std::uint64_t seed = e.schedule.seed;
  std::random_device rd;
  while (seed == 0) seed = (std::uint64_t{rd()} << 32) ^ rd();
  return seed;
}

ResultsDir start_run(const Experiment& e, const Plan& plan, const fs::path& results_root, const fs::path& config_file,
                     const std::string& uri) {
  const ResultsDir dir(create_results_dir(results_root, e.name, std::chrono::system_clock::now()));
  write_file_atomic(dir.config(), e.source_text);
  write_plan(dir, plan);
  const fs::path config = fs::absolute(config_file);
  write_manifest(dir, {.abvm_version = ABVM_VERSION,
                       .config = config,
                       .config_dir = config.parent_path(),
                       .uri = uri,
                       .started = utc_iso8601(std::chrono::system_clock::now()),
                       .status = RunStatus::running});
  return dir;
}

// Scratch images a lane needs: one per guest alive at once, or one per disk of its one guest.
int images_per_lane(Design design) { return traits(design).guests_at_once ? 2 : traits(design).disks_per_guest; }

std::vector<Lane> make_lanes(const Experiment& e, const std::function<fs::path(int slot)>& image,
                             const std::vector<std::string>& hosts) {
  std::vector<std::string> sets = e.schedule.cpu_sets;
  if (sets.empty()) sets.push_back("");  // one lane, unpinned
  const int k = images_per_lane(e.schedule.design);
  std::vector<Lane> lanes;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    for (const std::string& set : sets) {
      const std::string where = set.empty() ? "unpinned" : "cpu " + set;
      Lane lane{.name = hosts[h].empty() ? where : hosts[h] + " " + where, .host = h, .host_cpus = set,
                .accelerator = e.guest.accelerator.value_or(Accelerator::tcg)};
      const int first = static_cast<int>(lanes.size()) * k;
      for (int j = 0; j < k; ++j) lane.scratch.push_back(image(first + j));
      lanes.push_back(std::move(lane));
    }
  }
  return lanes;
}

ExecutionSpec execution_spec(const Experiment& e, const PreparedGuests& guests, const ResultsDir& dir,
                             std::vector<Lane> lanes) {
  ExecutionSpec spec;
  spec.results_dir = dir.root();
  spec.base_image = guests.base_image;
  spec.a = guests.a;
  spec.b = guests.b;
  spec.workloads = e.workloads;
  spec.lanes = std::move(lanes);
  spec.design = e.schedule.design;
  spec.boot_timeout = e.schedule.boot_timeout;
  spec.run_timeout = e.schedule.run_timeout;
  spec.vcpu_swap = e.schedule.vcpu_swap;
  spec.infra_retries = e.schedule.infra_retries;
  spec.console_limit = e.schedule.console_limit;
  return spec;
}

Runner::Runner(const Experiment& experiment, ResultsDir dir, RunCollaborators collaborators)
    : experiment_(experiment), dir_(std::move(dir)), c_(std::move(collaborators)) {}

Runner::Recovered Runner::recover() {
  std::vector<std::string> notes;
  for (const auto& stale : remove_stale_temporaries(dir_.root())) {
    notes.push_back("removed a half-written file of an earlier abvm process: " + stale.string());
  }
  Recovered r;
  const auto ledger = read_ledger(dir_.ledger(), [&](const std::string& w) { notes.push_back(w); });
  r.done = done_trials(ledger);
  for (const auto& l : ledger) {
    r.trial_seconds.push_back(l.seconds);
    r.earlier_seconds += l.seconds;
  }
  r.journal = prune_journal(dir_.journal(), r.done, notes);
  for (const auto& n : notes) c_.observer.note(n);
  return r;
}

// Forced by the config, or probed: a KVM boot of side A's kernel that must print a record.
Accelerator Runner::choose_accel(GuestDriver& driver, const PreparedGuests& guests, std::string& reason) {
  reason = "set by guest.accelerator in the experiment file";
  Accelerator accel = experiment_.guest.accelerator.value_or(Accelerator::tcg);
  if (!experiment_.guest.accelerator) {
    AccelProbe probe;
    probe.kernel = guests.a.kernel;
    probe.work_dir = dir_.accel_probe_dir();
    fs::create_directories(probe.work_dir);
    probe.initrd = probe.work_dir / "initrd.img";
    const GuestJob job{.trial_id = "probe", .nonce = make_nonce(), .workloads = {}};
    write_guest_initrd(probe.initrd, GuestImage{.path = guests.base_image}, guests.a.modules_archive,
                       build_job_archive(job));
    probe.cmdline = std::string(kGuestKernelCmdline);
    probe.marker = record_prefix(job.nonce);
    const AccelChoice choice = choose_accelerator(driver, probe);
    fs::remove(probe.initrd);
    accel = choice.accelerator;
    reason = choice.reason;
    if (const auto w = accelerator_warning(choice); !w.empty()) c_.observer.note("warning: " + w);
  } else if (accel == Accelerator::tcg) {
    c_.observer.note("warning: TCG (emulation): the numbers describe the emulator as much as the kernel");
  }
  return accel;
}

// schedule.cpu_sets names CPUs of the hosts; libvirt would refuse a cpuset the host lacks only
// when the first guest starts (or pin to what exists), so a set a host cannot give is an error
// before anything boots. A host that does not say how many CPUs it has is not checked.
namespace {
void check_cpu_sets_fit(const std::vector<std::string>& sets, const std::vector<HostDriver>& hosts) {
  for (const HostDriver& h : hosts) {
    const HostVersions v = h.driver->versions();
    if (v.cpus <= 0) continue;
    for (const std::string& set : sets) {
      for (const std::int64_t cpu : rules::cpu_set_members(set)) {
        if (cpu < v.cpus) continue;
        throw Error(fmt::format("schedule.cpu_sets: \"{}\" names CPU {}, but host {} has {} CPU{} (0-{}): give CPU "
                                "sets within 0-{} on every host, or leave cpu_sets out",
                                set, cpu, v.uri.empty() ? h.name : v.uri, v.cpus, v.cpus == 1 ? "" : "s", v.cpus - 1,
                                v.cpus - 1));
      }
    }
  }
}
}  // namespace

// Each host's accelerator, and environment.json (also left in `environment`): this machine and the
// first host's hypervisor, and for a pool one entry per host.
std::vector<Accelerator> Runner::choose_accels(const std::vector<HostDriver>& hosts, const PreparedGuests& guests,
                                               nlohmann::json& environment) {
  std::vector<Accelerator> accels;
  nlohmann::json each = nlohmann::json::array();
  environment = nullptr;
  for (const HostDriver& h : hosts) {
    std::string reason;
    accels.push_back(choose_accel(*h.driver, guests, reason));
    nlohmann::json env = run_environment(h.driver->versions(), accels.back(), reason);
    if (environment.is_null()) environment = env;
    each.push_back(env);
  }
  if (hosts.size() > 1) environment["hosts"] = each;
  write_file_atomic(dir_.environment(), environment.dump(2) + "\n");
  return accels;
}

RunEnd Runner::run(const RunSession& session) {
  const ResultsLock lock(dir_.root());
  RunManifest manifest = read_manifest(dir_);
  if (manifest.status != RunStatus::running) return recorded_run_end(experiment_, dir_, manifest);
  const Recovered recovered = recover();
  if (session.resuming) {
    c_.observer.note(fmt::format("resuming {}: {} of {} trials done", dir_.root().string(), recovered.done.size(),
                                 read_plan(dir_).trials.size()));
  }
  // The connections are made while the guests are prepared: a first connection to libvirt's
  // embedded driver probes QEMU for most of a minute, about what a first image build takes.
  auto connecting = std::async(std::launch::async, [this] { return c_.connect(); });
  std::optional<PreparedGuests> prepared;
  try {
    prepared = c_.preparer.prepare(experiment_);
  } catch (...) {
    connecting.wait();  // no connection outlives the run that asked for it
    throw;
  }
  const PreparedGuests& guests = *prepared;
  write_file_atomic(dir_.kernels(), guests.kernels.dump(2) + "\n");
  write_file_atomic(dir_.image(), guests.image.dump(2) + "\n");
  const std::vector<HostDriver> hosts = connecting.get();
  if (hosts.empty()) throw InfraError("no host to run on");
  manifest.uri = session.uri;
  manifest.uris = session.uris;
  write_manifest(dir_, manifest);
  check_cpu_sets_fit(experiment_.schedule.cpu_sets, hosts);
  RunRecords records{.kernels = guests.kernels};
  const std::vector<Accelerator> accels = choose_accels(hosts, guests, records.environment);
  RunEnd end = execute(hosts, session, guests, accels, recovered, manifest);
  end.records = std::move(records);
  return end;
}

// Sizing (run/sizing.hpp): the first block alone, as written (no other lane starts a block meanwhile),
// then the sizes from its runs (or from the journal, resumed), the plan one block longer when a
// workload grew, and every other block at the new sizes.
RunSummary Runner::run_sized(const std::vector<HostDriver>& hosts, const ExecutionSpec& spec, JournalSink& sink,
                             Plan& plan, const std::set<std::string>& done_before, const Controls& controls) {
  const int block = plan.trials.front().block;
  std::vector<Trial> first;
  for (const Trial& t : plan.trials) {
    if (t.block == block) first.push_back(t);
  }
  std::set<std::string> done = done_before;
  RunSummary sized;
  if (!std::all_of(first.begin(), first.end(), [&](const Trial& t) { return done.contains(t.id); })) {
    Controls alone = controls;
    alone.extend = [] { return std::vector<Trial>{}; };
    sized = Orchestrator(hosts, spec, sink).run(first, done, alone);
    if (sized.interrupted || sized.stopped_early) return sized;
  }
  for (const Trial& t : first) done.insert(t.id);
  const Sizing sizing = size_runs(experiment_, read_journal(dir_.journal()), block);
  for (const std::string& line : describe_sizing(sizing)) c_.observer.note("sizing: " + line);
  if (sizing.resized() && plan.set_aside_blocks == 0) {
    plan = extend_plan(plan, 1);
    plan.set_aside_blocks = 1;
    write_plan(dir_, plan);
    c_.observer.note(fmt::format("sizing: block {} is set aside; one more block makes up for it", block));
  }
  ExecutionSpec rest = spec;
  rest.workloads = sized_workloads(experiment_.workloads, sizing);
  sink.set_workloads(rest.workloads, sizing.scales());
  RunSummary summary = Orchestrator(hosts, rest, sink).run(plan.trials, done, controls);
  summary.ran += sized.ran;
  summary.trial_seconds.insert(summary.trial_seconds.begin(), sized.trial_seconds.begin(), sized.trial_seconds.end());
  return summary;
}

RunEnd Runner::execute(const std::vector<HostDriver>& hosts, const RunSession& session, const PreparedGuests& guests,
                       const std::vector<Accelerator>& accels, const Recovered& recovered, RunManifest& manifest) {
  Plan plan = read_plan(dir_);
  ScratchRemover remover;
  // The loader allows several images (lanes, two guests, two disks) with abvm's own images only.
  std::vector<std::string> names;
  for (const HostDriver& h : hosts) names.push_back(h.name);
  std::vector<Lane> lanes = make_lanes(
      experiment_,
      [&](int slot) {
        const fs::path image = prepare_scratch_disk(experiment_.disk, dir_.root(), !session.resuming, slot);
        if (experiment_.disk.path.empty() && !session.keep_scratch) remover.paths.push_back(image);
        return image;
      },
      names);
  for (Lane& lane : lanes) lane.accelerator = accels[lane.host];
  JournalSink sink(dir_.journal(), experiment_.workloads, host_name(),
                   traits(experiment_.schedule.design).disks_per_guest);
  sink.remember(recovered.journal);
  SequentialLooks looks(experiment_, dir_, plan, c_, recovered.earlier_seconds);
  FirstBlockCheck first_block(experiment_, dir_, plan);
  ProgressFeed feed(experiment_, c_.observer, sink);
  Controls controls{
      .stop_requested = c_.stop_requested,
      .on_running = [&](const TrialProgress& p) { feed.running(p); },
      .on_trial_end = [&](const TrialProgress& p) { feed.ended(p); },
      .at_block_end =
          [&](int block) { return first_block.at_block_end(block) ? BlockDecision::stop : looks.at_block_end(block); },
      .extend = [&] { return looks.extend(); },
      .note = [&](const std::string& n) { c_.observer.note(n); }};
  const bool sizing = !not_sized(experiment_);
  if (sizing) sink.set_sizing_block(plan.trials.front().block);
  RunSummary summary;
  try {
    // A run killed right after its first block is checked before anything boots again.
    if (!first_block.done_before(recovered.done, recovered.journal)) {
      const ExecutionSpec spec = execution_spec(experiment_, guests, dir_, std::move(lanes));
      summary = sizing ? run_sized(hosts, spec, sink, plan, recovered.done, controls)
                       : Orchestrator(hosts, spec, sink).run(plan.trials, recovered.done, controls);
    }
  } catch (const InfraError& ex) {
    // The machine failed mid-run (results filesystem read-only or full, libvirt gone): the
    // guest is destroyed by then and every finished trial is on disk; say how to go on.
    c_.observer.finish();
    throw InfraError(fmt::format("{}; the running guest was destroyed and the finished trials are kept in {}; "
                                 "when the cause is fixed, continue with: abvm run --resume {}",
                                 ex.what(), dir_.root().string(), dir_.root().string()));
  }
  c_.observer.finish();
  RunEnd end{.trials_done = recovered.done.size() + summary.ran,
             .final_confidence = looks.confidence(),
             .stop_reason = looks.stop_reason(),
             .trial_seconds = recovered.trial_seconds};
  end.trial_seconds.insert(end.trial_seconds.end(), summary.trial_seconds.begin(), summary.trial_seconds.end());
  if (summary.interrupted) return end;
  end.status = summary.stopped_early ? RunStatus::stopped : RunStatus::complete;
  if (!first_block.failure().empty()) {
    end.status = RunStatus::failed;
    end.stop_reason.clear();
    end.failure = first_block.failure();
  }
  manifest.status = end.status;
  manifest.stop_reason = end.stop_reason;
  manifest.failure = end.failure;
  manifest.final_confidence = end.final_confidence;
  write_manifest(dir_, manifest);
  return end;
}

}  // namespace abvm
