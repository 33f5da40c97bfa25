#include "run/block_scheduler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>

#include "core/error.hpp"
#include "core/files.hpp"
#include "results/directory.hpp"
#include "run/designs/design.hpp"
#include "run/progress.hpp"

namespace abvm {

BlockScheduler::BlockScheduler(Orchestrator& o, const ExecutionSpec& spec, TrialSink& sink, std::vector<Trial> trials,
                               const std::set<std::string>& done, const Controls& controls)
    : o_(o), spec_(spec), sink_(sink), controls_(controls), finished_(done), lanes_(spec.lanes.size()),
      hosts_(o.hosts()) {
  summary_.trials = std::move(trials);
  add_blocks(0);
}

RunSummary BlockScheduler::run() {
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

void BlockScheduler::add_blocks(std::size_t first) {
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

bool BlockScheduler::running() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l.has_value(); });
}

void BlockScheduler::loop() {
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

void BlockScheduler::dispatch() {
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

void BlockScheduler::collect() {
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

bool BlockScheduler::moved_to_another_host(std::size_t host, const BlockRun& run, Block& block) {
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

void BlockScheduler::leave_pool(std::size_t host, const std::string& why) {
  if (!hosts_[host].in_pool) return;
  hosts_[host].in_pool = false;
  hosts_[host].why = why;
  if (controls_.note) controls_.note(fmt::format("host {} leaves the pool: {}", o_.host_name(host), why));
}

std::string BlockScheduler::no_host_left() const {
  std::vector<std::string> each;
  for (std::size_t h = 0; h < hosts_.size(); ++h) each.push_back(fmt::format("{} ({})", o_.host_name(h), hosts_[h].why));
  return fmt::format("no host is left in the pool: {}", fmt::join(each, "; "));
}

void BlockScheduler::commit() {
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

bool BlockScheduler::hand_over(const BlockRun& run) {
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

void BlockScheduler::record(const TrialResult& result) {
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
  summary_.trial_seconds.push_back(result.seconds);
  if (controls_.on_trial_end) controls_.on_trial_end(progress(&result, o_.live().now()));
}

void BlockScheduler::report_running() {
  if (!controls_.on_running) return;
  if (auto now = o_.live().changed(live_seen_)) controls_.on_running(progress(nullptr, std::move(*now)));
}

TrialProgress BlockScheduler::progress(const TrialResult* result, std::vector<Trial> running) const {
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

void BlockScheduler::wait_all() {
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

}  // namespace abvm
