#pragma once
// The run's journal: a TrialSink that turns each finished trial's raw tool output into journal
// lines (samples/ parses the tools' output and owns the line format), appended durably as the
// trial ends.
#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "run/trial.hpp"
#include "samples/journal.hpp"

namespace abvm {

class JournalSink final : public TrialSink {
 public:
  // `host`: the journal's host of a trial that does not name its own (TrialResult::host).
  // `sides_per_trial`: 2 when one boot measures both sides (same-guest), for the journal's order.
  JournalSink(std::filesystem::path journal, std::vector<Workload> workloads, std::string host,
              int sides_per_trial = 1);

  // Writes one journal line per measured run. An ok run whose output does not parse, or whose
  // fio job reports an error, becomes invalid-output / workload-failed with the reason.
  void on_trial_finished(const TrialResult& result) override;

  // The entries a trial becomes (exposed for tests).
  std::vector<JournalEntry> entries_for(const TrialResult& result) const;

  // "dd-write.bandwidth B/A 0.953 (12 vs 12 runs)": the ratio of medians of the first metric
  // so far, for the progress line; empty until both sides have a value.
  std::string effect_estimate() const;

  // Sizing (run/sizing.hpp): the runs of block `block` are marked as the sizing block's.
  void set_sizing_block(int block) { sizing_block_ = block; }
  // The workloads as they run from now on (sized), and the factor each was sized by (by name; 1
  // when absent): each line then carries its run's size and scale.
  void set_workloads(std::vector<Workload> workloads, std::map<std::string, std::uint64_t> scales);

  // Feeds effect_estimate() with entries already in the journal (resume).
  void remember(const std::vector<JournalEntry>& entries);

 private:
  std::filesystem::path journal_;
  std::vector<Workload> workloads_;
  std::string host_;
  int sides_per_trial_ = 1;
  std::optional<int> sizing_block_;
  std::map<std::string, std::uint64_t> scales_;
  std::string first_metric_;
  std::map<std::string, std::vector<double>> values_;  // "A"/"B" -> first metric's values
  std::map<std::string, std::vector<double>> sizing_values_;  // the same in the sizing block
  bool resized_ = false;                                      // a workload grew after it
};

// Removes from `journal` every line of a trial not in `done` (a runner killed between a
// trial's journal lines and its ledger line) and an unfinished last line. Returns the entries
// kept; rewrites the file atomically only when something was removed.
std::vector<JournalEntry> prune_journal(const std::filesystem::path& journal, const std::set<std::string>& done,
                                        std::vector<std::string>& notes);

}  // namespace abvm
