#include "cli/nightly.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "bisect/bisection.hpp"
#include "cli/run_session.hpp"
#include "core/error.hpp"
#include "nightly/night.hpp"
#include "nightly/settings.hpp"
#include "run/interrupt.hpp"
#include "run/prepare.hpp"

namespace abvm::cli {
namespace {
namespace fs = std::filesystem;

struct NightlyArgs {
  std::string config;
  std::string history = "nightly";
  std::string connect;
};

// What the night found, for the job's log.
std::string night_summary(const NightRecord& r, const History& h) {
  std::string out = fmt::format("night {}: {} {} at {} against {} ({}): {}\n", r.night.empty() ? "-" : r.night,
                                r.url, r.branch, r.b.substr(0, 12), r.a.substr(0, 12), r.a_why, r.outcome);
  if (!r.detail.empty()) out += "  " + r.detail + "\n";
  for (const auto& m : r.metrics) {
    out += fmt::format("  {}: B/A {:.3f} [{:.3f}, {:.3f}] {}\n", m.name, m.estimate, m.low, m.high, m.verdict);
  }
  if (r.bisection) {
    out += fmt::format("  bisection: {} ({}; {} steps, {} boots per side)\n", r.bisection->outcome, r.bisection->end,
                       r.bisection->steps, r.bisection->boots_per_side);
    for (const auto& c : r.bisection->culprits) {
      for (const auto& commit : c.commits) {
        out += fmt::format("    {} {} {}\n", c.commits.size() == 1 ? "culprit" : "in range", commit.commit.substr(0, 12),
                           commit.subject);
      }
    }
  }
  if (r.drift) out += fmt::format("  drift against {}: {}\n", r.drift->a.substr(0, 12), r.drift->verdict);
  if (!r.report.empty()) out += fmt::format("  report: {}\n", (h.dir() / r.report).string());
  out += fmt::format("  B {} the last good commit (exit {})\n", r.good ? "is now" : "is not", r.exit_code);
  return out;
}

int nightly_command(const NightlyArgs& args) {
  const NightlyExperiment x = load_nightly_experiment(args.config);
  const History history(fs::absolute(args.history));
  install_interrupt_handlers();
  const std::string uri = args.connect.empty() ? LibvirtDriver::embedded_uri() : args.connect;
  TerminalObserver observer;
  BuildingPreparer preparer([&](const std::string& s) { observer.note(s); });
  std::unique_ptr<LibvirtDriver> driver;
  const NightEnd end = run_night(
      x, history, {.uri = uri},
      {.connect = [&]() -> GuestDriver& { return *(driver = connect_libvirt(uri, observer)); },
       .preparer = preparer,
       .observer = observer,
       .finish = [](const Experiment& e, const ResultsDir& d, double c) { return write_run_outputs(e, d, c).analysis; },
       .looks = [](const Experiment& e) { return sequential_looks(e); },
       .stop_requested = [] { return interrupt_requested(); }});
  std::cout << night_summary(end.record, history) << std::flush;
  say(fmt::format("history: {}", history.file().string()));
  return end.exit_code;
}

}  // namespace

Command add_nightly(CLI::App& app) {
  auto args = std::make_shared<NightlyArgs>();
  CLI::App* sub = app.add_subcommand(
      "nightly", "One night of a kernel tree: its branch head against the last good commit, bisected when it regresses");
  sub->footer(
      "EXPERIMENT is an abvm experiment with a [nightly] table: tree (a local git tree), branch, base (A of the "
      "first night), url (the tree's public URL), recipe (the kernel recipe whose config, fragments and make_args "
      "every commit is built with), drift_every, and [nightly.bisect] max_boots, max_wall_time, max_steps (README, "
      "Nightly CI). A is the last good commit of the history (on a rebased tree: its merge base with the head), B "
      "the branch head, built as A plus the commits between them in one kept build tree; nothing runs when the head "
      "has not moved. A regression is bisected over the first-parent commits between A and B. Every drift_every "
      "nights the head is also compared with the last good commit of that many nights before.\n"
      "The history is DIR/history.jsonl (one line per night; a night run again replaces its line), each night's "
      "results under DIR/nights/. Exit codes: 0 no change or improvement, 1 regression (of the night or of the drift), "
      "2 usage or input error, 3 infrastructure error, 4 inconclusive, 130 interrupted; only 0 and 4 make B the "
      "last good commit.");
  sub->add_option("experiment", args->config, "Nightly experiment file (TOML), e.g. configs/nightly-example.toml")
      ->required();
  sub->add_option("--history", args->history, "The history directory (kept between nights)")->default_str("./nightly");
  sub->add_option("--connect", args->connect, "libvirt URI (default: the embedded QEMU driver, no daemon)");
  return {sub, [args] { return nightly_command(*args); }};
}

}  // namespace abvm::cli
