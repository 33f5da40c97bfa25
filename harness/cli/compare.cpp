#include "cli/compare.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/decision_options.hpp"
#include "cli/report.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "report/html.hpp"
#include "report/json_report.hpp"
#include "report/junit.hpp"
#include "report/terminal.hpp"
#include "results/directory.hpp"
#include "samples/load.hpp"
#include "verdict/analysis.hpp"

namespace abvm::cli {
namespace {

namespace fs = std::filesystem;

struct CompareArgs {
  std::string fresh, baseline;
  std::string side = "B";
  DecisionArgs decision;
};

std::vector<Sample> relabel(const std::vector<Sample>& in, const std::string& prefix, std::int64_t offset) {
  std::vector<Sample> out = in;
  for (auto& s : out) {
    RunFacts run = s.run();
    if (run.boot) run.boot = prefix + *run.boot;
    run.block.reset();
    s.order += offset;
    // A run's partner was the other side of its own run, which a comparison of two runs leaves
    // behind: its overlap and timing pair nothing here (and would be voided or drawn as if they did).
    run.overlap.reset();
    run.timing.reset();
    s.origin = sample_origin(s.origin ? s.origin->name : std::string(), std::move(run));
  }
  return out;
}

const std::vector<Sample>& side_of(const MetricSamples& m, Side side) { return side == Side::a ? m.a : m.b; }

std::string dir_name(const std::string& dir) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// Runs of different sizes measure different things (a longer dd run hides more of its fixed costs):
// two directories whose runs of one workload ran at different sizes (run/sizing.hpp) are not compared.
// A directory written before sizes were recorded is not checked.
void check_same_run_sizes(const SampleSet& baseline, const SampleSet& fresh, Side side, const CompareArgs& args) {
  const auto& lengths = [&](const SampleSet& s) -> const std::vector<RunLength>& {
    return (side == Side::a ? s.context_a : s.context_b).run_lengths;
  };
  for (const RunLength& old_length : lengths(baseline)) {
    for (const RunLength& new_length : lengths(fresh)) {
      if (old_length.workload != new_length.workload || old_length.size.empty() || new_length.size.empty() ||
          old_length.size == new_length.size) {
        continue;
      }
      throw Error(fmt::format("workload \"{}\" ran {} in {} but {} in {}: runs of different sizes are not comparable; "
                              "compare runs sized alike (give both experiments the workload's size and set its "
                              "min_run_time = \"0s\", or rerun the baseline)",
                              old_length.workload, new_length.size, args.fresh, old_length.size, args.baseline));
    }
  }
}

int run_compare(const CompareArgs& args) {
  for (const auto& d : {args.fresh, args.baseline}) {
    if (!ResultsDir::holds_journal(d)) {
      throw Error(fmt::format("{}: no journal.jsonl; give two abvm results directories (NEW_DIR BASELINE_DIR)", d));
    }
  }
  const Side side = args.side == "A" || args.side == "a" ? Side::a : Side::b;
  const SampleSet baseline = load_results_dir(args.baseline);
  const SampleSet fresh = load_results_dir(args.fresh);
  check_same_run_sizes(baseline, fresh, side, args);
  std::vector<std::string> dropped;
  const SampleSet samples = compare_samples(baseline, fresh, side, dropped);
  for (const auto& name : dropped) {
    std::fprintf(stderr, "abvm: note: metric %s is not in both directories; left out\n", name.c_str());
  }
  const DecisionArgs& out = args.decision;
  const Analysis analysis = analyze(samples, out.analysis_options());
  ReportSource source{.kind = "files",
                      .a = {args.baseline},
                      .b = {args.fresh},
                      .a_label = "baseline " + dir_name(args.baseline),
                      .b_label = "new " + dir_name(args.fresh)};
  const ReportModel report = report_model(analysis, source);
  if (!out.json_path.empty()) write_file_atomic(out.json_path, json_report_text(report));
  if (!out.junit_path.empty()) {
    write_file_atomic(out.junit_path, junit_report(report, {.suite = "compare " + dir_name(args.fresh)}));
  }
  if (!out.html_path.empty()) {
    HtmlInputs in = files_html_inputs(report, default_plot_options());
    in.context.title = fmt::format("{} against the baseline {} (side {})", dir_name(args.fresh),
                                   dir_name(args.baseline), to_string(side));
    in.context.sides[0].settings = {{"results directory", args.baseline}, {"side", to_string(side)}};
    in.context.sides[1].settings = {{"results directory", args.fresh}, {"side", to_string(side)}};
    in.context.sides[0].label = source.a_label;
    in.context.sides[1].label = source.b_label;
    write_file_atomic(out.html_path, html_report(in));
  }
  TerminalOptions term{.a_label = "baseline", .b_label = "new", .color = ::isatty(STDOUT_FILENO) != 0};
  std::cout << terminal_report(report, term) << std::flush;
  return exit_code_for(analysis.verdict);
}

}  // namespace

SampleSet compare_samples(const SampleSet& baseline, const SampleSet& fresh, Side side,
                          std::vector<std::string>& dropped) {
  std::int64_t offset = 0;
  for (const auto& m : baseline.metrics) {
    for (const auto& s : side_of(m, side)) offset = std::max(offset, s.order + 1);
  }
  SampleSet out;
  for (const auto& bm : baseline.metrics) {
    const auto it = std::find_if(fresh.metrics.begin(), fresh.metrics.end(),
                                 [&](const MetricSamples& f) { return f.name == bm.name; });
    if (it == fresh.metrics.end()) {
      dropped.push_back(bm.name);
      continue;
    }
    out.metrics.push_back({.name = bm.name,
                           .unit = bm.unit,
                           .better = bm.better,
                           .a = relabel(side_of(bm, side), "baseline:", 0),
                           .b = relabel(side_of(*it, side), "new:", offset)});
  }
  for (const auto& f : fresh.metrics) {
    const bool shared = std::any_of(baseline.metrics.begin(), baseline.metrics.end(),
                                    [&](const MetricSamples& b) { return b.name == f.name; });
    if (!shared) dropped.push_back(f.name);
  }
  if (out.metrics.empty()) {
    throw Error("the two results directories have no metric in common; compare runs of the same workloads");
  }
  for (const auto& f : baseline.failures) {
    if (f.side == side) out.failures.push_back({Side::a, f.what, f.outcome, "baseline " + f.source});
  }
  for (const auto& f : fresh.failures) {
    if (f.side == side) out.failures.push_back({Side::b, f.what, f.outcome, "new " + f.source});
  }
  out.context_a = side == Side::a ? baseline.context_a : baseline.context_b;
  out.context_b = side == Side::a ? fresh.context_a : fresh.context_b;
  for (const auto& n : baseline.notes) out.notes.push_back("baseline: " + n);
  for (const auto& n : fresh.notes) out.notes.push_back("new: " + n);
  return out;
}

Command add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare a new results directory against a baseline results directory (same metrics, other day)");
  sub->footer(
      "A = the baseline, B = the new run; the same statistics and verdict as 'abvm analyze', over one side of each "
      "directory (--side, default B).\n" +
      std::string(kVerdictExitCodes) + ".");
  sub->add_option("new_dir", args->fresh, "The new results directory")->required();
  sub->add_option("baseline_dir", args->baseline, "The baseline results directory")->required();
  sub->add_option("--side", args->side, "Which side of each directory to compare")
      ->check(CLI::IsMember({"A", "B", "a", "b"}))
      ->capture_default_str();
  add_decision_options(*sub, args->decision);
  return {sub, [args] { return run_compare(*args); }};
}

}  // namespace abvm::cli
