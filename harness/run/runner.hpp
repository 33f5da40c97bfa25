#pragma once
// The run stage's front door: takes a loaded experiment to a finished results directory.
//
//   start_run()   creates results/<experiment>-<time>/ with config.toml, plan.json, run.json
//   Runner::run() holds the lock; recovers what an earlier session left (stale temporary files,
//                 the ledger, journal lines of an unfinished trial); prepares what each side
//                 boots; chooses the accelerator; executes the plan through the GuestDriver,
//                 appending journal and ledger lines as trials end; makes the sequential looks
//                 and extends the plan while they are inconclusive; stops after the first block
//                 when a workload failed in every run of it on both sides (run/first_block.hpp,
//                 status failed); removes abvm's own scratch
//                 disk; records the run's status in run.json.
//
// Its collaborators are parameters: the driver's connection (libvirt, or a fake), the preparer (kernel
// builds, or prepared files), the observer (progress on the terminal), the look decision (the
// analysis, which comes later in the data flow) and the stop request (Ctrl-C). So a test runs a
// whole run, resume included, with a scripted fake driver and no libvirt. The analysis of the
// finished directory and the reports are the caller's next steps; RunEnd hands it what the reports
// show beside the journal (RunRecords), so that nothing is read back.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "config/experiment.hpp"
#include "guest/driver.hpp"
#include "plan/plan.hpp"
#include "results/directory.hpp"
#include "run/orchestrator.hpp"
#include "run/prepare.hpp"
#include "run/progress.hpp"

namespace abvm {

// Where a run reports what happens.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // A line that must stay visible: a step, a warning, a failed trial.
  virtual void note(const std::string& text) = 0;
  // The progress line, rewritten as trials start and end.
  virtual void progress(const ProgressState& state) = 0;
  // The run is over: end the progress line.
  virtual void finish() = 0;
};

// The analysis at a look: the verdict's name when the results at `confidence` decide, nullopt
// while inconclusive. May throw Error when there is nothing to analyse yet.
using LookDecision = std::function<std::optional<std::string>(const ResultsDir& dir, double confidence)>;

struct RunCollaborators {
  // The connections to the run's hosts, made once the lock is held, while the guests are prepared
  // (a second runner on the same directory is refused before it connects anywhere): one for a run
  // on one machine (its name "": the journal names this machine), one per host of a pool (named
  // by its URI). InfraError when none can be made.
  std::function<std::vector<HostDriver>()> connect;
  GuestPreparer& preparer;
  RunObserver& observer;
  LookDecision decide;
  std::function<bool()> stop_requested;  // polled before each trial and while a guest runs
};

struct RunSession {
  bool resuming = false;      // a later session of an interrupted run
  bool keep_scratch = false;  // keep abvm's own scratch image after the session
  std::string uri;            // the libvirt URI in use, recorded in run.json
  std::vector<std::string> uris;  // a pool's hosts, recorded in run.json
};

// What a session wrote beside the journal that the reports show, as it wrote it: the reports of
// the run take these from memory, and nothing is read back from disk.
struct RunRecords {
  nlohmann::json kernels;      // kernels.json: each side's kernel (PreparedGuests::kernels)
  nlohmann::json environment;  // environment.json: this machine, the hypervisor, the accelerator
};

struct RunEnd {
  RunStatus status = RunStatus::running;  // running: interrupted, resume to go on
  std::size_t trials_done = 0;            // over every session
  double final_confidence = 0;            // the confidence the final analysis must use
  std::string stop_reason;                // sequential stopping, "" otherwise
  std::string failure;                    // status failed: why (run/first_block.hpp), "" otherwise
  std::vector<double> trial_seconds;      // what each finished trial took, over every session, as the
                                          // ledger (trials.jsonl) has them: the run's pace in its summary
  // Absent when the run was over before this session (run.json said so): it prepared nothing, and
  // whoever reports on it reads the directory's files, as `abvm run --resume` of a finished run does.
  std::optional<RunRecords> records;
};

// How a run that is over ended, as run.json (`manifest`) and the ledger record it: what
// Runner::run returns for it, and what `abvm run --resume` and `abvm analyze DIR` analyse it with.
// Its final confidence is run.json's (the last look of a sequential run), else the experiment's
// [analysis] confidence. Nothing of it is in memory: `records` is absent.
RunEnd recorded_run_end(const Experiment& experiment, const ResultsDir& dir, const RunManifest& manifest);

// The seed a new run uses: the experiment's, or a fresh random one when it says 0.
std::uint64_t choose_seed(const Experiment& experiment);

// Creates the results directory of a new run under `results_root` and writes config.toml,
// plan.json and run.json (status running). `config_file` is the experiment file as given.
ResultsDir start_run(const Experiment& experiment, const Plan& plan, const std::filesystem::path& results_root,
                     const std::filesystem::path& config_file, const std::string& uri);

// The lanes of a run: on each of `hosts` (their names), one per schedule.cpu_sets entry (one
// unpinned lane without), each with the scratch images a block of the design needs (one, or two
// for designs with two guests or two disks), `image(slot)` giving the path of abvm's image number
// `slot` (or the user's disk.path). Lane l's images are slots l*k ... l*k+k-1.
std::vector<Lane> make_lanes(const Experiment& experiment, const std::function<std::filesystem::path(int slot)>& image,
                             const std::vector<std::string>& hosts = {""});

// The scratch images a block of the design writes to at once: two guests or two disks, or one.
int images_per_lane(Design design);

// The execution spec of a run: what every trial boots, where, and how long it may take.
// --dry-run uses it with placeholder paths, so what it shows is what a trial boots.
ExecutionSpec execution_spec(const Experiment& experiment, const PreparedGuests& guests, const ResultsDir& dir,
                             std::vector<Lane> lanes);

class JournalSink;

class Runner {
 public:
  Runner(const Experiment& experiment, ResultsDir dir, RunCollaborators collaborators);

  // Runs what is left of the plan. Throws Error / InfraError; an InfraError mid-run says what is
  // kept and how to resume. A run whose run.json says it is finished returns at once.
  RunEnd run(const RunSession& session);

 private:
  struct Recovered;
  Recovered recover();
  Accelerator choose_accel(GuestDriver& driver, const PreparedGuests& guests, std::string& reason);
  std::vector<Accelerator> choose_accels(const std::vector<HostDriver>& hosts, const PreparedGuests& guests,
                                         nlohmann::json& environment);
  RunSummary run_sized(const std::vector<HostDriver>& hosts, const ExecutionSpec& spec, JournalSink& sink, Plan& plan,
                       const std::set<std::string>& done_before, const Controls& controls);
  RunEnd execute(const std::vector<HostDriver>& hosts, const RunSession& session, const PreparedGuests& guests,
                 const std::vector<Accelerator>& accels, const Recovered& recovered, RunManifest& manifest);

  const Experiment& experiment_;
  ResultsDir dir_;
  RunCollaborators c_;
};

}  // namespace abvm
