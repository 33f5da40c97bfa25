#include "run/orchestrator.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "guest/domain_xml.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "results/directory.hpp"
#include "run/block_scheduler.hpp"
#include "run/designs/design.hpp"
#include "run/designs/watch.hpp"
#include "run/designs/windows.hpp"
#include "run/progress.hpp"

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json run_json(const RunResult& run) {
  json j = {{"workload", run.workload},
            {"side", to_string(run.side)},
            {"index", run.index},
            {"outcome", to_string(run.outcome)},
            {"exit_status", run.exit_status},
            {"detail", run.detail}};
  if (run.timing) {
    const RunTiming& t = *run.timing;
    j["timing"] = {{"go", t.go ? json(*t.go) : json(nullptr)}, {"start", t.start}, {"end", t.end},
                   {"fill", t.fill ? json(*t.fill) : json(nullptr)}, {"load_end", t.load_end},
                   {"clock_error", t.clock_error}};
  }
  if (run.overlap) {
    j["overlap"] = {{"partner", run.overlap->partner}, {"run", run.overlap->run}, {"pair", run.overlap->pair}};
  }
  return j;
}

// Every run the guest reported (warm-ups too), on its own clock: what the timings were mapped from.
json guest_runs_json(const GuestReport& report) {
  json out = json::array();
  for (const GuestRun& g : report.runs) {
    json j = {{"workload", g.workload}, {"index", g.index}, {"warmup", g.warmup}, {"exit_status", g.exit_status},
              {"t_start", g.t_start}, {"t_end", g.t_end}};
    if (g.window) {
      const GuestWindow& w = *g.window;
      j["window"] = {{"step", w.step},     {"t_ready", w.t_ready},       {"t_go", w.t_go}, {"t_fill", w.t_fill},
                     {"t_stop", w.t_stop}, {"t_load_end", w.t_load_end}, {"fills", w.fills}};
    }
    out.push_back(std::move(j));
  }
  return out;
}

json trial_result_json(const TrialResult& r) {
  json runs = json::array();
  for (const auto& run : r.runs) runs.push_back(run_json(run));
  json typed = json::array();
  for (const auto& w : r.clock.typed) typed.push_back({{"word", w.word}, {"at", w.at}});
  json report = {
      {"begun", r.report.begun},
      {"ended", r.report.ended},
      {"boot_uptime", r.report.boot_uptime},
      {"kernel_release", r.report.kernel_release},
      {"kernel_version", r.report.kernel_version},
      {"cmdline", r.report.cmdline},
      {"blk_features", r.report.blk_features ? json(*r.report.blk_features) : json(nullptr)},
      {"access_platform", r.report.access_platform},
      {"module_params", r.report.module_params},
      {"dmesg", r.report.dmesg},
      {"agent_errors", r.report.agent_errors},
      {"problems", r.report.problems},
      {"runs", guest_runs_json(r.report)},
  };
  return {{"trial", r.trial.id},
          {"side", to_string(r.trial.side)},
          {"block", r.trial.block},
          {"position", r.trial.position},
          {"outcome", to_string(r.outcome)},
          {"detail", r.detail},
          {"attempts", r.attempts},
          {"retried", r.retried},
          {"seconds", r.seconds},
          {"host", r.host},
          {"lane", r.lane},
          {"time", r.time},
          {"accelerator", to_string(r.accelerator)},
          {"runs", runs},
          {"typed", typed},
          {"vcpu_swap", r.clock.vcpu_swap ? json{{"swaps", r.clock.vcpu_swap->swaps}, {"off", r.clock.vcpu_swap->off}}
                                          : json(nullptr)},
          {"guest", report}};
}

// Raw tool output of every run the guest reported (warm-ups too), one file each.
void save_run_outputs(const TrialFiles& files, const GuestReport& report) {
  for (const auto& run : report.runs) write_file_atomic(files.run_output(run.workload, run.warmup, run.index), run.output);
}

}  // namespace

std::chrono::milliseconds trial_timeout(const ExecutionSpec& spec) {
  std::int64_t runs = 0;
  for (const auto& w : spec.workloads) runs += w.repetitions + w.warmup;
  // A same-guest boot runs every workload for both sides; a lockstep guest waits while its
  // partner runs as many runs as it does.
  return spec.boot_timeout + spec.run_timeout * (runs * traits(spec.design).runs_per_own_run);
}

Orchestrator::Orchestrator(GuestDriver& driver, ExecutionSpec spec, TrialSink& sink)
    : Orchestrator(std::vector<HostDriver>{{.name = "", .driver = &driver}}, std::move(spec), sink) {}

Orchestrator::Orchestrator(std::vector<HostDriver> hosts, ExecutionSpec spec, TrialSink& sink)
    : hosts_(std::move(hosts)), spec_(std::move(spec)), sink_(sink) {
  if (spec_.lanes.empty()) throw std::invalid_argument("Orchestrator: no lane");
  for (const Lane& lane : spec_.lanes) {
    if (lane.host >= hosts_.size()) throw std::invalid_argument("Orchestrator: a lane names no host");
  }
}

DomainSpec trial_domain(const ExecutionSpec& spec, const Trial& trial, const Lane& lane) {
  const SideBoot& side = spec.side(trial.side);
  const TrialFiles files = ResultsDir(spec.results_dir).trial(trial.id);
  DomainSpec d;
  d.name = domain_name(trial.id, static_cast<long>(trial.position));
  d.kernel = side.kernel;
  d.initrd = files.initrd();
  d.cmdline = side.cmdline;
  d.machine = side.machine;
  d.host_cpus = lane.host_cpus;
  d.disks = block_design(spec.design).disks(spec, trial, lane);
  d.console_log = files.console_log();
  d.console_limit = spec.console_limit;
  d.accelerator = lane.accelerator;
  return d;
}

std::vector<TrialWorkload> trial_workloads(const ExecutionSpec& spec, const Trial& trial) {
  return block_design(spec.design).workloads(spec, trial);
}

GuestJob trial_job(const ExecutionSpec& spec, const Trial& trial, std::string nonce) {
  return block_design(spec.design).job(spec, trial, std::move(nonce));
}

void LiveTrials::begin(const Trial& trial) {
  std::lock_guard lock(mutex_);
  live_.push_back(trial);
  ++version_;
}

void LiveTrials::end(const std::string& id) {
  std::lock_guard lock(mutex_);
  std::erase_if(live_, [&](const Trial& t) { return t.id == id; });
  ++version_;
}

std::vector<Trial> LiveTrials::now() const {
  std::lock_guard lock(mutex_);
  return live_;
}

std::optional<std::vector<Trial>> LiveTrials::changed(std::uint64_t& seen) const {
  std::lock_guard lock(mutex_);
  if (seen == version_) return std::nullopt;
  seen = version_;
  return live_;
}

std::optional<TrialResult> Orchestrator::run_trial(const Trial& trial, const Lane& lane, const StopRequest& stop,
                                                   const TrialBoot& boot) {
  // Running from here to its return (or exception): the progress line's "running".
  live_.begin(trial);
  struct Ended {
    LiveTrials& live;
    const std::string& id;
    ~Ended() { live.end(id); }
  } ended{live_, trial.id};
  const TrialFiles files = ResultsDir(spec_.results_dir).trial(trial.id);
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  if (ec) throw InfraError(fmt::format("cannot create {}: {}", files.dir.string(), ec.message()));

  TrialResult result;
  result.trial = trial;
  result.accelerator = lane.accelerator;
  result.host = hosts_[lane.host].name;
  result.lane = lane.name;
  result.retried = take_set_aside(trial.id);
  const DomainSpec domain = trial_domain(spec_, trial, lane);
  const auto measured = trial_workloads(spec_, trial);
  write_file_atomic(files.domain_xml(), domain_xml(domain));
  GuestWatch own_watch;
  GuestWatch& watch = boot.watch != nullptr ? *boot.watch : own_watch;
  const int last = boot.first_attempt - 1 + (boot.attempts > 0 ? boot.attempts : 1 + std::max(0, spec_.infra_retries));
  for (int attempt = boot.first_attempt; attempt <= last; ++attempt) {
    // A fresh nonce per boot: records of an earlier attempt can never count for this one.
    const GuestJob job = trial_job(spec_, trial, make_nonce());
    write_guest_initrd(domain.initrd, GuestImage{.path = spec_.base_image}, spec_.side(trial.side).modules_archive,
                       build_job_archive(job));
    bool interrupted = false;
    ConsoleHooks hooks{.done =
                           [&](std::string_view console) {
                             watch.console(console);
                             if (stop && stop()) {
                               interrupted = true;
                               return true;
                             }
                             return console_has_end_record(console, job.nonce);
                           },
                       .input = [&] { return watch.input(); },
                       .give_up = [&] { return watch.give_up(); },
                       .bell = watch.bell(),
                       .on_running = [&](DomainStatsReader reader) { watch.stats_reader(std::move(reader)); },
                       .on_vcpus = [&](VcpuPlacer placer) { watch.vcpu_placer(std::move(placer)); }};
    watch.attempt_started(job.nonce);
    GuestOutcome outcome = hosts_[lane.host].driver->run_guest(domain, trial_timeout(spec_), hooks);
    watch.attempt_ended();
    watch.stats_reader(nullptr);  // its domain is gone
    if (!spec_.keep_initrd) fs::remove(domain.initrd, ec);
    if (interrupted) return std::nullopt;
    // What the driver booted: a remote host's volume paths instead of this machine's files.
    if (!outcome.domain_xml.empty()) write_file_atomic(files.domain_xml(), outcome.domain_xml);
    write_file_atomic(domain.console_log, outcome.console);
    result.report = parse_guest_console(outcome.console, job.nonce);
    result.clock = watch.log();
    result.attempts = attempt;
    classify_trial(outcome, result.report, measured, result);
    check_sides([this](Side s) -> const SideExpectation& { return spec_.side(s).expect; }, measured, result);
    time_runs(result.report, result.clock, result.runs);
    cost_windows(result.report, result.clock, result.runs);
    if (result.outcome != Outcome::infra_error || attempt == last) break;
    // Keep what the failed attempt left, then boot again: an infra error says nothing about
    // the kernel, so a new boot is a fair replacement (and it is recorded).
    result.retried.push_back(fmt::format("attempt {}: {}", attempt, result.detail));
    fs::rename(domain.console_log, files.attempt_console_log(attempt), ec);
    if (stop && stop()) return std::nullopt;
  }
  result.time = utc_iso8601(std::chrono::system_clock::now());
  return result;
}

void Orchestrator::set_aside(const Trial& trial, int attempt, const std::string& why) {
  const TrialFiles files = ResultsDir(spec_.results_dir).trial(trial.id);
  std::error_code ec;
  fs::rename(files.console_log(), files.attempt_console_log(attempt), ec);
  std::lock_guard lock(set_aside_mutex_);
  set_aside_[trial.id].push_back(fmt::format("attempt {}: {}", attempt, why));
}

std::vector<std::string> Orchestrator::take_set_aside(const std::string& trial) {
  std::lock_guard lock(set_aside_mutex_);
  const auto it = set_aside_.find(trial);
  if (it == set_aside_.end()) return {};
  std::vector<std::string> out = std::move(it->second);
  set_aside_.erase(it);
  return out;
}

void Orchestrator::save(const TrialResult& result) {
  const TrialFiles files = ResultsDir(spec_.results_dir).trial(result.trial.id);
  save_run_outputs(files, result.report);
  // The guest's text (dmesg, agent errors, command line) can be any bytes: a lying or broken
  // guest must not end the experiment here, so bytes that are not UTF-8 become U+FFFD.
  write_file_atomic(files.result(),
                    trial_result_json(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

BlockRun Orchestrator::run_block(const std::vector<Trial>& trials, const Lane& lane, const StopRequest& stop) {
  BlockRun run = block_design(spec_.design).run_block(*this, spec_, trials, lane, stop);
  std::vector<TrialResult*> ended;
  for (auto& r : run.results) {
    if (r) ended.push_back(&*r);
  }
  pair_overlaps(ended);
  for (const TrialResult* r : ended) save(*r);
  return run;
}

RunSummary Orchestrator::run(std::vector<Trial> trials, const std::set<std::string>& done, const Controls& controls) {
  return BlockScheduler(*this, spec_, sink_, std::move(trials), done, controls).run();
}

}  // namespace abvm
