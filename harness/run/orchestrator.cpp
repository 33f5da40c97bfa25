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

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json trial_result_json(const TrialResult& r) {
  json runs = json::array();
  for (const auto& run : r.runs) {
    runs.push_back({{"workload", run.workload},
                    {"side", to_string(run.side)},
                    {"index", run.index},
                    {"outcome", to_string(run.outcome)},
                    {"exit_status", run.exit_status},
                    {"detail", run.detail}});
  }
  json turns = json::array();
  for (const auto& t : r.turns) turns.push_back({{"step", t.step}, {"go", t.go}, {"ended", t.ended}});
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
          {"turns", turns},
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
  if (spec.design == Design::same_guest || spec.design == Design::lockstep) runs *= 2;
  return spec.boot_timeout + spec.run_timeout * runs;
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

namespace {

// The serials of the two disks a same-guest guest holds, by side.
std::string side_disk_serial(Side side) { return side == Side::a ? "abvm-scratch-a" : "abvm-scratch-b"; }

Side other(Side s) { return s == Side::a ? Side::b : Side::a; }

// The lane's image for the k-th disk or guest of a block (empty: the lane has no disk).
std::filesystem::path lane_scratch(const Lane& lane, std::size_t k) {
  if (lane.scratch.empty()) return {};
  return lane.scratch[std::min(k, lane.scratch.size() - 1)];
}

}  // namespace

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
  if (!lane.scratch.empty()) {
    if (spec.design == Design::same_guest) {
      // The block's first side gets vda and the lane's first image; the plan draws which it is.
      for (std::size_t k = 0; k < 2; ++k) {
        const Side s = k == 0 ? trial.side : other(trial.side);
        d.disks.push_back({.path = lane_scratch(lane, k), .options = spec.side(s).disk, .serial = side_disk_serial(s)});
      }
    } else {
      // Two guests at once each write to an image of their own: the block's second trial (its
      // position within the block) takes the second.
      const bool second_of_block = runs_two_guests_at_once(spec.design) && trial.position % 2 == 1;
      d.disks.push_back({.path = lane_scratch(lane, second_of_block ? 1 : 0), .options = side.disk});
    }
  }
  d.console_log = files.console_log();
  d.console_limit = spec.console_limit;
  d.accelerator = lane.accelerator;
  return d;
}

std::vector<TrialWorkload> trial_workloads(const ExecutionSpec& spec, const Trial& trial) {
  std::vector<TrialWorkload> out;
  for (const auto& w : spec.workloads) {
    if (spec.design != Design::same_guest) {
      out.push_back({.workload = w.name, .report_name = w.name, .side = trial.side, .disk_serial = "abvm-scratch",
                     .repetitions = w.repetitions});
      continue;
    }
    for (const Side s : {trial.side, other(trial.side)}) {
      out.push_back({.workload = w.name, .report_name = side_workload_name(w.name, s), .side = s,
                     .disk_serial = side_disk_serial(s), .repetitions = w.repetitions});
    }
  }
  return out;
}

namespace {

// Same-guest: each workload's runs alternate between the two sides, the first side starting
// every other run (first, other, other, first, ...): a side gains nothing from its place.
std::vector<JobStep> alternating_steps(const std::vector<Workload>& workloads) {
  std::vector<JobStep> out;
  for (std::size_t w = 0; w < workloads.size(); ++w) {
    const std::size_t first = 2 * w, second = 2 * w + 1;  // the job's two workloads of it
    for (const bool warm : {true, false}) {
      const int n = warm ? workloads[w].warmup : workloads[w].repetitions;
      for (int k = 0; k < n; ++k) {
        const bool swap = k % 2 == 1;
        out.push_back({.workload = swap ? second : first, .warmup = warm, .index = k});
        out.push_back({.workload = swap ? first : second, .warmup = warm, .index = k});
      }
    }
  }
  return out;
}

}  // namespace

GuestJob trial_job(const ExecutionSpec& spec, const Trial& trial, std::string nonce) {
  GuestJob job{.trial_id = trial.id, .nonce = std::move(nonce)};
  job.lockstep = spec.design == Design::lockstep;
  const auto measured = trial_workloads(spec, trial);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const std::size_t w = spec.design == Design::same_guest ? i / 2 : i;
    job.workloads.push_back({.workload = spec.workloads[w],
                             .report_name = measured[i].report_name,
                             .disk_serial = spec.design == Design::same_guest ? measured[i].disk_serial : ""});
  }
  if (spec.design == Design::same_guest) job.steps = alternating_steps(spec.workloads);
  return job;
}

namespace {

// Lockstep: the block's two guests take turns, one run each, in the block's order: turn t is run
// t/2 of guest t%2. A guest whose turn it is gets "go <run>" once it says READY for that run;
// the turn is over when that run's RUNEND is on its console, or its guest is gone (then the
// other runs on alone: the pair is void anyway).
class Lockstep {
 public:
  class Guest final : public GuestWatch {
   public:
    Guest(Lockstep& owner, std::size_t index) : owner_(owner), index_(index) {}
    void attempt_started(const std::string& nonce) override { owner_.started(index_, nonce); }
    void console(std::string_view text) override { owner_.scan(index_, text); }
    std::string input() override { return owner_.input(index_); }
    void attempt_ended() override { owner_.ended(index_); }
    std::vector<LockstepTurn> turns() override { return owner_.turns(index_); }

   private:
    Lockstep& owner_;
    std::size_t index_;
  };

  Guest& guest(std::size_t k) { return watches_[k]; }

  // Guest k's turns as the host saw them, in seconds since the block began.
  std::vector<LockstepTurn> turns(std::size_t k) {
    std::lock_guard lock(mutex_);
    return state_[k].turns;
  }

 private:
  struct State {
    std::string prefix;       // "ABVM1:<nonce>:" of the boot running now
    std::size_t scanned = 0;  // console bytes read (whole lines only)
    long ready = -1;          // the last run it said READY for
    long runs_ended = 0;      // RUNEND records seen
    long sent = -1;           // the last run it was told to go
    bool gone = false;        // its boot has ended (before its first boot: it is coming)
    std::vector<LockstepTurn> turns;
  };

  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  void started(std::size_t g, const std::string& nonce) {
    std::lock_guard lock(mutex_);
    state_[g] = State{.prefix = record_prefix(nonce), .gone = false};
  }
  void ended(std::size_t g) {
    std::lock_guard lock(mutex_);
    state_[g].gone = true;
  }

  // Reads the whole lines added since the last call: "<prefix><seq>:READY:<n>:..." and RUNEND.
  void scan(std::size_t g, std::string_view text) {
    std::lock_guard lock(mutex_);
    State& s = state_[g];
    if (s.scanned > text.size()) return;  // the console was cut: the guest is being stopped
    while (true) {
      const std::size_t nl = text.find('\n', s.scanned);
      if (nl == std::string_view::npos) break;
      std::string_view line = text.substr(s.scanned, nl - s.scanned);
      s.scanned = nl + 1;
      const std::size_t at = line.find(s.prefix);
      if (at == std::string_view::npos) continue;
      line.remove_prefix(at + s.prefix.size());
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      line.remove_prefix(colon + 1);
      if (line.starts_with("RUNEND:")) {
        ++s.runs_ended;
        if (!s.turns.empty() && s.turns.back().ended < 0) s.turns.back().ended = now();
      } else if (line.starts_with("READY:")) {
        s.ready = std::max(s.ready, std::strtol(std::string(line.substr(6, line.find(':', 6) - 6)).c_str(), nullptr, 10));
      }
    }
  }

  std::string input(std::size_t g) {
    std::lock_guard lock(mutex_);
    // The first turn not over yet: its guest is gone, or it has ended that run.
    std::size_t t = 0;
    while (true) {
      const State& s = state_[t % 2];
      const long run = static_cast<long>(t / 2);
      if (!s.gone && s.runs_ended <= run) break;
      if (state_[0].gone && state_[1].gone) return "";
      ++t;
      if (t > 2 * kMaxTurns) return "";
    }
    State& s = state_[g];
    const long run = static_cast<long>(t / 2);
    if (t % 2 != g || s.ready < run || s.sent >= run) return "";
    s.sent = run;
    s.turns.push_back({.step = run, .go = now()});
    return fmt::format("go {}\n", run);
  }

  static constexpr std::size_t kMaxTurns = 1 << 20;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::array<State, 2> state_;
  std::array<Guest, 2> watches_{Guest(*this, 0), Guest(*this, 1)};
};

}  // namespace

std::optional<TrialResult> Orchestrator::run_trial(const Trial& trial, const Lane& lane,
                                                   const std::function<bool()>& stop_requested, GuestWatch* watch) {
  const TrialFiles files = ResultsDir(spec_.results_dir).trial(trial.id);
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  if (ec) throw InfraError(fmt::format("cannot create {}: {}", files.dir.string(), ec.message()));

  TrialResult result;
  result.trial = trial;
  result.accelerator = lane.accelerator;
  result.host = hosts_[lane.host].name;
  result.lane = lane.name;
  const DomainSpec domain = trial_domain(spec_, trial, lane);
  const auto measured = trial_workloads(spec_, trial);
  write_file_atomic(files.domain_xml(), domain_xml(domain));
  const int max_attempts = 1 + std::max(0, spec_.infra_retries);
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    // A fresh nonce per boot: records of an earlier attempt can never count for this one.
    const GuestJob job = trial_job(spec_, trial, make_nonce());
    write_guest_initrd(domain.initrd, GuestImage{.path = spec_.base_image}, spec_.side(trial.side).modules_archive,
                       build_job_archive(job));
    bool interrupted = false;
    ConsoleHooks hooks{.done = [&](std::string_view console) {
      if (watch != nullptr) watch->console(console);
      if (stop_requested && stop_requested()) {
        interrupted = true;
        return true;
      }
      return console_has_end_record(console, job.nonce);
    }};
    if (watch != nullptr) hooks.input = [watch] { return watch->input(); };
    if (watch != nullptr) watch->attempt_started(job.nonce);
    GuestOutcome outcome = hosts_[lane.host].driver->run_guest(domain, trial_timeout(spec_), hooks);
    if (watch != nullptr) watch->attempt_ended();
    if (!spec_.keep_initrd) fs::remove(domain.initrd, ec);
    if (interrupted) return std::nullopt;
    // What the driver booted: a remote host's volume paths instead of this machine's files.
    if (!outcome.domain_xml.empty()) write_file_atomic(files.domain_xml(), outcome.domain_xml);
    write_file_atomic(domain.console_log, outcome.console);
    result.report = parse_guest_console(outcome.console, job.nonce);
    result.attempts = attempt;
    classify_trial(outcome, result.report, measured, result);
    check_sides([this](Side s) -> const SideExpectation& { return spec_.side(s).expect; }, measured, result);
    if (result.outcome != Outcome::infra_error || attempt == max_attempts) break;
    // Keep what the failed attempt left, then boot again: an infra error says nothing about
    // the kernel, so a new boot is a fair replacement (and it is recorded).
    result.retried.push_back(fmt::format("attempt {}: {}", attempt, result.detail));
    fs::rename(domain.console_log, files.attempt_console_log(attempt), ec);
    if (stop_requested && stop_requested()) return std::nullopt;
  }
  result.time = utc_iso8601(std::chrono::system_clock::now());
  if (watch != nullptr) result.turns = watch->turns();
  save_run_outputs(files, result.report);
  // The guest's text (dmesg, agent errors, command line) can be any bytes: a lying or broken
  // guest must not end the experiment here, so bytes that are not UTF-8 become U+FFFD.
  write_file_atomic(files.result(),
                    trial_result_json(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  return result;
}

Orchestrator::BlockRun Orchestrator::run_together(const std::vector<Trial>& batch, const Lane& lane,
                                                  const std::function<bool()>& stop_requested) {
  // Lockstep pairs the block's two guests turn by turn; a lone trial (the other is done) runs free.
  std::optional<Lockstep> lockstep;
  if (spec_.design == Design::lockstep && batch.size() == 2) lockstep.emplace();
  // However a trial ends, its partner must not wait for it any longer.
  const auto run_one = [this, &lane, &stop_requested, &lockstep](const Trial& trial, std::size_t k) {
    GuestWatch* w = lockstep ? &lockstep->guest(k) : nullptr;
    struct Gone {
      GuestWatch* w;
      ~Gone() {
        if (w != nullptr) w->attempt_ended();
      }
    } gone{w};
    return run_trial(trial, lane, stop_requested, w);
  };
  // The first trial runs on this thread, the others on one thread each; every thread is waited
  // for before an exception of any of them goes on (no guest is left running unwatched).
  std::vector<std::future<std::optional<TrialResult>>> others;
  for (std::size_t k = 1; k < batch.size(); ++k) {
    others.push_back(std::async(std::launch::async, [&run_one, trial = batch[k], k] { return run_one(trial, k); }));
  }
  BlockRun out;
  const auto take = [&](auto&& get) {
    try {
      out.results.push_back(get());
    } catch (...) {
      out.results.push_back(std::nullopt);
      if (!out.error) out.error = std::current_exception();
    }
  };
  take([&] { return run_one(batch[0], 0); });
  for (auto& other : others) take([&] { return other.get(); });
  return out;
}

Orchestrator::BlockRun Orchestrator::run_block(const std::vector<Trial>& trials, const Lane& lane,
                                               const std::function<bool()>& stop_requested) {
  if (runs_two_guests_at_once(spec_.design)) return run_together(trials, lane, stop_requested);
  BlockRun out;
  for (const Trial& t : trials) {
    if (out.error || (!out.results.empty() && !out.results.back())) {
      out.results.push_back(std::nullopt);
      continue;
    }
    try {
      out.results.push_back(run_trial(t, lane, stop_requested));
    } catch (...) {
      out.results.push_back(std::nullopt);
      out.error = std::current_exception();
    }
  }
  return out;
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
    std::optional<Orchestrator::BlockRun> run;
  };
  struct LaneWork {
    std::size_t block = 0;          // index into blocks_
    std::future<Orchestrator::BlockRun> future;
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
      for (const Trial& t : next->todo) {
        if (controls_.on_trial_start) controls_.on_trial_start(t, finished_.size(), summary_.trials.size());
      }
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
      Orchestrator::BlockRun run = lane->future.get();
      const std::size_t host = spec_.lanes[static_cast<std::size_t>(&lane - lanes_.data())].host;
      Block& block = blocks_[lane->block];
      lane.reset();
      if (moved_to_another_host(host, run, block)) continue;
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
  bool moved_to_another_host(std::size_t host, const Orchestrator::BlockRun& run, Block& block) {
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
  bool hand_over(const Orchestrator::BlockRun& run) {
    const bool whole = std::all_of(run.results.begin(), run.results.end(), [](const auto& r) { return r.has_value(); });
    if (!whole && runs_two_guests_at_once(spec_.design)) return false;
    for (const auto& r : run.results) {
      if (!r) return false;
      record(*r);
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
    if (!controls_.on_trial_end) return;
    const double session = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // The pace, not a trial's own length: lanes run trials side by side.
    controls_.on_trial_end({.result = &result,
                            .done = finished_.size(),
                            .total = summary_.trials.size(),
                            .session_seconds = session,
                            .mean_trial_seconds = session / static_cast<double>(summary_.ran)});
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
