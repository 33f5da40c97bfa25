#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "cli/analyze.hpp"
#include "cli/bisect.hpp"
#include "cli/compare.hpp"
#include "cli/nightly.hpp"
#include "cli/report.hpp"
#include "cli/run.hpp"
#include "cli/tools.hpp"
#include "core/error.hpp"

namespace abvm::cli {

int main(int argc, char** argv) {
  CLI::App app{"abvm: does this kernel change make I/O slower? A/B performance regression harness for Linux "
               "kernels under QEMU/libvirt"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ABVM_VERSION);
  std::vector<Command> commands;
  commands.push_back(add_analyze(app));
  commands.push_back(add_run(app));
  commands.push_back(add_bisect(app));
  for (auto& c : add_nightly_family(app)) commands.push_back(std::move(c));
  commands.push_back(add_report(app));
  commands.push_back(add_compare(app));
  commands.push_back(add_config(app));
  commands.push_back(add_guest(app));
  commands.push_back(add_kernel(app));
  // The one top-level catch: every error ends here, printed once, mapped to its exit code.
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      int rc = app.exit(e);
      return rc == 0 ? 0 : static_cast<int>(ExitCode::usage);
    }
    for (auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
    return static_cast<int>(ExitCode::usage);
  } catch (const Error& e) {
    std::fprintf(stderr, "abvm: error: %s\n", e.what());
    return static_cast<int>(ExitCode::usage);
  } catch (const InfraError& e) {
    std::fprintf(stderr, "abvm: error: %s\n", e.what());
    return static_cast<int>(ExitCode::infrastructure);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "abvm: internal error: %s\n", e.what());
    return static_cast<int>(ExitCode::infrastructure);
  }
}

}  // namespace abvm::cli
