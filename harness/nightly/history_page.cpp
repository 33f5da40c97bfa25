#include "nightly/history_page.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/base64.hpp"
#include "core/error.hpp"
#include "core/vocabulary.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/process.hpp"
#include "core/resources.hpp"
#include "report/html.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string culprit_text(const NightRecord& r) {
  if (!r.bisection) return "";
  std::string out;
  for (const auto& c : r.bisection->culprits) {
    if (c.commits.size() == 1) {
      out += fmt::format("{}{} {}", out.empty() ? "" : "; ", short_sha(c.commits[0].commit), c.commits[0].subject);
    } else if (!c.commits.empty()) {
      out += fmt::format("{}one of {} commits {}..{}", out.empty() ? "" : "; ", c.commits.size(),
                         short_sha(c.commits.front().commit), short_sha(c.commits.back().commit));
    }
  }
  return out;
}

// What history_plot.py reads: per metric, each night that measured it (and its drift comparison).
json plot_input(const std::vector<NightRecord>& lines) {
  json metrics = json::array();
  double margin = 0.05;
  for (const auto& name : history_metrics(lines)) {
    json nights = json::array(), better = "higher";
    int x = 0;
    for (const auto& r : lines) {
      if (!r.ran()) continue;
      margin = r.margin;
      const std::string label = fmt::format("{} {}", r.date.substr(5, 5), short_sha(r.b));
      for (const auto& m : r.metrics) {
        if (m.name != name) continue;
        better = m.better;
        // The bisection searched for the judged regressions: its culprit is not a metric's reported beside them.
        nights.push_back({{"x", x}, {"label", label}, {"estimate", m.estimate}, {"low", m.low}, {"high", m.high},
                          {"verdict", m.verdict}, {"judged", m.judged},
                          {"culprit", m.judged ? culprit_text(r).substr(0, 40) : ""}, {"drift", false}});
      }
      for (const auto& m : r.drift ? r.drift->metrics : std::vector<MetricResult>{}) {
        if (m.name != name) continue;
        nights.push_back({{"x", x}, {"label", label}, {"estimate", m.estimate}, {"low", m.low}, {"high", m.high},
                          {"verdict", m.verdict}, {"judged", m.judged}, {"culprit", ""}, {"drift", true}});
      }
      ++x;
    }
    metrics.push_back({{"name", name}, {"better", better}, {"nights", nights}});
  }
  return {{"margin", margin}, {"metrics", metrics}};
}

}  // namespace

std::vector<std::string> history_metrics(const std::vector<NightRecord>& lines) {
  std::vector<std::string> out;
  for (const auto& r : lines) {
    for (const auto& m : r.metrics) {
      if (std::find(out.begin(), out.end(), m.name) == out.end()) out.push_back(m.name);
    }
  }
  return out;
}

HistoryPlots history_plots(const std::vector<NightRecord>& lines) {
  HistoryPlots out;
  if (history_metrics(lines).empty()) return out;
  const char* py = std::getenv("ABVM_PYTHON");
  const std::string python = py != nullptr && *py != '\0' ? py : "/usr/bin/python3";
  const fs::path script = data_dir() / "report" / "history_plot.py";
  const fs::path tmp = fs::temp_directory_path() / fmt::format("abvm-history-{}", ::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    write_file_atomic(tmp / "input.json", plot_input(lines).dump());
    const ProcessResult r = run_process({python, script.string(), (tmp / "input.json").string(), (tmp / "png").string()},
                                        {.timeout = std::chrono::minutes(5)});
    if (r.exit_code != 0) {
      out.missing.push_back(fmt::format("{} {} exited with status {}: {}", python, script.string(), r.exit_code,
                                        r.err.substr(r.err.size() > 400 ? r.err.size() - 400 : 0)));
    } else {
      const JsonDocument doc(r.out, JsonSource{.file = script.filename().string() + "'s manifest"});
      const JsonField manifest = doc.root();
      for (const JsonField& p : manifest.member("plots", "a list").elements()) {
        out.plots.push_back({.metric = p.required<std::size_t>("metric"),
                             .png = read_file(tmp / "png" / p.required<std::string>("file"))});
      }
      for (const JsonField& m : manifest.member("missing", "a list").elements()) {
        out.missing.push_back(m.required<std::string>("reason"));
      }
    }
  } catch (const std::exception& ex) {  // no python, a bad manifest: the page says so
    out.missing.push_back(fmt::format("the plots could not be made: {}", ex.what()));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return out;
}

namespace {

std::string link(const std::string& path, const std::string& text, const HistoryHref& href) {
  if (path.empty()) return "";
  const auto to = href(path);
  if (!to) return fmt::format("{} <span class=\"muted\">(no longer kept)</span>", html_escape(text));
  return fmt::format("<a href=\"{}\">{}</a>", html_escape(*to), html_escape(text));
}

// A metric reported, not judged, is no regression of the night whatever its own verdict: not coloured
// as one, said so, its own verdict in the cell's title.
std::string metric_cell(const MetricResult& m) {
  const std::string figures = fmt::format("{:.3f} [{:.3f}, {:.3f}]", m.estimate, m.low, m.high);
  if (m.judged) return fmt::format("<td class=\"v-{}\">{}</td>", html_escape(m.verdict), figures);
  return fmt::format("<td class=\"not-judged\" title=\"its own verdict: {}; {}\">{} <span class=\"muted\">reported, "
                     "not judged</span></td>",
                     html_escape(m.verdict), html_escape(kNotJudgedWords), figures);
}

std::string metric_cells(const NightRecord& r, const std::vector<std::string>& metrics) {
  std::string out;
  for (const auto& name : metrics) {
    const auto m = std::find_if(r.metrics.begin(), r.metrics.end(), [&](const MetricResult& x) { return x.name == name; });
    out += m == r.metrics.end() ? "<td>-</td>" : metric_cell(*m);
  }
  return out;
}

std::string night_row(const NightRecord& r, const std::vector<std::string>& metrics,
                      const HistoryHref& href) {
  std::string bisect = culprit_text(r);
  if (r.bisection) {
    bisect = fmt::format("{}: {} {}", html_escape(r.bisection->outcome), html_escape(bisect),
                         link(r.bisection->report, "bisect.html", href));
  }
  std::string drift;
  if (r.drift) drift = fmt::format("against {}: {}", short_sha(r.drift->a), r.drift->verdict);
  return fmt::format(
      "<tr class=\"night-row\"><td>{}</td><td title=\"{}\">{} &rarr; {}</td><td>{}</td><td class=\"v-{}\">{}{}</td>{}"
      "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
      html_escape(r.date), html_escape(r.a_why), short_sha(r.a), short_sha(r.b), r.commits.size(), html_escape(r.outcome),
      html_escape(r.outcome), r.good ? " (good)" : "", metric_cells(r, metrics), bisect, html_escape(drift),
      link(r.report, "report", href));
}

}  // namespace

std::vector<std::vector<NightRecord>> history_series(const std::vector<NightRecord>& lines) {
  std::vector<std::vector<NightRecord>> out;
  for (const auto& r : lines) {
    const auto same = [&](const std::vector<NightRecord>& s) { return s[0].url == r.url && s[0].branch == r.branch; };
    const auto it = std::find_if(out.begin(), out.end(), same);
    (it == out.end() ? out.emplace_back() : *it).push_back(r);
  }
  return out;
}

namespace {

std::string series_section(const HistorySeries& s, const HistoryHref& href) {
  const std::vector<std::string> metrics = history_metrics(s.nights);
  const NightRecord& newest = s.nights.back();
  std::string body = fmt::format("<h2>{} {}</h2>\n<p>{} night{} (experiment {}). Margin {:.0f} %.</p>\n",
                                 html_escape(newest.url), html_escape(newest.branch), s.nights.size(),
                                 s.nights.size() == 1 ? "" : "s",
                                 html_escape(newest.experiment), newest.margin * 100);
  for (const auto& p : s.plots.plots) {
    body += fmt::format("<h3>{}</h3>\n<img alt=\"{} by night\" src=\"data:image/png;base64,{}\">\n",
                        html_escape(metrics.at(p.metric)), html_escape(metrics.at(p.metric)), base64_encode(p.png));
  }
  for (const auto& m : s.plots.missing) body += fmt::format("<p class=\"muted\">No plot: {}</p>\n", html_escape(m));
  body += "<h3>Nights</h3>\n<table>\n<tr><th>date</th><th>A &rarr; B</th><th>commits</th><th>outcome</th>";
  for (const auto& m : metrics) body += fmt::format("<th>{} B/A</th>", html_escape(m));
  body += "<th>bisection</th><th>drift</th><th>report</th></tr>\n";
  for (auto it = s.nights.rbegin(); it != s.nights.rend(); ++it) body += night_row(*it, metrics, href);
  return body + "</table>\n";
}

}  // namespace

std::string history_html(const std::vector<HistorySeries>& series, const HistoryHref& href,
                         const std::string& template_html) {
  std::string body =
      "<h1>abvm nightly history</h1>\n<p>Each night compares the branch head (B) with the last good commit (A); a "
      "regression is bisected over the commits between them.</p>\n";
  if (series.empty()) body += "<p>No nights yet.</p>\n";
  for (const auto& s : series) body += series_section(s, href);
  body += "<style>.v-regression{color:#c62828;font-weight:bold}.v-improvement{color:#2e7d32}"
          ".v-inconclusive{color:#e8710a}.not-judged,.muted{color:#777}</style>\n";
  return fill_html_template(template_html, "abvm nightly history", body);
}

}  // namespace abvm
