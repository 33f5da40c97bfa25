#pragma once
// The nightly family: `abvm nightly EXPERIMENT` (one night: nightly/night.hpp), `abvm history DIR`
// (the history as one HTML page) and `abvm export --kcidb` (a run, a night or a bisection as KCIDB
// JSON).
#include <CLI/CLI.hpp>

#include <vector>

#include "cli/analyze.hpp"

namespace abvm::cli {

// `abvm nightly`, `abvm history`, `abvm export`.
std::vector<Command> add_nightly_family(CLI::App& app);

}  // namespace abvm::cli
