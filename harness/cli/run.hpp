#pragma once
// `abvm run CONFIG`: runs an A/B experiment on real guests and decides.
//   abvm run CONFIG                 plan, build kernels and image, boot every trial, analyse
//   abvm run --dry-run CONFIG       print the plan, each side's domain XML and the guest job
//   abvm run --resume DIR           continue an interrupted run in its results directory
// Exit codes: as `abvm analyze` (0, 1 regression, 2 usage, 3 infrastructure, 4 inconclusive),
// and 130 when interrupted (SIGINT/SIGTERM), after saying how to resume.
#include <CLI/CLI.hpp>

#include "cli/analyze.hpp"

namespace abvm::cli {

Command add_run(CLI::App& app);

}  // namespace abvm::cli
