#pragma once
// One trial (one boot of one side) as the orchestrator sees it: what to run, how it ended, and
// what came back. A failed trial is data: it has an outcome and a detail, it is handed to the
// sink like any other, and it never turns into a sample.
// Its outcome is core/vocabulary.hpp's Outcome.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.hpp"
#include "config/workload.hpp"
#include "guest/driver.hpp"
#include "guest/records.hpp"
#include "plan/plan.hpp"

namespace abvm {

// One measured run (warm-up runs are never reported to the sink).
struct RunResult {
  std::string workload;
  int index = 0;                  // measured-run index within the boot, per workload
  Outcome outcome = Outcome::ok;  // ok or workload_failed here; the trial's own
                                            // outcome otherwise (the run did not happen)
  int exit_status = -1;
  std::string output;             // the tool's raw stdout+stderr (empty when it did not run)
  std::string detail;
};

struct TrialResult {
  Trial trial;                              // of the plan; its id is also the boot id
  Outcome outcome = Outcome::ok;
  std::string detail;                       // why, for anything but ok
  int attempts = 1;                         // boots tried (infra errors are retried)
  std::vector<std::string> retried;         // detail of each retried infra error
  double seconds = 0;                       // wall time of the last attempt
  std::string time;                         // UTC, ISO 8601, when the trial ended
  Accelerator accelerator = Accelerator::tcg;
  std::vector<RunResult> runs;              // every expected measured run, in job order
  GuestReport report;                       // parsed records of the last attempt
};

// Receives each finished trial, in order, before the next one starts. The journal writer
// (cli/) implements it: run/ cannot know the samples stage, which parses the tools' output.
class TrialSink {
 public:
  virtual ~TrialSink() = default;
  virtual void on_trial_finished(const TrialResult& result) = 0;
};

// The outcome of one boot, from the driver's ending and the parsed records. Pure.
// `workloads` is what the job asked for: every measured run must be reported, else the
// records are not trusted (invalid-output). Fills outcome, detail and runs of `result`.
void classify_trial(const GuestOutcome& guest, const GuestReport& report, const std::vector<Workload>& workloads,
                    TrialResult& result);

}  // namespace abvm
