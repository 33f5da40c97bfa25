#pragma once
// Runs long enough to measure (issue 26, item 5). A run's fixed costs (the go, the tool's start and
// exit, the clock's resolution) must stay a small share of it, so each workload has a least
// measured run time (`min_run_time`, schedule-wide or its own; default 1 s, "0s": off). The first
// block runs the experiment as written; after it, each workload whose measured runs took less (the
// median of its ok runs over both sides, on the host's clock) runs longer by a whole factor from
// plan/sizing.hpp (google/benchmark's rule), capped by the scratch disk: dd's count, fio's size or
// number_ios. Both sides and every later block run that size. When a workload was resized, the
// first block is the *sizing block*: set aside (its journal lines say `sizing_block`; samples/load
// leaves them out) and the plan gets one block more, so the analysis still has boots_per_side
// blocks; when nothing was resized it is kept. The sizes go into every journal line ("size",
// "scale"), and `--resume` takes them from there (or from the sizing block's lines, which never
// run again): nothing is sized twice.
//
// Not sized: order = "sequential" (the first block ends only after every A boot), workloads whose
// length their tool sets (config/workload.hpp unsizable), runs without timings.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "samples/journal.hpp"

namespace abvm {

// Workload `w`'s least run time in experiment `e` (its own, else the schedule's).
std::chrono::milliseconds min_run_time(const Experiment& e, const Workload& w);

// Why the experiment's runs are not sized at all (every minimum 0, order sequential); nullopt when
// some workload is.
std::optional<std::string> not_sized(const Experiment& e);

// One workload's sizing after the first block.
struct WorkloadSizing {
  std::string workload;
  std::chrono::milliseconds min_run_time{0};
  std::optional<double> median_seconds;  // its measured ok runs in the sizing block, both sides
  std::size_t runs = 0;                  // how many
  std::uint64_t scale = 1;               // the factor its size grows by
  bool capped = false;                   // held back by the scratch disk's size
  bool recorded = false;                 // taken from the journal (a resumed run)
  std::string before, after;             // run_size() as written and as sized
  std::string why_not;                   // why it is not sized ("" when it is)
};

struct Sizing {
  std::vector<WorkloadSizing> workloads;  // the experiment's order
  bool resized() const;
  std::map<std::string, std::uint64_t> scales() const;
};

// The sizing from the journal: the scale later blocks' runs recorded when there are such runs (a
// resumed run: never sized again), else computed from block `block`'s runs.
Sizing size_runs(const Experiment& e, const std::vector<JournalEntry>& journal, int block);

// The experiment's workloads with their sizes grown as `sizing` says.
std::vector<Workload> sized_workloads(const std::vector<Workload>& workloads, const Sizing& sizing);

// One line per workload for the run's notes: "dd-write: 0.21 s per run (median of 10) < 1s: bs=8M
// count=16 -> bs=8M count=112 (x7)".
std::vector<std::string> describe_sizing(const Sizing& sizing);

// `abvm run --dry-run`: each workload's run length, its size and the time it will be sized to.
std::string describe_run_lengths(const Experiment& e);

}  // namespace abvm
