#include "run/first_block.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "run/scratch.hpp"
#include "run/trial.hpp"

namespace abvm {

std::optional<BrokenWorkload> broken_workload(const std::vector<JournalEntry>& entries, int block,
                                              const std::vector<Workload>& workloads) {
  struct Count {
    std::size_t failed_a = 0, failed_b = 0, other = 0;
    const JournalEntry* first = nullptr;
  };
  std::map<std::string, Count> counts;
  for (const JournalEntry& e : entries) {
    if (e.block != block) continue;
    Count& c = counts[e.workload];
    if (e.outcome != Outcome::workload_failed) {
      ++c.other;
      continue;
    }
    ++(e.side == Side::a ? c.failed_a : c.failed_b);
    if (c.first == nullptr || e.order < c.first->order) c.first = &e;
  }
  for (const Workload& w : workloads) {
    const auto it = counts.find(w.name);
    if (it == counts.end()) continue;
    const Count& c = it->second;
    if (c.other == 0 && c.failed_a > 0 && c.failed_b > 0) {
      return BrokenWorkload{.workload = w.name, .runs_a = c.failed_a, .runs_b = c.failed_b, .first = c.first};
    }
  }
  return std::nullopt;
}

std::string describe_broken_workload(const BrokenWorkload& b, const Experiment& e, const ResultsDir& dir) {
  const JournalEntry& first = *b.first;
  // One guest measuring both sides names each side's runs apart (run/trial.hpp side_workload_name).
  const std::string name = traits(e.schedule.design).both_sides_per_trial ? side_workload_name(first.workload, first.side)
                                                                          : first.workload;
  const auto output = ResultsDir::trial_relative(first.trial) / TrialFiles{}.run_output(name, false, first.run);
  // Guest write errors are also what a host filesystem filling up under a sparse image looks like:
  // then that is said too, since the workload may be fine.
  const auto host_full = e.hosts.uris.empty() ? scratch_space_shortfall(e.disk, dir.root()) : std::nullopt;
  return fmt::format("workload \"{}\" failed in every run of the first block on both sides ({} run{} on A, {} on B), "
                     "so no block can measure it: {} ({}). The run stopped after the first block instead of spending "
                     "its budget: fix the workload in {} (abvm config show {} prints what it runs) and start a new "
                     "run; the first block is kept in {}{}",
                     b.workload, b.runs_a, b.runs_a == 1 ? "" : "s", b.runs_b, first.detail, output.string(), e.source,
                     e.source, dir.root().string(), host_full ? ". But " + *host_full : "");
}

FirstBlockCheck::FirstBlockCheck(const Experiment& experiment, const ResultsDir& dir, const Plan& plan)
    : experiment_(experiment), dir_(dir) {
  if (plan.trials.empty()) return;
  block_ = plan.trials.front().block;
  for (const Trial& t : plan.trials) {
    if (t.block == *block_) trials_.push_back(t.id);
  }
}

bool FirstBlockCheck::at_block_end(int block) {
  if (!block_ || block != *block_) return false;
  return check(read_journal(dir_.journal()));
}

bool FirstBlockCheck::done_before(const std::set<std::string>& done, const std::vector<JournalEntry>& journal) {
  if (!block_ || !std::all_of(trials_.begin(), trials_.end(), [&](const std::string& t) { return done.contains(t); })) {
    return false;
  }
  return check(journal);
}

bool FirstBlockCheck::check(const std::vector<JournalEntry>& journal) {
  const auto broken = broken_workload(journal, *block_, experiment_.workloads);
  if (!broken) return false;
  failure_ = describe_broken_workload(*broken, experiment_, dir_);
  return true;
}

}  // namespace abvm
