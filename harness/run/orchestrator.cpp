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
                       .on_running = [&](DomainStatsReader reader) { watch.stats_reader(std::move(reader)); }};
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

namespace {

// Runs blocks on every lane at once and hands their trials over in plan order (see the header).
class BlockScheduler {
 public:
  BlockScheduler(Orchestrator& o, const ExecutionSpec& spec, TrialSink& sink, std::vector<Trial> trials,
                 const std::set<std::string>& done, const Controls& controls)
      : o_(o), spec_(spec), sink_(sink), controls_(controls), finished_(done), lanes_(spec.lanes.size()),
        hosts_(o.hosts()) {
    summary_.trials = std::move(trials);
    add_blocks(0);
  }

  RunSummary run() {
    try {
      loop();
    } catch (...) {
      abort_ = true;
      wait_all();
      throw;
    }
    wait_all();
    if (error_) std::rethrow_exception(error_);
    return std::move(summary_);
  }

 private:
  struct Block {
    int number = 0;
    std::vector<Trial> todo;        // its trials not done yet, in plan order
    bool dispatched = false;
    std::optional<BlockRun> run;
  };
  struct LaneWork {
    std::size_t block = 0;          // index into blocks_
    std::future<BlockRun> future;
    std::chrono::steady_clock::time_point started;
  };
  struct HostState {
    bool in_pool = true;
    int strikes = 0;                // blocks in a row that ended in an infrastructure error
    std::string why;                // why it left the pool
  };

  // Blocks of the trials from `first` on, in order of first appearance.
  void add_blocks(std::size_t first) {
    for (std::size_t i = first; i < summary_.trials.size(); ++i) {
      const Trial& t = summary_.trials[i];
      if (blocks_.empty() || blocks_.back().number != t.block) blocks_.push_back({.number = t.block});
      if (finished_.contains(t.id)) {
        ++summary_.skipped;
      } else {
        blocks_.back().todo.push_back(t);
      }
    }
  }

  bool stop_asked() const { return controls_.stop_requested && controls_.stop_requested(); }
  bool running() const {
    return std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l.has_value(); });
  }

  void loop() {
    while (true) {
      if (!abort_ && stop_asked()) {
        summary_.interrupted = true;
        abort_ = true;
      }
      if (!abort_) dispatch();
      collect();
      report_running();
      if (!summary_.stopped_early) commit();
      if (abort_ && !running()) return;
      if (!abort_ && !running() && next_commit_ == blocks_.size()) {
        const std::size_t before = summary_.trials.size();
        std::vector<Trial> more = controls_.extend ? controls_.extend() : std::vector<Trial>{};
        if (more.empty()) return;
        summary_.trials.insert(summary_.trials.end(), more.begin(), more.end());
        add_blocks(before);
      }
    }
  }

  // Every idle lane of a host in the pool takes the next block not yet dispatched.
  void dispatch() {
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      if (lanes_[l] || !hosts_[spec_.lanes[l].host].in_pool) continue;
      const auto next = std::find_if(blocks_.begin(), blocks_.end(),
                                     [](const Block& b) { return !b.dispatched && !b.todo.empty(); });
      if (next == blocks_.end()) return;
      next->dispatched = true;
      const Lane& lane = spec_.lanes[l];
      lanes_[l] = LaneWork{.block = static_cast<std::size_t>(next - blocks_.begin()),
                           .future = std::async(std::launch::async,
                                                [this, trials = next->todo, &lane] {
                                                  return o_.run_block(trials, lane, [this] {
                                                    return abort_.load() || stop_asked();
                                                  });
                                                }),
                           .started = std::chrono::steady_clock::now()};
    }
  }

  // Takes what the lanes have finished; waits a little when none has.
  void collect() {
    bool any = false;
    for (auto& lane : lanes_) {
      if (!lane || lane->future.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) continue;
      any = true;
      BlockRun run = lane->future.get();
      const std::size_t host = spec_.lanes[static_cast<std::size_t>(&lane - lanes_.data())].host;
      Block& block = blocks_[lane->block];
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - lane->started).count();
      lane.reset();
      if (moved_to_another_host(host, run, block)) continue;
      block_seconds_.push_back(seconds);
      if (run.error) {
        // The run's only host failed: stop the other lanes, hand over what is done, then say why.
        if (!error_) error_ = run.error;
        abort_ = true;
      }
      block.run = std::move(run);
    }
    if (!any && running()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // Pool: a host that failed, or whose block ended in an infrastructure error, while another host
  // is in the pool: the block goes back to the queue whole, and the host leaves the pool when it is
  // unreachable or has failed kHostInfraStrikes blocks in a row. True when the block was moved.
  bool moved_to_another_host(std::size_t host, const BlockRun& run, Block& block) {
    if (hosts_.size() < 2 || abort_) return false;
    const bool infra = std::any_of(run.results.begin(), run.results.end(),
                                   [](const auto& r) { return r && r->outcome == Outcome::infra_error; });
    HostState& h = hosts_[host];
    if (!run.error && !infra) {
      h.strikes = 0;
      return false;
    }
    const auto others = std::count_if(hosts_.begin(), hosts_.end(), [&](const HostState& x) { return x.in_pool; }) -
                        (h.in_pool ? 1 : 0);
    // The last host's infrastructure errors are data, as on one host.
    if (!run.error && others == 0) return false;
    if (run.error) {
      try {
        std::rethrow_exception(run.error);
      } catch (const InfraError& e) {
        leave_pool(host, e.what());
      } catch (...) {
        return false;  // not the host's doing (the results directory, a bug): stop as always
      }
      if (others == 0) {
        error_ = std::make_exception_ptr(InfraError(no_host_left()));
        abort_ = true;
        return true;
      }
    } else if (++h.strikes >= kHostInfraStrikes) {
      leave_pool(host, fmt::format("{} blocks in a row ended in an infrastructure error", h.strikes));
    }
    block.dispatched = false;
    if (controls_.note) {
      controls_.note(fmt::format("block {} moves to another host ({} {})", block.number, o_.host_name(host),
                                 run.error ? "failed" : "had an infrastructure error"));
    }
    return true;
  }

  void leave_pool(std::size_t host, const std::string& why) {
    if (!hosts_[host].in_pool) return;
    hosts_[host].in_pool = false;
    hosts_[host].why = why;
    if (controls_.note) controls_.note(fmt::format("host {} leaves the pool: {}", o_.host_name(host), why));
  }

  std::string no_host_left() const {
    std::vector<std::string> each;
    for (std::size_t h = 0; h < hosts_.size(); ++h) each.push_back(fmt::format("{} ({})", o_.host_name(h), hosts_[h].why));
    return fmt::format("no host is left in the pool: {}", fmt::join(each, "; "));
  }

  // Hands over the finished blocks that are next in plan order, and makes the looks after them.
  // After an abort (Ctrl-C, a failed host) it hands over what is complete and stops at the first
  // block that is not.
  void commit() {
    while (next_commit_ < blocks_.size()) {
      Block& b = blocks_[next_commit_];
      if (!b.todo.empty() && !b.run) return;
      if (!b.todo.empty() && !hand_over(*b.run)) {
        summary_.interrupted = summary_.interrupted || !error_;
        abort_ = true;
        return;
      }
      ++next_commit_;
      // No look while stopping: one missed by an interruption is made on --resume.
      if (!abort_ && !b.todo.empty() && controls_.at_block_end && controls_.at_block_end(b.number) == BlockDecision::stop) {
        summary_.stopped_early = true;
        abort_ = true;
        return;
      }
    }
  }

  // Records a block's results; false when some did not end. Trials that run one after the other
  // keep those that ended before; trials that run together are dropped together (they run again,
  // together, on --resume).
  bool hand_over(const BlockRun& run) {
    const bool whole = std::all_of(run.results.begin(), run.results.end(), [](const auto& r) { return r.has_value(); });
    if (!whole && traits(spec_.design).guests_at_once) return false;
    for (const auto& r : run.results) {
      if (!r) return false;
      // commit() hands an unfinished block over again at every turn of the loop while other
      // lanes end: what is recorded already is not recorded twice.
      if (!finished_.contains(r->trial.id)) record(*r);
    }
    return true;
  }

  // A finished trial goes to the sink, then to the ledger (only then is it done).
  void record(const TrialResult& result) {
    sink_.on_trial_finished(result);
    append_line_durable(ResultsDir(spec_.results_dir).ledger(), to_ledger_line({.trial = result.trial.id,
                                                                                 .side = result.trial.side,
                                                                                 .outcome = result.outcome,
                                                                                 .attempts = result.attempts,
                                                                                 .seconds = result.seconds,
                                                                                 .time = result.time,
                                                                                 .detail = result.detail}));
    finished_.insert(result.trial.id);
    ++summary_.ran;
    if (controls_.on_trial_end) controls_.on_trial_end(progress(&result, o_.live().now()));
  }

  // Tells the caller the trials running now, when they changed.
  void report_running() {
    if (!controls_.on_running) return;
    if (auto now = o_.live().changed(live_seen_)) controls_.on_running(progress(nullptr, std::move(*now)));
  }

  TrialProgress progress(const TrialResult* result, std::vector<Trial> running) const {
    const auto now = std::chrono::steady_clock::now();
    const auto waiting = std::count_if(blocks_.begin(), blocks_.end(),
                                       [](const Block& b) { return !b.dispatched && !b.todo.empty(); });
    std::vector<double> running_elapsed;
    for (const auto& lane : lanes_) {
      if (lane) running_elapsed.push_back(std::chrono::duration<double>(now - lane->started).count());
    }
    std::size_t lanes = 0;
    for (const Lane& lane : spec_.lanes) lanes += hosts_[lane.host].in_pool ? 1 : 0;
    return {.result = result,
            .running = std::move(running),
            .done = finished_.size(),
            .total = summary_.trials.size(),
            .session_seconds = std::chrono::duration<double>(now - start_).count(),
            .remaining_seconds = estimate_remaining(block_seconds_, static_cast<std::size_t>(waiting),
                                                    running_elapsed, lanes)};
  }

  void wait_all() {
    for (auto& lane : lanes_) {
      if (!lane) continue;
      try {
        lane->future.get();
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      lane.reset();
    }
  }

  Orchestrator& o_;
  const ExecutionSpec& spec_;
  TrialSink& sink_;
  const Controls& controls_;
  std::set<std::string> finished_;
  std::vector<std::optional<LaneWork>> lanes_;
  std::vector<HostState> hosts_;
  std::vector<Block> blocks_;
  std::size_t next_commit_ = 0;
  std::vector<double> block_seconds_;  // wall time of each block run whole in this session
  std::uint64_t live_seen_ = 0;         // o_.live()'s version last reported
  std::atomic<bool> abort_{false};
  std::exception_ptr error_;
  RunSummary summary_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

RunSummary Orchestrator::run(std::vector<Trial> trials, const std::set<std::string>& done, const Controls& controls) {
  return BlockScheduler(*this, spec_, sink_, std::move(trials), done, controls).run();
}

}  // namespace abvm
