#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
namespace {

// The subcommand of `at` named `word`, or nullptr.
const CLI::App* subcommand_named(const CLI::App& at, std::string_view word) {
  for (const CLI::App* sub : at.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(std::string(word))) return sub;
  return nullptr;
}

// True when every word given to `at` that is not a subcommand must be a flag: it has subcommands,
// no positional arguments and no option that takes a value (whose value could be any word).
bool only_flags_and_subcommands(const CLI::App& at) {
  if (at.get_subcommands([](const CLI::App*) { return true; }).empty()) return false;
  for (const CLI::Option* opt : at.get_options())
    if (opt->get_positional() || opt->get_items_expected_max() > 0) return false;
  return true;
}

// "abvm nightly2 --help" would print the top-level help and exit 0, and "abvm frob" would be an
// unexpected argument: a mistyped subcommand is named instead. Follows the words down the
// subcommand tree while each level takes only flags and subcommands; returns the usage error.
std::optional<std::string> unknown_subcommand(const CLI::App& app, std::span<char* const> words) {
  const CLI::App* at = &app;
  std::string path = "abvm";
  for (std::string_view word : words) {
    if (!only_flags_and_subcommands(*at) || word == "--") return std::nullopt;
    if (word.starts_with('-')) continue;
    const CLI::App* sub = subcommand_named(*at, word);
    if (sub == nullptr)
      return fmt::format("'{}' is not a subcommand of {}: run '{} --help' for the list", word, path, path);
    at = sub;
    path += " " + sub->get_name();
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  // A libvirt daemon that dies mid-call leaves its socket half closed: the client library's next
  // write must come back as EPIPE (a lost connection, retried or reported as an infra error), not
  // as SIGPIPE, which would kill abvm with the guest running and the trial unrecorded.
  std::signal(SIGPIPE, SIG_IGN);
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
    if (const auto unknown = unknown_subcommand(app, std::span<char* const>(argv, argc).subspan(argc > 0 ? 1 : 0)))
      throw Error(*unknown);
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
