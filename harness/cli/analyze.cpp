#include "cli/analyze.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cli/decision_options.hpp"
#include "cli/report.hpp"
#include "cli/results_analysis.hpp"
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

struct AnalyzeArgs {
  std::vector<std::string> a, b;
  std::vector<std::string> results_dir;
  std::string format = "auto";
  std::string metric, unit;
  bool higher = false, lower = false;
  DecisionArgs decision;
};

// samples/ names its formats; --format accepts exactly those names.
std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (auto f : kInputFormats) names.emplace_back(to_string(f));
  return names;
}

InputFormat parse_format(const std::string& s) {
  if (const auto format = parse_input_format(s)) return *format;
  throw Error(fmt::format("--format {}: unknown format; use auto, dd, fio or numbers", s));
}

// The analysis options given on the command line (not their defaults).
AnalysisOverrides given_options(const CLI::App& sub, const DecisionArgs& d) {
  AnalysisOverrides given;
  if (sub.count("--margin") > 0) given.margin = d.margin;
  if (sub.count("--confidence") > 0) given.confidence = d.confidence;
  if (sub.count("--seed") > 0) given.seed = d.seed;
  return given;
}

// The decision of an analysis without an experiment: its report and analysis.json.
Decision made_decision(Analysis analysis, ReportSource source) {
  Decision d{.analysis = std::move(analysis), .source = std::move(source)};
  d.report = report_model(d.analysis, d.source);
  d.json_text = json_report_text(d.report);
  return d;
}

// A results directory of `abvm run` is analysed as its run decided (cli/results_analysis: the
// experiment's margin, seed, metrics and final confidence), so that its analysis.json comes out
// again; options given on the command line override and say so. A directory holding only a
// journal is analysed with the command line's options. The run's experiment is left in
// `experiment`, for the report's context.
Decision analyze_results_dir(const AnalyzeArgs& args, const AnalysisOverrides& given,
                             std::optional<Experiment>& experiment) {
  if (!args.a.empty() || !args.b.empty()) throw Error("give either a results directory or --a/--b files, not both");
  if (args.results_dir.size() != 1) throw Error("give one results directory");
  const std::filesystem::path path = args.results_dir[0];
  if (!std::filesystem::exists(ResultsDir(path).manifest())) {
    return made_decision(analyze(load_results_dir(path), args.decision.analysis_options()),
                         {.kind = "results", .results_dir = path.string()});
  }
  const ResultsDir dir = ResultsDir::open_run(path);
  const RunManifest manifest = read_manifest(dir);
  const Experiment& e = experiment.emplace(load_saved_experiment(dir, manifest));
  const RunEnd recorded = recorded_run_end(e, dir, manifest);
  for (const std::string& note : override_notes(e, recorded.final_confidence, given)) {
    std::fprintf(stderr, "abvm: %s\n", note.c_str());
  }
  return decide(e, dir, recorded, given);
}

Decision analyze_files(const AnalyzeArgs& args) {
  if (args.a.empty() || args.b.empty()) {
    throw Error("nothing to compare: give files for both sides (--a FILE... --b FILE...) or a results directory");
  }
  if (args.higher && args.lower) throw Error("--higher-is-better and --lower-is-better exclude each other");
  InputOptions opts;
  opts.format = parse_format(args.format);
  if (!args.metric.empty()) opts.metric = args.metric;
  if (!args.unit.empty()) opts.unit = args.unit;
  if (args.higher) opts.better = Better::higher;
  if (args.lower) opts.better = Better::lower;
  std::vector<std::filesystem::path> a(args.a.begin(), args.a.end()), b(args.b.begin(), args.b.end());
  return made_decision(analyze(load_side_files(a, b, opts), args.decision.analysis_options()),
                       {.kind = "files", .a = args.a, .b = args.b});
}

int run_analyze(const AnalyzeArgs& args, const AnalysisOverrides& given) {
  std::optional<Experiment> experiment;  // a results directory's, when abvm run made it
  const Decision d = args.results_dir.empty() ? analyze_files(args) : analyze_results_dir(args, given, experiment);
  const DecisionArgs& out = args.decision;
  // Write the JSON before printing so that a closed terminal cannot lose it.
  if (!out.json_path.empty()) write_file_atomic(out.json_path, d.json_text);
  if (!out.junit_path.empty()) write_file_atomic(out.junit_path, junit_report(d.report));
  if (!out.html_path.empty()) {
    const ResultsDir dir(d.source.results_dir);
    const auto context = [&] { return read_report_context(dir, experiment ? &*experiment : nullptr); };
    const HtmlInputs in = d.source.kind == "results"
                              ? results_dir_html_inputs(dir, d.report, context(), default_plot_options())
                              : files_html_inputs(d.report, default_plot_options());
    write_file_atomic(out.html_path, html_report(in));
  }
  TerminalOptions term{.a_label = d.source.a_label, .b_label = d.source.b_label,
                       .seconds_per_block = d.seconds_per_block};
  term.color = ::isatty(STDOUT_FILENO) != 0;
  std::cout << terminal_report(d.report, term) << std::flush;
  return exit_code_for(d.analysis.verdict);
}

}  // namespace

Command add_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* sub = app.add_subcommand("analyze", "Compare side A with side B from saved measurements and decide");
  sub->footer(
      "Inputs: GNU dd output (any text holding dd's summary lines), fio JSON (json or json+), plain numbers (one per "
      "line; give --unit and a direction), or an abvm results directory (its journal.jsonl).\n" +
      std::string(kVerdictExitCodes) + ".");
  sub->add_option("results_dir", args->results_dir, "An abvm results directory (instead of --a/--b)");
  sub->add_option("--a", args->a, "Measurement files of side A (baseline)");
  sub->add_option("--b", args->b, "Measurement files of side B (candidate)");
  sub->add_option("--format", args->format, "Input format: auto, dd, fio or numbers")
      ->check(CLI::IsMember(format_names()))
      ->capture_default_str();
  sub->add_option("--metric", args->metric, "Metric name: selects one metric of dd/fio input, names plain numbers");
  sub->add_option("--unit", args->unit, "Unit of plain numbers (e.g. B/s, ns)");
  sub->add_flag("--higher-is-better", args->higher, "Plain numbers: higher values are better (bandwidth, IOPS)");
  sub->add_flag("--lower-is-better", args->lower, "Plain numbers: lower values are better (latency, time)");
  add_decision_options(*sub, args->decision);
  return {sub, [args, sub] { return run_analyze(*args, given_options(*sub, args->decision)); }};
}

}  // namespace abvm::cli
