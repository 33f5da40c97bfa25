#pragma once
// When each measured run ran, on the host's clock, and how much of it its partner run's guest was
// under load: the record that lets a reader check that A and B were measured under the same
// conditions (README: "Paired runs"). Pure, apart from host_now().
//
// A guest stamps its records with its own clock (guests/agent/init.sh clock_now: CLOCK_MONOTONIC,
// microseconds). Per boot, the offset to the host's clock is bounded from both sides:
//   - a record printed at guest time t that reached the host at H: offset <= H - t;
//   - a word the host typed at H that the guest heard at t: offset >= H - t.
// A paced run's own window gives both kinds (READY and DONE printed, go and stop heard), so its
// offset is the middle of the tightest bounds and `clock_error` their half-width. An unpaced run
// has only printed marks (its RUN and RUNEND): the offset is the tighter one, and the error the
// half-width of the two.
#include <vector>

#include "guest/records.hpp"
#include "run/trial.hpp"

namespace abvm {

// The host clock every watch and timing reads: Unix epoch seconds, taken from the steady clock
// from the first call on (no jump when the system clock is set during a run).
double host_now();

// Sets the timing of each of `runs` from the guest run it was reported as (by report name, index,
// measured) in `report`, with the boot's clock mapped by `log`. A run whose bounds are missing
// keeps no timing.
void time_runs(const GuestReport& report, const HostClockLog& log, std::vector<RunResult>& runs);

// The host's view of each paced run's window (issue 27): the differences of the guest's statistics
// read before its go (HostClockLog::Word::stats) and as its DONE arrived (HostClockLog::read_at; before
// its stop where DONE has no reading) as RunResult::host_cost, or
// why there is none as RunResult::host_cost_missing (a failed statistics call, a window closed by an
// abort). A run without a window (sequential blocks, same-guest) gets the difference of the readings
// taken as its NEXT (RUN for agents before it) and RUNEND record lines arrived (HostClockLog::read_at):
// its preparation, the settling pause, its tool's run and the
// output records it printed before RUNEND.
void cost_windows(const GuestReport& report, const HostClockLog& log, std::vector<RunResult>& runs);

// Pairs, within one block, each measured run of side A with the run of side B of the same workload
// and index (in one trial or two), and sets both runs' overlap when both have a timing
// (samples/overlap.hpp pair_overlap).
void pair_overlaps(const std::vector<TrialResult*>& block);

}  // namespace abvm
