// The host's side of a paced block (paced.hpp), and the two paced designs that run their blocks so.
#include "run/designs/paced.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <future>

#include "run/designs/design.hpp"

namespace abvm {

class PacedBlock::Watch final : public GuestWatch {
 public:
  Watch(PacedBlock& block, std::size_t k) : block_(block), k_(k) {}
  void attempt_started(const std::string& nonce) override { GuestWatch::attempt_started(nonce); }
  std::optional<std::string> give_up() override { return block_.give_up(k_); }
  void attempt_ended() override {
    if (block_.swap_) {
      block_.swap_->stop(k_);
      note_vcpu_swap(block_.swap_->record());
    }
    block_.on_gone(k_);
  }
  void vcpu_placer(VcpuPlacer placer) override {
    if (block_.swap_) block_.swap_->start(k_, std::move(placer));
  }

 protected:
  void on_record(std::uint64_t, std::string_view type, std::string_view payload) override {
    block_.on_record(k_, type, payload);
  }
  std::string next_word() override { return block_.next_word(k_); }

 private:
  PacedBlock& block_;
  std::size_t k_;
};

PacedBlock::PacedBlock(Pacing pacing, std::size_t guests, Deadlines deadlines, std::unique_ptr<VcpuSwap> swap)
    : pacing_(pacing), deadlines_(deadlines), swap_(std::move(swap)), guests_(guests) {
  for (std::size_t k = 0; k < guests; ++k) {
    watches_.push_back(std::make_unique<Watch>(*this, k));
    guests_[k].bell = watches_[k]->bell();
  }
}

PacedBlock::~PacedBlock() = default;

GuestWatch& PacedBlock::guest(std::size_t k) { return *watches_[k]; }

bool PacedBlock::aborted(std::size_t k) const {
  std::lock_guard lock(mutex_);
  return guests_[k].aborted;
}

std::optional<std::string> PacedBlock::failure(std::size_t k) const {
  std::lock_guard lock(mutex_);
  return guests_[k].failure;
}

void PacedBlock::on_record(std::size_t k, std::string_view type, std::string_view payload) {
  if (type != "READY" && type != "DONE" && type != "END") return;
  long step = -1;
  if (type != "END") {
    const auto [end, ec] = std::from_chars(payload.data(), payload.data() + payload.size(), step);
    if (ec != std::errc() || step < 0) return;
  }
  std::lock_guard lock(mutex_);
  Guest& g = guests_[k];
  if (type == "READY") g.ready = std::max(g.ready, step);
  if (type == "DONE") g.done = std::max(g.done, step);
  if (type == "END") g.ended = true;
  advance();
}

void PacedBlock::on_gone(std::size_t k) {
  std::lock_guard lock(mutex_);
  guests_[k].gone = true;
  advance();
}

std::string PacedBlock::next_word(std::size_t k) {
  std::lock_guard lock(mutex_);
  advance();  // deadlines pass while nothing is printed
  Guest& g = guests_[k];
  if (g.words.empty()) return "";
  std::string word = std::move(g.words.front());
  g.words.pop_front();
  return word;
}

std::optional<std::string> PacedBlock::give_up(std::size_t k) {
  std::lock_guard lock(mutex_);
  advance();
  Guest& g = guests_[k];
  if (!g.failure || g.failure_taken) return std::nullopt;
  g.failure_taken = true;
  return g.failure;
}

void PacedBlock::fail(std::size_t k, std::string why) {
  if (!guests_[k].failure) guests_[k].failure = std::move(why);
}

// A guest failed or went before its END: every guest still running is told to abort.
bool PacedBlock::abort_survivors() {
  const bool broken = std::any_of(guests_.begin(), guests_.end(),
                                  [](const Guest& g) { return g.failure || (g.gone && !g.ended); });
  if (!broken) return false;
  for (Guest& g : guests_) {
    if (g.gone || g.ended || g.aborted || g.failure) continue;
    g.aborted = true;
    g.words.push_back("abort");
    g.bell->ring();
  }
  return true;
}

void PacedBlock::open_window(const std::vector<std::size_t>& who) {
  for (std::size_t k : who) {
    guests_[k].go = step_;
    guests_[k].words.push_back(fmt::format("go {}", step_));
    guests_[k].bell->ring();
  }
  open_ = true;
  since_ = Clock::now();
}

void PacedBlock::close_window(const std::vector<std::size_t>& who) {
  for (std::size_t k : who) {
    guests_[k].words.push_back(fmt::format("stop {}", step_));
    guests_[k].bell->ring();
  }
  open_ = false;
  since_ = Clock::now();
}

void PacedBlock::advance() {
  if (abort_survivors()) return;
  if (std::all_of(guests_.begin(), guests_.end(), [](const Guest& g) { return g.ended; })) return;
  if (pacing_ == Pacing::turns) {
    advance_turns();
  } else {
    advance_together();
  }
  abort_survivors();
}

void PacedBlock::advance_together() {
  std::vector<std::size_t> all(guests_.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  if (!open_) {
    if (std::all_of(guests_.begin(), guests_.end(), [&](const Guest& g) { return g.ready >= step_; })) {
      open_window(all);
      return;
    }
    const auto deadline = step_ == 0 ? deadlines_.first_ready : deadlines_.ready;
    if (waited() <= limit(deadline)) return;
    for (std::size_t k : all) {
      if (guests_[k].ready < step_ && !guests_[k].ended) {
        fail(k, fmt::format("did not say READY for step {} within {:.0f} s of {} (its partner waited for it)", step_,
                            limit(deadline), step_ == 0 ? "the block's start" : "the step's start"));
      }
    }
    return;
  }
  if (std::all_of(guests_.begin(), guests_.end(), [&](const Guest& g) { return g.done >= step_; })) {
    close_window(all);
    ++step_;
    return;
  }
  if (waited() <= limit(deadlines_.window)) return;
  for (std::size_t k : all) {
    if (guests_[k].done < step_) {
      fail(k, fmt::format("did not end step {} within {:.0f} s of the go (it hung, or the go was lost)", step_,
                          limit(deadlines_.window)));
    }
  }
}

void PacedBlock::advance_turns() {
  const std::size_t k = turn_;
  Guest& g = guests_[k];
  if (!open_) {
    const bool others_quiet = std::all_of(guests_.begin(), guests_.end(), [&](const Guest& o) {
      return &o == &g || quiet(o);
    });
    if (g.ready >= step_ && others_quiet) {
      open_window({k});
      return;
    }
    const auto deadline = step_ == 0 && k == 0 ? deadlines_.first_ready : deadlines_.ready;
    if (waited() <= limit(deadline)) return;
    for (std::size_t j = 0; j < guests_.size(); ++j) {
      const Guest& o = guests_[j];
      if ((j == k && o.ready < step_ && !o.ended) || (j != k && !quiet(o))) {
        fail(j, fmt::format("did not say READY within {:.0f} s (the other guest waited for its turn)", limit(deadline)));
      }
    }
    return;
  }
  if (g.done >= step_) {
    close_window({k});
    if (++turn_ == guests_.size()) {
      turn_ = 0;
      ++step_;
    }
    return;
  }
  if (waited() > limit(deadlines_.window)) {
    fail(k, fmt::format("did not end step {} within {:.0f} s of the go (it hung, or the go was lost)", step_,
                        limit(deadlines_.window)));
  }
}

namespace {

// Runs each trial on a thread of its own, followed by the block's watch.
BlockRun run_at_once(TrialBooter& booter, PacedBlock& block, const std::vector<Trial>& trials, const Lane& lane,
                     const StopRequest& stop, int attempt) {
  const auto run_one = [&](std::size_t k) {
    return booter.run_trial(trials[k], lane, stop,
                            {.watch = &block.guest(k), .first_attempt = attempt, .attempts = 1});
  };
  // Every thread is waited for before an exception of any of them goes on: no guest is left
  // running unwatched.
  std::vector<std::future<std::optional<TrialResult>>> others;
  for (std::size_t k = 1; k < trials.size(); ++k) others.push_back(std::async(std::launch::async, run_one, k));
  BlockRun out;
  const auto take = [&](auto&& get) {
    try {
      out.results.push_back(get());
    } catch (...) {
      out.results.push_back(std::nullopt);
      if (!out.error) out.error = std::current_exception();
    }
  };
  take([&] { return run_one(0); });
  for (auto& other : others) take([&] { return other.get(); });
  return out;
}

// Why the block is void (a guest told to abort, or an infrastructure error), "" when it stands.
// The survivors become partner-failed, naming the partner that failed and how.
std::string judge(const PacedBlock& block, BlockRun& run) {
  std::string why;
  for (std::size_t k = 0; k < run.results.size(); ++k) {
    if (!run.results[k]) return "";
    // A guest the block gave up on says why first (the driver only saw a timeout).
    if (auto failure = block.failure(k); failure && run.results[k]->outcome == Outcome::timeout) {
      TrialResult& r = *run.results[k];
      r.detail = *failure + "; " + r.detail;
      for (RunResult& x : r.runs) x.detail = r.detail;
    }
  }
  for (std::size_t k = 0; k < run.results.size(); ++k) {
    if (!block.aborted(k)) continue;
    std::string partner = "its partner";
    for (std::size_t j = 0; j < run.results.size(); ++j) {
      if (j == k || block.aborted(j)) continue;
      const TrialResult& p = *run.results[j];
      partner = fmt::format("its partner {} ended {}{}", p.trial.id, to_string(p.outcome),
                            p.detail.empty() ? "" : ": " + p.detail);
    }
    TrialResult& r = *run.results[k];
    r.outcome = Outcome::partner_failed;
    r.detail = partner + "; its runs have no partner measured with them";
    for (RunResult& x : r.runs) {
      x.outcome = Outcome::partner_failed;
      x.detail = r.detail;
    }
    if (why.empty()) why = fmt::format("{} was stopped: {}", r.trial.id, partner);
  }
  for (std::size_t k = 0; k < run.results.size() && why.empty(); ++k) {
    if (run.results[k]->outcome == Outcome::infra_error) {
      why = fmt::format("{} had an infrastructure error: {}", run.results[k]->trial.id, run.results[k]->detail);
    }
  }
  return why;
}

// co-scheduled and lockstep: the block's two guests alive at once, each step a window of the host.
// The one thing that tells them apart is their pacing, config/design.hpp's table: together (one go
// for both, the faster guest's filler until both are done, so the two runs meet the same moments of
// the host) or turns (A's run k, then B's run k, each window opened only while the other guest is
// quiet, so the two never compete for the CPU while they measure).
//
// The block's trials run at once, one thread each, every boot followed by the block's watch; when
// a guest was told to abort, or a boot ended in an infrastructure error, the block is void: each
// trial's console is set aside with the reason and the block runs again whole, at most
// 1 + spec.infra_retries times; after that its results stand as they are (the survivors
// partner-failed).
class Paced final : public BlockDesign {
 public:
  BlockRun run_block(TrialBooter& booter, const ExecutionSpec& spec, const std::vector<Trial>& trials,
                     const Lane& lane, const StopRequest& stop) const override {
    const Pacing pacing = traits(spec.design).pacing;
    const int attempts = 1 + std::max(0, spec.infra_retries);
    BlockRun run;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      PacedBlock block(pacing, trials.size(),
                       {.first_ready = spec.boot_timeout, .ready = spec.run_timeout, .window = spec.run_timeout},
                       pair_swap(spec, lane, trials.size(), pacing));
      run = run_at_once(booter, block, trials, lane, stop, attempt);
      if (run.error) return run;
      const std::string why = judge(block, run);
      if (why.empty() || attempt == attempts) return run;
      for (const Trial& t : trials) booter.set_aside(t, attempt, fmt::format("block {} attempt {} void: {}", t.block, attempt, why));
    }
    return run;
  }
};

}  // namespace

const BlockDesign& paced_design() {
  static const Paced design;
  return design;
}

}  // namespace abvm
