#pragma once
// The smaller subcommands: `abvm config show|keys`, `abvm guest build`, `abvm kernel build|list`.
#include "cli/analyze.hpp"

namespace abvm::cli {

Command add_config(CLI::App& app);
Command add_guest(CLI::App& app);
Command add_kernel(CLI::App& app);

}  // namespace abvm::cli
