#pragma once
// `abvm analyze`: samples from files or a results directory -> statistics -> verdict -> reports.
#include <CLI/CLI.hpp>
#include <memory>

namespace abvm::cli {

// Adds the subcommand to `app`; the returned callback runs it and yields the process exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
Command add_analyze(CLI::App& app);

}  // namespace abvm::cli
