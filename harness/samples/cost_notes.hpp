#pragma once
// What a reader of the cost metrics (samples/cost.hpp) must be told about how they were counted:
// notes of the sample set, shown wherever findings are (terminal, analysis.json, JUnit, HTML).
#include <string>
#include <vector>

#include "samples/journal.hpp"

namespace abvm {

// One note per workload (and side, where the sides can differ) of the journal's ok runs:
//   - windows whose disk received less than kDiskBytesShare x the tool's bytes (a cache in the way);
//   - runs without the host's cost, with how many and the first one's reason (a failed statistics
//     call, a window the stop did not close): their host_cpu metrics leave them out;
//   - windows whose host CPU is in the QEMU process's 10 ms ticks (its threads' schedstat was
//     unreadable), with the share one tick is of their median window's CPU, and windows in which a
//     thread of the QEMU ended (run/designs/windows.cpp window_cpu);
//   - the guest's CPU counted from /proc/stat in 10 ms ticks (dd), with the median ticks a run and
//     the share one tick is of it, and steal, which stays 0 where the hypervisor does not report it
//     (TCG).
// Runs without any cost record (journals before version 3) say nothing.
std::vector<std::string> cost_notes(const std::vector<JournalEntry>& entries);

}  // namespace abvm
