#pragma once
// The overlap of a pair of runs from their timings (samples/sample.hpp RunTiming, RunOverlap): a
// pure helper for whoever records the timings (the run stage's journal sink) and for tests.
#include <string>
#include <utility>

#include "samples/sample.hpp"

namespace abvm {

// The share (0..1) of `run`'s measured interval [start, end] during which `partner` was under
// load: its run [partner.start, partner.end] and its filler [partner.fill (or end), partner.load_end].
// RunOverlap::run of `run`. A run of no duration counts
// as overlapped (1) when its instant lies in the partner's load, else 0. The clock errors are not
// applied: they are recorded beside the share for the reader to weigh.
double overlap_share(const RunTiming& run, const RunTiming& partner);

// Both lines' RunOverlap of a pair of runs: each run's share of its own interval, the pair's (the
// smaller of the two, on both), each naming the other's trial.
std::pair<RunOverlap, RunOverlap> pair_overlap(const RunTiming& first, const std::string& first_trial,
                                               const RunTiming& second, const std::string& second_trial);

}  // namespace abvm
