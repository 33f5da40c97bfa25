// bisect.html: the bisection's answer and its evidence, along the series. The plot is inline SVG
// drawn here, not a PNG of report/plot.py: it needs no Python, and a text format keeps the page
// self-contained and its golden test readable.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "bisect/report.hpp"
#include "report/html.hpp"

namespace abvm {

namespace {

std::string e(std::string_view text) { return html_escape(text); }

// The metrics the steps measured, in the order of their first appearance.
std::vector<std::string> metric_names(const std::vector<StepRecord>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    for (const auto& eff : s.judgement.effects) {
      if (std::find(out.begin(), out.end(), eff.metric) == out.end()) out.push_back(eff.metric);
    }
  }
  return out;
}

struct PlotPoint {
  const StepRecord* step;
  const StepEffect* effect;
};

struct Frame {
  double width = 760, height = 320, left = 64, right = 20, top = 16, bottom = 52;
  int kernels = 1;          // N + 1
  double y_min = 0.9, y_max = 1.1;
  double x(double k) const { return left + (k + 0.5) / kernels * (width - left - right); }
  double y(double v) const { return top + (y_max - v) / (y_max - y_min) * (height - top - bottom); }
};

Frame frame_for(const BisectPlan& plan, const std::vector<PlotPoint>& points) {
  Frame f{.kernels = static_cast<int>(plan.patches.size()) + 1};
  double lo = 1 - plan.margin, hi = 1 + plan.margin;
  for (const auto& p : points) {
    if (std::isfinite(p.effect->low)) lo = std::min(lo, p.effect->low);
    if (std::isfinite(p.effect->high)) hi = std::max(hi, p.effect->high);
  }
  const double pad = (hi - lo) * 0.08;
  f.y_min = lo - pad;
  f.y_max = hi + pad;
  return f;
}

std::string axes(const BisectPlan& plan, const Frame& f) {
  std::string out = fmt::format(
      "<rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"{2:.1f}\" height=\"{3:.1f}\" fill=\"#eef2f6\"/>\n"
      "<line x1=\"{4:.1f}\" y1=\"{5:.1f}\" x2=\"{6:.1f}\" y2=\"{5:.1f}\" stroke=\"#5f6b7a\" stroke-dasharray=\"4 3\"/>\n",
      f.left, f.y(1 + plan.margin), f.width - f.left - f.right, f.y(1 - plan.margin) - f.y(1 + plan.margin), f.left,
      f.y(1), f.width - f.right);
  // Ticks at round ratios (1 among them), at most about six.
  double step = 0.01;
  for (double s : {0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0}) {
    step = s;
    if ((f.y_max - f.y_min) / s <= 6) break;
  }
  for (double v = std::ceil(f.y_min / step) * step; v <= f.y_max + 1e-9; v += step) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{:.2f}</text>\n",
                       f.left - 6, f.y(v) + 4, v);
  }
  const int every = std::max(1, static_cast<int>(std::ceil(f.kernels / 16.0)));
  for (int k = 0; k < f.kernels; k += every) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n", f.x(k),
                       f.height - f.bottom + 16, k == 0 ? std::string("base") : std::to_string(k));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\">kernel k: the base and the first k "
      "patches</text>\n"
      "<text x=\"14\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 {:.1f})\">B/A "
      "against the reference</text>\n",
      (f.left + f.width - f.right) / 2, f.height - 8, (f.top + f.height - f.bottom) / 2, (f.top + f.height - f.bottom) / 2);
  return out;
}

// One step's estimate with its interval; steps against another reference than the base are
// hollow and say which. Steps at the same kernel are spread apart.
std::string point(const Frame& f, const PlotPoint& p, int nth) {
  const double x = f.x(p.step->question.kernel) + 7.0 * nth;
  const bool base = p.step->question.reference == 0;
  const char* colour = p.step->judgement.finding == StepFinding::slower       ? "#b3261e"
                       : p.step->judgement.finding == StepFinding::not_slower ? "#1e7b34"
                                                                              : "#a15c00";
  std::string out = fmt::format(
      "<g><title>step {}: kernel {} against kernel {}: {} B/A {:.3f} [{:.3f}, {:.3f}], {}</title>\n"
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>\n"
      "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
      p.step->step, p.step->question.kernel, p.step->question.reference, e(p.effect->metric), p.effect->estimate,
      p.effect->low, p.effect->high, to_string(p.step->judgement.finding), x, f.y(p.effect->low), x,
      f.y(p.effect->high), colour, x, f.y(p.effect->estimate), base ? colour : "#ffffff", colour);
  if (!base) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"{}\">vs {}</text>\n", x + 5,
                       f.y(p.effect->estimate) - 6, colour, p.step->question.reference);
  }
  return out + "</g>\n";
}

std::string plot(const BisectReport& r, const std::string& metric) {
  std::vector<PlotPoint> points;
  for (const auto& s : r.steps) {
    for (const auto& eff : s.judgement.effects) {
      if (eff.metric == metric && std::isfinite(eff.estimate)) points.push_back({&s, &eff});
    }
  }
  const Frame f = frame_for(r.plan, points);
  std::string out = fmt::format(
      "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} "
      "{1:.0f}\" role=\"img\" aria-label=\"{2} of every tested step along the series\">\n",
      f.width, f.height, e(metric));
  out += axes(r.plan, f);
  for (const auto& c : r.state.culprits) {
    const double x = (f.x(c.first - 1) + f.x(c.first)) / 2;
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#b3261e\" "
                       "stroke-width=\"1\" stroke-dasharray=\"2 2\"/>\n",
                       x, f.top, f.height - f.bottom);
  }
  std::map<int, int> at_kernel;
  for (const auto& p : points) out += point(f, p, at_kernel[p.step->question.kernel]++);
  out += fmt::format(
      "</svg><figcaption>{}: the ratio B/A of every tested step, kernel k (B) against its reference (A), with its "
      "interval at the step's level; filled: against the base, hollow: against the kernel named; red: slower, "
      "green: not slower by more than {:.0f} % (the band), amber: unknown. A dashed red line stands before each "
      "culprit.</figcaption></figure>\n",
      e(metric), r.plan.margin * 100);
  return out;
}

std::string steps_table(const BisectReport& r) {
  std::string out =
      "<section class=\"steps\"><h2>Steps</h2>\n<table>\n<tr><th>step</th><th>kernel (B)</th><th>reference "
      "(A)</th><th>finding</th><th>effect</th><th>boots per side</th><th>stopped</th><th>results</th></tr>\n";
  for (const auto& s : r.steps) {
    std::string effects;
    for (const auto& eff : s.judgement.effects) {
      effects += fmt::format("{}{} {:.3f} [{:.3f}, {:.3f}] ({}, {:.2f} %)", effects.empty() ? "" : "<br>",
                             e(eff.metric), eff.estimate, eff.low, eff.high, e(eff.estimate_kind), eff.confidence * 100);
    }
    std::string link = "-";
    if (!s.results_dir.empty() && s.boots_per_side > 0) {
      link = fmt::format("<a href=\"{0}/report.html\">report</a>, <a href=\"{0}/\">directory</a>", e(s.results_dir));
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{} ({})</td><td>{} ({})</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        s.step, s.question.kernel, e(kernel_label(r.plan, s.question.kernel)), s.question.reference,
        e(kernel_label(r.plan, s.question.reference)), e(s.judgement.reason), to_string(s.judgement.finding),
        effects.empty() ? "-" : effects, s.boots_per_side, e(s.stop_reason.empty() ? s.detail : s.stop_reason), link);
  }
  return out + "</table>\n</section>\n";
}

std::string series_table(const BisectReport& r) {
  std::set<int> culprit;
  for (const auto& c : r.state.culprits) {
    for (int i = c.first; i <= c.last; ++i) culprit.insert(i);
  }
  std::string out =
      "<section class=\"series\"><h2>The series</h2>\n<table>\n<tr><th>patch</th><th>name</th><th>sha256</th>"
      "<th>kernel tested in step(s)</th><th></th></tr>\n";
  for (const auto& p : r.plan.patches) {
    std::string tested;
    for (const auto& s : r.steps) {
      if (s.question.kernel == p.index) tested += (tested.empty() ? "" : ", ") + std::to_string(s.step);
    }
    out += fmt::format("<tr{}><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
                       culprit.contains(p.index) ? " class=\"differs\"" : "", p.index, e(p.name),
                       e(p.sha256.substr(0, 12)), tested.empty() ? "-" : tested,
                       culprit.contains(p.index) ? "culprit" : "");
  }
  return out + "</table>\n</section>\n";
}

std::string verdict_class(const BisectState& s) {
  switch (s.outcome) {
    case BisectOutcome::culprits: return "regression";
    case BisectOutcome::no_regression: return "no_change";
    default: return "inconclusive";
  }
}

}  // namespace

std::string bisect_html(const BisectReport& r, const std::string& template_html) {
  const BisectPlan& p = r.plan;
  std::string body = fmt::format("<h1>abvm bisect: {}</h1>\n<p class=\"description\">{} patch(es) of <code>{}</code> "
                                 "on its base <code>{}</code>, from {}</p>\n",
                                 e(p.experiment), p.patches.size(), e(p.tip_recipe), e(p.base_recipe),
                                 e(p.config.string()));
  body += fmt::format("<section class=\"verdict verdict-{}\" id=\"verdict\">\n<p class=\"overall\">{}</p>\n"
                      "<p class=\"options\">error budget: {:.0f} % for the whole bisection, Bonferroni over at most {} "
                      "steps, so each step at {:.2f} % (its own sequential looks spend that); margin {:.0f} %; {} "
                      "step(s) run</p>\n</section>\n",
                      verdict_class(r.state), e(bisect_sentence(r)), p.confidence * 100, p.max_steps,
                      p.step_confidence * 100, p.margin * 100, r.steps.size());
  body += "<section class=\"along\"><h2>Every tested step along the series</h2>\n";
  for (const auto& m : metric_names(r.steps)) body += plot(r, m);
  if (r.steps.empty()) body += "<p>No step has finished yet.</p>\n";
  body += "</section>\n" + steps_table(r) + series_table(r);
  body += fmt::format("<footer>abvm {}; bisect.json holds the same data (report/bisect_schema.json).</footer>\n",
                      e(ABVM_VERSION));
  return fill_html_template(template_html, p.experiment + " bisect", body);
}

}  // namespace abvm
