#include "cli/report.hpp"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <optional>

#include "config/experiment.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "results/directory.hpp"
#include "report/junit.hpp"

namespace abvm::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ReportArgs {
  std::string dir;
  std::string output;
  std::string junit;
};

json read_json(const fs::path& p) { return parse_json(read_file(p), {.file = p.string(), .remedy = "regenerate it"}); }

// What to do about DIR/analysis.json when it is missing or damaged.
std::string remake_analysis(const ResultsDir& results) {
  return fmt::format("'abvm analyze {} --json {}'", results.root().string(), results.analysis().string());
}

// DIR/analysis.json, read back to the report model (read_report_data checks every field).
ReportModel read_report(const ResultsDir& results) {
  const fs::path p = results.analysis();
  if (!fs::exists(p)) throw Error(fmt::format("{}: not found; make it with {}", p.string(), remake_analysis(results)));
  return read_report_data(read_json(p), {.file = p.string(), .advice = "regenerate it with " + remake_analysis(results)});
}

// Each side's effective settings from the experiment file, as `abvm config show` lists them, and
// what kernels.json says of its kernel.
std::vector<SideInfo> sides_from_config(const Experiment& e, const std::map<Side, SideKernel>& kernels) {
  std::vector<SideInfo> sides;
  for (Side id : kSides) {
    const std::string letter = to_string(id);
    SideInfo s{.letter = letter, .label = e.side(id).label};
    const std::string prefix = "sides." + letter + ".";
    for (const auto& v : e.effective) {
      if (v.key.rfind(prefix, 0) != 0) continue;
      const std::string key = v.key.substr(prefix.size());
      if (key != "label") s.settings.emplace_back(key, v.value);
    }
    if (const auto k = kernels.find(id); k != kernels.end()) {
      if (k->second.release) s.settings.emplace_back("kernel release", *k->second.release);
      if (k->second.cmdline) s.settings.emplace_back("kernel command line (full)", *k->second.cmdline);
    }
    sides.push_back(std::move(s));
  }
  return sides;
}

// Where a file abvm run writes beside the journal came from, and what to do about a damaged one.
JsonOrigin restore_or_remove(const fs::path& file, const std::string& what) {
  return {.file = file.string(),
          .advice = fmt::format("abvm run writes it: restore it, or remove it to leave {} out of the report", what)};
}

// The one maker of a results directory's context, from memory or from its files alike: `kernels`
// and `environment` are the JSON of kernels.json and environment.json (null: none), read by their
// strict readers; without an experiment the directory's name is the title and kernels.json is
// not shown (there are no sides to show it with).
ReportContext results_context(const ResultsDir& dir, const Experiment* e, const json& kernels,
                              const json& environment) {
  ReportContext c;
  c.title = dir.root().filename().string();
  if (c.title.empty()) c.title = dir.root().parent_path().filename().string();
  if (e != nullptr) {
    c.title = e->name;
    c.description = e->description;
    // Only the sides' section: the model keeps the labels analysis.json has, so that the HTML
    // says each metric's sentence as analysis.json's headline does (report/wording.hpp).
    c.sides = sides_from_config(*e, kernels.is_null() ? std::map<Side, SideKernel>{}
                                                       : read_side_kernels(kernels, restore_or_remove(dir.kernels(),
                                                                                                      "the kernels")));
  }
  if (!environment.is_null()) {
    c.environment = read_host_environment(environment, restore_or_remove(dir.environment(), "the host"));
  }
  return c;
}

// config.toml as `abvm analyze DIR` and `--resume` load it: relative paths against the experiment
// file's folder that run.json records; in a directory without run.json (put together by hand),
// against the directory.
Experiment read_saved_experiment(const ResultsDir& dir) {
  if (fs::exists(dir.manifest())) return load_saved_experiment(dir, read_manifest(dir));
  return load_experiment_text(read_file(dir.config()), dir.config().string(), dir.root());
}

}  // namespace

ReportContext run_report_context(const Experiment& experiment, const RunRecords& records, const ResultsDir& dir) {
  return results_context(dir, &experiment, records.kernels, records.environment);
}

ReportContext read_report_context(const ResultsDir& dir, const Experiment* experiment) {
  std::optional<Experiment> loaded;
  if (experiment == nullptr && fs::exists(dir.config())) experiment = &loaded.emplace(read_saved_experiment(dir));
  const auto file = [](const fs::path& p) { return fs::exists(p) ? read_json(p) : json(); };
  const json kernels = experiment != nullptr ? file(dir.kernels()) : json();
  return results_context(dir, experiment, kernels, file(dir.environment()));
}

HtmlInputs results_dir_html_inputs(const ResultsDir& dir, const ReportModel& report, ReportContext context,
                                   const PlotOptions& plots) {
  HtmlInputs in{.report = report, .context = std::move(context), .template_html = load_html_template()};
  in.failures = failures_from_report(in.report);
  for (auto& f : in.failures) {
    if (f.trial.empty()) continue;
    const fs::path log = ResultsDir::trial_relative(f.trial) / dir.trial(f.trial).console_log().filename();
    if (fs::exists(dir.root() / log)) f.console_log = log.string();
  }
  in.plots = make_plots(in.report, plots);
  return in;
}

HtmlInputs files_html_inputs(const ReportModel& report, const PlotOptions& plots) {
  // The report of `abvm analyze --a/--b` and `abvm compare`, made in this process just before.
  HtmlInputs in{.report = report, .template_html = load_html_template()};
  const auto names = [](const std::vector<std::string>& files) {
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "" : ", ") + fs::path(f).filename().string();
    return list;
  };
  in.context.title = fmt::format("{} vs {}", names(in.report.source.a), names(in.report.source.b));
  for (Side side : kSides) {
    SideInfo s{.letter = to_string(side)};
    s.label = s.letter;
    std::string files;
    for (const auto& f : side == Side::a ? in.report.source.a : in.report.source.b) {
      files += (files.empty() ? "" : ", ") + f;
    }
    s.settings.emplace_back("measurement files", files);
    in.context.sides.push_back(std::move(s));
  }
  in.failures = failures_from_report(in.report);
  in.plots = make_plots(in.report, plots);
  return in;
}

fs::path write_results_dir_report(const ResultsDir& dir, const ReportModel& report, ReportContext context) {
  const fs::path out = dir.report_html();
  write_file_atomic(out, html_report(results_dir_html_inputs(dir, report, std::move(context), default_plot_options())));
  return out;
}

namespace {

int run_report(const ReportArgs& args) {
  const fs::path dir = args.dir;
  if (!fs::is_directory(dir)) throw Error(fmt::format("{}: not a directory; give an abvm results directory", args.dir));
  const ResultsDir results(dir);
  // analysis.json first: its message says how to make a missing one.
  const ReportModel report = read_report(results);
  const HtmlInputs in = results_dir_html_inputs(results, report, read_report_context(results), default_plot_options());
  const fs::path out = args.output.empty() ? results.report_html() : fs::path(args.output);
  write_file_atomic(out, html_report(in));
  if (!args.junit.empty()) {
    write_file_atomic(args.junit, junit_report(in.report, {.suite = in.context.title}));
  }
  for (const auto& m : in.plots.missing) {
    std::fprintf(stderr, "abvm: warning: plot %s%s missing: %s\n", m.kind.c_str(),
                 m.metric ? fmt::format(" of metric {}", *m.metric + 1).c_str() : "", m.reason.c_str());
  }
  std::cout << out.string() << "\n";
  return 0;
}

}  // namespace

Command add_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand("report", "Write the HTML report (and JUnit XML) of a results directory");
  sub->footer(
      "Reads DIR/analysis.json and, when present, config.toml, kernels.json, environment.json and "
      "trials/<id>/console.log. Plots come from report/plot.py run by /usr/bin/python3 (set ABVM_PYTHON to use "
      "another interpreter); without matplotlib the report says which plots are missing.\n"
      "Exit codes: 0 written, 2 usage or input error, 3 infrastructure error. The verdict's exit code comes from "
      "'abvm analyze' and 'abvm run'.");
  sub->add_option("dir", args->dir, "An abvm results directory")->required();
  sub->add_option("-o,--output", args->output, "Where to write the HTML report")->default_str("DIR/report.html");
  sub->add_option("--junit", args->junit, "Also write JUnit XML (one test case per metric) to this path");
  return {sub, [args] { return run_report(*args); }};
}

}  // namespace abvm::cli
