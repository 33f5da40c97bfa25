#include "cli/nightly.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bisect/bisection.hpp"
#include "cli/run_session.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/vocabulary.hpp"
#include "nightly/history_page.hpp"
#include "nightly/kcidb.hpp"
#include "nightly/night.hpp"
#include "report/html.hpp"
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
  bool reanchor = false;
};

}  // namespace

std::string night_summary(const NightRecord& r, const History& h) {
  std::string out = fmt::format("night {}: {} {} at {} against {} ({}): {}\n", r.night.empty() ? "-" : r.night,
                                r.url, r.branch, short_sha(r.b), short_sha(r.a), r.a_why, r.outcome);
  if (!r.detail.empty()) out += "  " + r.detail + "\n";
  for (const auto& m : r.metrics) {
    out += fmt::format("  {}: B/A {:.3f} [{:.3f}, {:.3f}] {}{}\n", m.name, m.estimate, m.low, m.high, m.verdict,
                       m.judged ? "" : " (reported, not judged)");
  }
  if (r.bisection) {
    out += fmt::format("  bisection: {} ({}; {} steps, {} boots per side)\n", r.bisection->outcome, r.bisection->end,
                       r.bisection->steps, r.bisection->boots_per_side);
    for (const auto& c : r.bisection->culprits) {
      for (const auto& commit : c.commits) {
        out += fmt::format("    {} {} {}\n", c.commits.size() == 1 ? "culprit" : "in range", short_sha(commit.commit),
                           commit.subject);
      }
    }
  }
  if (r.drift) out += fmt::format("  drift against {}: {}\n", short_sha(r.drift->a), r.drift->verdict);
  if (!r.report.empty()) out += fmt::format("  report: {}\n", (h.dir() / r.report).string());
  out += fmt::format("  B {} the last good commit (exit {})\n", r.good ? "is now" : "is not", r.exit_code);
  return out;
}

namespace {

int nightly_command(const NightlyArgs& args) {
  const NightlyExperiment x = load_nightly_experiment(args.config);
  const History history(fs::absolute(args.history));
  install_interrupt_handlers();
  const std::string uri = args.connect.empty() ? LibvirtDriver::embedded_uri() : args.connect;
  TerminalObserver observer;
  BuildingPreparer preparer([&](const std::string& s) { observer.note(s); });
  std::unique_ptr<LibvirtDriver> driver;
  const NightEnd end = run_night(
      x, history, {.uri = uri, .reanchor = args.reanchor},
      {.connect = [&]() -> GuestDriver& { return *(driver = connect_libvirt(uri, observer)); },
       .preparer = preparer,
       .observer = observer,
       .finish = [](const Experiment& e, const ResultsDir& d, const RunEnd& end) {
         return write_run_outputs(e, d, end).analysis;
       },
       .looks = [](const Experiment& e) { return sequential_looks(e); },
       .stop_requested = [] { return interrupt_requested(); }});
  std::cout << night_summary(end.record, history) << std::flush;
  say(fmt::format("history: {}", history.file().string()));
  return end.exit_code;
}

struct HistoryArgs {
  std::string dir;
  std::string output;
};

int history_command(const HistoryArgs& args) {
  const History history(fs::absolute(args.dir));
  if (!fs::exists(history.file())) {
    throw Error(fmt::format("{} has no history.jsonl: give the directory abvm nightly --history wrote", args.dir));
  }
  const std::vector<NightRecord> lines = history.read();
  const fs::path out = args.output.empty() ? history.dir() / "history.html" : fs::absolute(args.output);
  // Links are relative to the page: they work while the page sits with the nights' directories.
  const auto href = [&](const std::string& in_history) -> std::optional<std::string> {
    if (!fs::exists(history.dir() / in_history)) return std::nullopt;
    return fs::relative(history.dir() / in_history, out.parent_path()).string();
  };
  std::vector<HistorySeries> series;
  for (auto& nights : history_series(lines)) {
    HistoryPlots plots = history_plots(nights);
    series.push_back({.nights = std::move(nights), .plots = std::move(plots)});
  }
  write_file_atomic(out, history_html(series, href, load_html_template()));
  say(fmt::format("history: {} nights -> {}", lines.size(), out.string()));
  return 0;
}

struct ExportArgs {
  bool kcidb = false;
  std::string dir, output, url, branch;
};

int export_command(const ExportArgs& args) {
  const nlohmann::json data = kcidb_export(fs::absolute(args.dir), {.url = args.url, .branch = args.branch});
  const std::string text = data.dump(2) + "\n";
  if (args.output.empty() || args.output == "-") {
    std::cout << text << std::flush;
  } else {
    write_file_atomic(args.output, text);
    say(fmt::format("KCIDB v{}.{}: {} checkouts, {} builds, {} tests -> {}", kKcidbMajor, kKcidbMinor,
                    data.at("checkouts").size(), data.at("builds").size(), data.at("tests").size(), args.output));
  }
  return 0;
}

Command add_history(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* sub = app.add_subcommand("history", "Write a nightly history as one self-contained HTML page");
  sub->footer("DIR is the directory abvm nightly --history keeps (history.jsonl, nights/). A section per tree and "
              "branch the history follows; in each, per metric a plot of each night's effect B/A with its interval "
              "against the margin (report/history_plot.py, matplotlib), regressions marked with their bisection's culprit; a row per night with links to its report and "
              "bisection while they are kept.");
  sub->add_option("dir", args->dir, "The history directory")->required();
  sub->add_option("--output,-o", args->output, "Where the page goes (default: DIR/history.html)");
  return {sub, [args] { return history_command(*args); }};
}

Command add_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "Write a run, a night or a bisection as KernelCI KCIDB JSON");
  sub->footer(fmt::format(
      "KCIDB I/O schema v{}.{} (report/kcidb_schema.json, from kernelci/kcidb-io). DIR is a night's directory "
      "(<history>/nights/<night>/), a bisection's or a run's results directory. Checkouts (the tree's URL and "
      "commits), builds (each kernel, its config's sha256), tests (one per metric on B's build, the estimate B/A as "
      "its value; status regression FAIL, no_change or improvement PASS, inconclusive DONE, a metric reported, not "
      "judged (a cost metric [analysis] metrics does not name) DONE whatever its verdict, infrastructure failure "
      "or interruption MISS; a bisection's steps one test each). --tree-url must be https:// (other URLs are left "
      "out) and, with --branch, names a bisection's or a run's tree; a night's directory names its own. Nothing is "
      "sent anywhere.",
      kKcidbMajor, kKcidbMinor));
  sub->add_flag("--kcidb", args->kcidb, "KCIDB JSON (the one format)")->required();
  sub->add_option("dir", args->dir, "A night's, bisection's or run's directory")->required();
  sub->add_option("--output,-o", args->output, "Where the JSON goes (default: standard output)");
  sub->add_option("--tree-url", args->url, "A run or bisection: the tree's public https:// URL for its checkouts");
  sub->add_option("--branch", args->branch, "A run or bisection: the branch for its checkouts");
  return {sub, [args] { return export_command(*args); }};
}

Command add_nightly(CLI::App& app) {
  auto args = std::make_shared<NightlyArgs>();
  CLI::App* sub = app.add_subcommand(
      "nightly", "One night of a kernel tree: its branch head against the last good commit, bisected when it regresses");
  sub->footer(
      "EXPERIMENT is an abvm experiment with a [nightly] table: tree (a local git tree), branch, base (A of the "
      "first night), url (the tree's public URL, by which the history knows it: the tree may be cloned to another "
      "path each night), recipe (the kernel recipe whose config, fragments and make_args "
      "every commit is built with), drift_every, and [nightly.bisect] max_boots, max_wall_time, max_steps (README, "
      "Nightly CI). A is the last good commit of the history (on a rebased tree: its merge base with the head), B "
      "the branch head, built as A plus the commits between them in one kept build tree (of the anchor commit the "
      "history keeps: --reanchor); nothing runs when the head "
      "has not moved. Both run co-scheduled with sequential stopping (schedule.design = \"co-scheduled\", "
      "[schedule.sequential] enabled = true: a file that says otherwise is refused). A regression is bisected over the first-parent commits between A and B. Every drift_every "
      "nights the head is also compared with the last good commit of that many nights before.\n"
      "The history is DIR/history.jsonl (one line per night; a night run again replaces its line), each night's "
      "results under DIR/nights/. Exit codes: 0 no change or improvement, 1 regression (of the night or of the drift), "
      "2 usage or input error, 3 infrastructure error, 4 inconclusive, 130 interrupted; only 0 and 4 make B the "
      "last good commit.");
  sub->add_option("experiment", args->config, "Nightly experiment file (TOML), e.g. configs/nightly.toml")
      ->required();
  sub->add_option("--history", args->history, "The history directory (kept between nights)")->default_str("./nightly");
  sub->add_option("--connect", args->connect, "libvirt URI (default: the embedded QEMU driver, no daemon)");
  sub->add_flag("--reanchor", args->reanchor,
                "Build tonight's kernels from nightly.base again (A when it is not an ancestor of A), not from the "
                "anchor the history keeps: a new build tree, built from scratch; the nights after keep the new one");
  return {sub, [args] { return nightly_command(*args); }};
}

}  // namespace

std::vector<Command> add_nightly_family(CLI::App& app) {
  std::vector<Command> out;
  out.push_back(add_nightly(app));
  out.push_back(add_history(app));
  out.push_back(add_export(app));
  return out;
}

}  // namespace abvm::cli
