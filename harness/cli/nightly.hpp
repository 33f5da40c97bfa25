#pragma once
// The nightly family: `abvm nightly EXPERIMENT` (one night: nightly/night.hpp), `abvm history DIR`
// (the history as one HTML page) and `abvm export --kcidb` (a run, a night or a bisection as KCIDB
// JSON).
#include <CLI/CLI.hpp>

#include <vector>

#include "cli/analyze.hpp"
#include "nightly/history.hpp"

namespace abvm::cli {

// What a night found, for the job's log (`abvm nightly` prints it at the end): the outcome, each
// metric's estimate and verdict (a metric reported, not judged, said to be so), the bisection,
// the drift comparison, the report (in `h`) and whether B became the last good commit.
std::string night_summary(const NightRecord& r, const History& h);

// `abvm nightly`, `abvm history`, `abvm export`.
std::vector<Command> add_nightly_family(CLI::App& app);

}  // namespace abvm::cli
