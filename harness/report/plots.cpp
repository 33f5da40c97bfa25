#include "report/plots.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/process.hpp"
#include "core/resources.hpp"
#include "report/json_report.hpp"
#include "samples/cost.hpp"

namespace abvm {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTempPrefix = "abvm-plots-";

// A temporary directory that is removed with everything in it, whatever happens short of
// SIGKILL; its name carries our pid so that a later abvm can tell it is stale.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / fmt::format("{}{}-XXXXXX", kTempPrefix, ::getpid())).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw InfraError(fmt::format("cannot create a temporary directory like {}; check TMPDIR", pattern));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string tail(const std::string& text, std::size_t max) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() <= max ? t : "..." + t.substr(t.size() - max);
}

PlotSet all_missing(std::string reason) {
  PlotSet set;
  set.missing.push_back({std::nullopt, "all", std::move(reason)});
  return set;
}

}  // namespace

std::vector<std::string> expected_plot_kinds(const ReportMetric& metric) {
  std::vector<std::string> kinds(std::begin(kPlotKinds), std::end(kPlotKinds));
  const auto timed = [](const std::vector<ReportRun>& runs) {
    return std::any_of(runs.begin(), runs.end(), [](const ReportRun& r) { return r.timing.has_value(); });
  };
  bool any = false;
  for (const ReportSide* side : {&metric.a, &metric.b}) {
    any = any || timed(side->runs) || (side->voided_runs && timed(*side->voided_runs));
  }
  if (any) kinds.emplace_back(kTimelineKind);
  if (is_cost_metric(metric.name)) kinds.emplace_back(kCostKind);
  return kinds;
}

std::vector<fs::path> remove_stale_plot_directories(const fs::path& tmp) {
  std::vector<fs::path> stale;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(kTempPrefix) || !e.is_directory(ec)) continue;
    const std::string rest = name.substr(kTempPrefix.size());
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.substr(0, dash).find_first_not_of("0123456789") != std::string::npos) {
      continue;  // not a name this version of abvm makes: not ours to judge
    }
    if (!process_alive(std::strtol(rest.substr(0, dash).c_str(), nullptr, 10))) stale.push_back(e.path());
  }
  for (const auto& p : stale) fs::remove_all(p, ec);
  return stale;
}

PlotOptions default_plot_options() {
  PlotOptions o;
  // Not resource(): without the script the report still comes out, with every plot listed as missing.
  o.script = data_dir() / "report" / "plot.py";
  if (const char* p = std::getenv("ABVM_PYTHON"); p != nullptr && *p != '\0') o.python = p;
  if (const char* s = std::getenv("ABVM_PLOT_SCRIPT"); s != nullptr && *s != '\0') o.script = s;
  return o;
}

namespace {

// What plot.py's manifest lists (report/plot.py's header): the plots it made, read from `png`, and
// those it could not make; `accounted` holds the (metric, kind) of each, and `everything_missing`
// says that one entry stood for every plot.
struct ManifestPlots {
  PlotSet set;
  std::set<std::pair<std::size_t, std::string>> accounted;
  bool everything_missing = false;
};

ManifestPlots read_plot_manifest(const JsonField& manifest, const fs::path& png) {
  ManifestPlots out;
  for (const JsonField& m : manifest.value_or<std::vector<JsonField>>("missing", {})) {
    MissingPlot miss{.metric = m.value_or<std::optional<std::size_t>>("metric", std::nullopt),
                     .kind = m.value_or<std::string>("kind", "all"),
                     .reason = m.value_or<std::string>("reason", "no reason given")};
    if (!miss.metric) out.everything_missing = true;
    else out.accounted.insert({*miss.metric, miss.kind});
    out.set.missing.push_back(std::move(miss));
  }
  for (const JsonField& p : manifest.value_or<std::vector<JsonField>>("plots", {})) {
    Plot plot{.metric = p.required<std::size_t>("metric"),
              .kind = p.required<std::string>("kind"),
              .title = p.value_or<std::string>("title", "")};
    const fs::path file = png / p.required<std::string>("file");
    out.accounted.insert({plot.metric, plot.kind});
    try {
      plot.png = read_file(file);
    } catch (const Error&) {
      out.set.missing.push_back({plot.metric, plot.kind, fmt::format("plot.py listed {} but did not write it",
                                                                     file.filename().string())});
      continue;
    }
    out.set.plots.push_back(std::move(plot));
  }
  return out;
}

}  // namespace

PlotSet make_plots(const ReportModel& report, const PlotOptions& options) {
  const std::size_t metrics = report.metrics.size();
  if (metrics == 0) return {};
  if (!fs::exists(options.python)) {
    return all_missing(fmt::format("{} does not exist; install python3 with python3-matplotlib (harness/setup.sh)",
                                   options.python.string()));
  }
  if (!fs::exists(options.script)) {
    return all_missing(fmt::format("the plot script {} does not exist; reinstall abvm or set "
                                   "ABVM_PLOT_SCRIPT",
                                   options.script.string()));
  }
  // An abvm killed while plotting left its directory behind: clear those of dead processes.
  std::error_code ec;
  remove_stale_plot_directories(fs::temp_directory_path(ec));
  TempDir tmp;
  const fs::path json_path = tmp.path() / "analysis.json";
  write_file_atomic(json_path, json_report(report).dump());
  ProcessResult r;
  try {
    r = run_process({options.python.string(), options.script.string(), json_path.string(), (tmp.path() / "png").string()},
                    {.timeout = options.timeout});
  } catch (const InfraError& e) {
    return all_missing(e.what());
  }
  if (r.timed_out) {
    return all_missing(fmt::format("{} did not finish within {} s", options.script.filename().string(),
                                   options.timeout.count() / 1000));
  }
  if (r.exit_code != 0) {
    return all_missing(fmt::format("{} exited with status {}: {}", describe_command({options.python.string(),
                                   options.script.string()}), r.exit_code, tail(r.err, 400)));
  }
  std::optional<JsonDocument> manifest;
  try {
    manifest.emplace(r.out, JsonSource{.file = options.script.filename().string() + "'s manifest"});
  } catch (const Error&) {
    return all_missing(fmt::format("{} printed no manifest (stdout: '{}', stderr: '{}')",
                                   options.script.filename().string(), tail(r.out, 200), tail(r.err, 200)));
  }
  ManifestPlots listed;
  try {
    listed = read_plot_manifest(manifest->root(), tmp.path() / "png");
  } catch (const Error& e) {  // a field missing or mistyped: plot.py and this abvm do not agree
    return all_missing(e.what());
  }
  PlotSet& set = listed.set;
  const auto& accounted = listed.accounted;
  // A plot neither made nor explained is still reported: the reader must never have to guess.
  if (!listed.everything_missing) {
    for (std::size_t i = 0; i < metrics; ++i) {
      for (const std::string& kind : expected_plot_kinds(report.metrics[i])) {
        if (!accounted.contains({i, kind})) set.missing.push_back({i, kind, "plot.py did not produce it"});
      }
    }
  }
  return std::move(listed.set);
}

}  // namespace abvm
