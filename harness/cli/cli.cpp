#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "core/error.hpp"

namespace abvm::cli {

int main(int argc, char** argv) {
  CLI::App app{"abvm: A/B performance regression harness for Linux kernels under virtualization"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ABVM_VERSION);
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e) == 0 ? 0 : static_cast<int>(ExitCode::usage);
    }
    return 0;
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
