#pragma once
// The results directory of one experiment run, and the two things that make it safe to stop and
// continue: a lock (one runner per directory) and the trial ledger.
//
// Layout (written by cli/run.cpp and the orchestrator):
//   config.toml        the experiment file as run
//   plan.json          the plan with its seed (plan/)
//   environment.json   host, hypervisor, accelerator (run/environment.hpp)
//   kernels.json, image.json   identities of what the guests booted
//   journal.jsonl      one line per measured run (samples/journal.hpp), appended as trials end
//   trials.jsonl       the ledger: one line per finished trial, written AFTER its journal lines
//   trials/<id>/       console.log, domain.xml, result.json, raw tool output per run
//   analysis.json, summary.txt   at the end
//   .lock              held (flock) by the running abvm
//
// A trial counts as done only when its ledger line exists. A runner killed between a trial's
// journal lines and its ledger line leaves journal lines of an unfinished trial: --resume removes
// them (cli/) and runs the trial again, so no trial is ever in the journal twice.
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"

namespace abvm {

// "20261129T200102Z" for the directory name; "2026-11-29T20:01:02Z" for records.
std::string utc_compact(std::chrono::system_clock::time_point t);
std::string utc_iso8601(std::chrono::system_clock::time_point t);

// results_root/<experiment>-<UTC timestamp>, created (with parents). If that name exists
// (two runs within one second) a suffix "-2", "-3" ... keeps it new.
std::filesystem::path create_results_dir(const std::filesystem::path& results_root, std::string_view experiment,
                                         std::chrono::system_clock::time_point now);

// An exclusive flock on dir/.lock, held for the object's lifetime (released by the kernel if
// the process dies). Throws Error when another process holds it, naming its pid and the
// directory; InfraError when the lock file cannot be opened.
// Removes the "<name>.tmp.<pid>" files (core/files write_file_atomic) that processes which no
// longer run left half-written under `dir`, e.g. when the filesystem failed or abvm was killed
// mid-write. Returns what it removed. Call it while holding the ResultsLock.
std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& dir);

class ResultsLock {
 public:
  explicit ResultsLock(const std::filesystem::path& dir);
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;

 private:
  int fd_ = -1;
};

// One ledger line per finished trial (trials.jsonl).
struct LedgerEntry {
  std::string trial;
  Side side = Side::a;
  Outcome outcome = Outcome::ok;
  int attempts = 1;
  double seconds = 0;
  std::string time;
  std::string detail;
};

std::string to_ledger_line(const LedgerEntry& entry);

// Reads dir/trials.jsonl (missing file: empty). A last line without '\n' that does not parse
// (a writer killed mid-line) is ignored and reported to `warn`; any other bad line is an Error
// naming file:line.
std::vector<LedgerEntry> read_ledger(const std::filesystem::path& path,
                                     const std::function<void(const std::string&)>& warn = {});

// Ids of the trials a ledger says are done.
std::set<std::string> done_trials(const std::vector<LedgerEntry>& ledger);

}  // namespace abvm
