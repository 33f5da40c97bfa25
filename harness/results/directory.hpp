#pragma once
// The results directory of one experiment run: the one owner of its layout and file names, the
// run manifest (run.json), the lock that keeps one runner per directory, and the trial ledger.
// Everything that reads or writes a results directory (run, analyze, report, compare) goes
// through ResultsDir; no other code spells these names.
//
// Layout:
//   config.toml        the experiment file as run
//   run.json           the manifest: version, where the config came from, URI, status
//   plan.json          the plan with its seed (plan/)
//   environment.json   host, hypervisor, accelerator (run/environment.hpp)
//   kernels.json, image.json   identities of what the guests booted
//   journal.jsonl      one line per measured run (samples/journal.hpp), appended as trials end
//   trials.jsonl       the ledger: one line per finished trial, written AFTER its journal lines
//   trials/<id>/       console.log, domain.xml, result.json, raw tool output per run
//   scratch.raw        abvm's own scratch disk image while a session runs
//   scratch-1.raw      the second one, for the second guest of a co-scheduled block
//   analysis.json, summary.txt, report.html   at the end
//   .lock              held (flock) by the running abvm
//
// A trial counts as done only when its ledger line exists. A runner killed between a trial's
// journal lines and its ledger line leaves journal lines of an unfinished trial: --resume removes
// them (run/) and runs the trial again, so no trial is ever in the journal twice.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.hpp"
#include "core/jsonl.hpp"
#include "plan/plan.hpp"
#include "core/vocabulary.hpp"

namespace abvm {

// The files of one trial, trials/<id>/ (paths absolute when the ResultsDir's root is).
struct TrialFiles {
  std::filesystem::path dir;
  std::filesystem::path console_log() const { return dir / "console.log"; }
  std::filesystem::path domain_xml() const { return dir / "domain.xml"; }
  std::filesystem::path result() const { return dir / "result.json"; }
  std::filesystem::path initrd() const { return dir / "initrd.img"; }
  // The console of a boot that failed for infrastructure reasons and was tried again.
  std::filesystem::path attempt_console_log(int attempt) const;
  // The raw output of one run: "<workload>-run<i>.out", warm-ups "<workload>-warmup<i>.out".
  std::filesystem::path run_output(std::string_view workload, bool warmup, int index) const;
};

class ResultsDir {
 public:
  explicit ResultsDir(std::filesystem::path root) : root_(std::move(root)) {}

  // An existing results directory of `abvm run` (it has run.json and plan.json); Error naming
  // what is missing otherwise.
  static ResultsDir open_run(const std::filesystem::path& dir);
  // True when `dir` holds a run journal (a directory `abvm analyze` can read).
  static bool holds_journal(const std::filesystem::path& dir);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path config() const { return root_ / "config.toml"; }
  std::filesystem::path manifest() const { return root_ / "run.json"; }
  std::filesystem::path plan() const { return root_ / "plan.json"; }
  std::filesystem::path environment() const { return root_ / "environment.json"; }
  std::filesystem::path kernels() const { return root_ / "kernels.json"; }
  std::filesystem::path image() const { return root_ / "image.json"; }
  std::filesystem::path journal() const { return root_ / "journal.jsonl"; }
  std::filesystem::path ledger() const { return root_ / "trials.jsonl"; }
  std::filesystem::path analysis() const { return root_ / "analysis.json"; }
  std::filesystem::path summary() const { return root_ / "summary.txt"; }
  std::filesystem::path report_html() const { return root_ / "report.html"; }
  // Slot 0 is every guest's disk; co-scheduled blocks run two guests at once, and the second
  // trial of a block writes to slot 1 (a disk image cannot be opened by two QEMUs).
  std::filesystem::path scratch_disk(int slot = 0) const {
    return root_ / (slot == 0 ? std::string("scratch.raw") : "scratch-" + std::to_string(slot) + ".raw");
  }
  std::filesystem::path accel_probe_dir() const { return root_ / "accel-probe"; }
  std::filesystem::path lock_file() const { return root_ / ".lock"; }
  TrialFiles trial(std::string_view id) const { return {root_ / trial_relative(id)}; }
  // "trials/<id>": what a report next to the directory links to.
  static std::filesystem::path trial_relative(std::string_view id);

 private:
  std::filesystem::path root_;
};

// run.json: what a later `abvm run --resume` and `abvm analyze DIR` need to know about the run.
// running: not finished (resume goes on); complete: every planned trial ran; stopped: a sequential
// look decided; failed: the run stopped without an answer it could ever give (a workload that failed
// in every run of the first block on both sides, run/first_block.hpp): resuming says so again.
enum class RunStatus { running, complete, stopped, failed };
const char* to_string(RunStatus status);

struct RunManifest {
  std::string abvm_version;
  std::filesystem::path config;            // the experiment file as given, absolute
  std::filesystem::path config_dir;        // relative paths in it resolve against this
  std::string uri;                         // libvirt URI ("" until the first connection)
  std::vector<std::string> uris;           // a pool's hosts (empty for a run on one host)
  std::string started;                     // UTC, ISO 8601
  RunStatus status = RunStatus::running;
  std::string stop_reason;                 // sequential stopping: why it stopped ("" when none)
  std::string failure;                     // status failed: why, as the run ended with it ("" otherwise)
  std::optional<double> final_confidence;  // the confidence of the last look (sequential runs)
};

// Strict: a missing or mistyped field is an Error naming the file and the field (core/json_read.hpp).
RunManifest read_manifest(const ResultsDir& dir);
class JsonField;
void read_json(const JsonField& f, RunStatus& status);
void read_json(const JsonField& f, RunManifest& manifest);
void write_manifest(const ResultsDir& dir, const RunManifest& manifest);

// The experiment as it was run: config.toml read back with its original location, so relative
// paths in it resolve as they did.
Experiment load_saved_experiment(const ResultsDir& dir, const RunManifest& manifest);

// plan.json (plan/plan.hpp's format).
Plan read_plan(const ResultsDir& dir);
void write_plan(const ResultsDir& dir, const Plan& plan);

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
void read_json(const JsonField& f, LedgerEntry& entry);

// Reads dir/trials.jsonl (missing file: empty). A last line without '\n' that does not parse
// (a writer killed mid-line) is ignored and reported to `warn`; any other bad line is an Error
// naming file:line.
std::vector<LedgerEntry> read_ledger(const std::filesystem::path& path, const JsonlWarning& warn = {});

// Ids of the trials a ledger says are done.
std::set<std::string> done_trials(const std::vector<LedgerEntry>& ledger);

}  // namespace abvm
