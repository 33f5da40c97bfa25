#include "cli/analyze.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cli/decision_options.hpp"
#include "cli/report.hpp"
#include "core/files.hpp"
#include "report/html.hpp"
#include "report/json_report.hpp"
#include "report/junit.hpp"
#include "report/terminal.hpp"
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

int run_analyze(const AnalyzeArgs& args) {
  SampleSet samples;
  ReportSource source;
  if (!args.results_dir.empty()) {
    if (!args.a.empty() || !args.b.empty()) {
      throw Error("give either a results directory or --a/--b files, not both");
    }
    if (args.results_dir.size() != 1) throw Error("give one results directory");
    source.kind = "results";
    source.results_dir = args.results_dir[0];
    samples = load_results_dir(args.results_dir[0]);
  } else {
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
    source.kind = "files";
    source.a = args.a;
    source.b = args.b;
    samples = load_side_files(a, b, opts);
  }
  const DecisionArgs& out = args.decision;
  Analysis analysis = analyze(samples, out.analysis_options());
  // Write the JSON before printing so that a closed terminal cannot lose it.
  if (!out.json_path.empty()) write_file_atomic(out.json_path, json_report_text(analysis, source));
  if (!out.junit_path.empty() || !out.html_path.empty()) {
    const nlohmann::json report = json_report(analysis, source);
    if (!out.junit_path.empty()) write_file_atomic(out.junit_path, junit_report(report));
    if (!out.html_path.empty()) {
      const HtmlInputs in = source.kind == "results"
                                ? results_dir_html_inputs(source.results_dir, report, default_plot_options())
                                : files_html_inputs(report, default_plot_options());
      write_file_atomic(out.html_path, html_report(in));
    }
  }
  TerminalOptions term;
  term.color = ::isatty(STDOUT_FILENO) != 0;
  std::cout << terminal_report(analysis, term) << std::flush;
  return exit_code_for(analysis.verdict);
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
  return {sub, [args] { return run_analyze(*args); }};
}

}  // namespace abvm::cli
