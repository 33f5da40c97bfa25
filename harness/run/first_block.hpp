#pragma once
// The first complete block as a check of the experiment itself (issue 20). A workload whose every
// measured run in that block failed (workload-failed: dd or fio exited with an error) on both sides
// will fail in every later block too (dd cannot open /dev/null with O_DIRECT, whatever the kernel):
// the run stops there, with the tool's own message, instead of spending its budget on runs that
// can never become samples. The rule reads the block's journal lines (each run with its side and
// outcome), so it holds for every design, whatever ran the block; a workload that fails on one side
// only, or in some runs, is a finding, not a broken experiment, and the run goes on.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "plan/plan.hpp"
#include "results/directory.hpp"
#include "samples/journal.hpp"

namespace abvm {

// A workload that failed in every measured run of a block, on both sides.
struct BrokenWorkload {
  std::string workload;
  std::size_t runs_a = 0, runs_b = 0;  // its measured runs in the block (every one failed)
  const JournalEntry* first = nullptr; // the first failed run in the run order: its detail quotes the tool
};

// The first workload, in the experiment's order, whose runs among `entries` of block `block` are all
// workload-failed, with at least one run on each side; nullopt when there is none.
std::optional<BrokenWorkload> broken_workload(const std::vector<JournalEntry>& entries, int block,
                                              const std::vector<Workload>& workloads);

// The error a run ends with when its first block shows a broken workload: the workload, how many runs
// failed, the tool's message (the run's detail) and where its output is kept, and what to do.
std::string describe_broken_workload(const BrokenWorkload& broken, const Experiment& experiment,
                                     const ResultsDir& dir);

// The runner's check of the first block of its plan: after that block is handed over, or, for a run
// resumed after it, before anything boots.
class FirstBlockCheck {
 public:
  FirstBlockCheck(const Experiment& experiment, const ResultsDir& dir, const Plan& plan);

  // Block `block` is complete (its journal lines written): true when it is the first block and a
  // workload failed in every run of it on both sides (failure() then says so).
  bool at_block_end(int block);
  // The same for a resumed run whose first block was done before (every trial of it in `done`),
  // from the journal lines kept.
  bool done_before(const std::set<std::string>& done, const std::vector<JournalEntry>& journal);

  // The message of the failure found; "" when none was.
  const std::string& failure() const { return failure_; }

 private:
  bool check(const std::vector<JournalEntry>& journal);

  const Experiment& experiment_;
  const ResultsDir& dir_;
  std::optional<int> block_;           // the plan's first block; nullopt: an empty plan
  std::vector<std::string> trials_;    // its trials
  std::string failure_;
};

}  // namespace abvm
