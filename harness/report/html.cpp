#include "report/html.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/resources.hpp"
#include "report/format.hpp"

namespace abvm {
namespace {

using nlohmann::json;

// A number from the JSON report; null (NaN or infinity when written) reads as NaN.
double num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nan("");
  return j[key].get<double>();
}

std::string str(const json& j, const char* key, std::string fallback = "") {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return fallback;
  return j[key].get<std::string>();
}

std::string e(std::string_view s) { return html_escape(s); }

std::string fixed(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-"; }

std::string pvalue(double p) { return std::isfinite(p) ? fmt::format("{:.3g}", p) : "-"; }

bool is_time_unit(const std::string& unit) { return unit == "ns" || unit == "us" || unit == "ms" || unit == "s"; }

// The word for a ratio B/A above or below 1 in this metric's terms.
std::string change_word(double ratio, const std::string& unit) {
  if (unit == "B/s" || unit == "IOPS") return ratio < 1 ? "slower" : "faster";
  if (is_time_unit(unit)) return ratio > 1 ? "slower" : "faster";
  return ratio < 1 ? "lower" : "higher";
}

std::string percent(double ratio) { return fmt::format("{:.1f} %", std::abs(ratio - 1) * 100); }

std::string verdict_words(const std::string& verdict, double margin) {
  if (verdict == "no_change") return fmt::format("no change (within ±{:.3g} %)", margin * 100);
  return verdict;
}

json side_label_source(const json& report) { return report.contains("source") ? report["source"] : json::object(); }

std::string b_label_of(const json& report) { return str(side_label_source(report), "b_label", "B"); }
std::string a_label_of(const json& report) { return str(side_label_source(report), "a_label", "A"); }

std::string labelled(const std::string& letter, const std::string& label) {
  return label.empty() || label == letter ? letter : fmt::format("{} ({})", label, letter);
}

const char* kind_caption(const std::string& kind) {
  if (kind == "runs") return "every run per side over a box plot";
  if (kind == "order") return "value against run order";
  if (kind == "distribution") return "distributions with the detected modes";
  if (kind == "effect") return "effect with its interval against the margin";
  return "plot";
}

std::string side_stat_rows(const json& m, const std::string& a_label, const std::string& b_label) {
  const std::string unit = str(m, "unit");
  const json& a = m["a"];
  const json& b = m["b"];
  std::string out;
  out += fmt::format("<tr><th></th><th>{}</th><th>{}</th></tr>\n", e(a_label), e(b_label));
  const auto row = [&](const char* name, const std::string& x, const std::string& y) {
    out += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td></tr>\n", name, x, y);
  };
  const auto value_row = [&](const char* name, const char* key) {
    row(name, e(format_value(num(a, key), unit)), e(format_value(num(b, key), unit)));
  };
  const auto count = [](const json& s) {
    std::string t = fmt::format("{}", s.value("n", 0));
    if (str(s, "unit_kind") == "boot") t += fmt::format(" runs in {} boots", s.value("units", 0));
    return t;
  };
  row("n", count(a), count(b));
  value_row("median", "median");
  value_row("mean", "mean");
  value_row("standard deviation", "sd");
  value_row("MAD", "mad");
  value_row("IQR", "iqr");
  value_row("min", "min");
  value_row("max", "max");
  row("CV", fixed(num(a, "cv") * 100, 1) + " %", fixed(num(b, "cv") * 100, 1) + " %");
  const auto outliers = [](const json& s) {
    if (!s.contains("outliers") || s["outliers"].empty()) return std::string("none");
    std::string t = fmt::format("{} (runs", s["outliers"].size());
    for (const auto& i : s["outliers"]) t += fmt::format(" #{}", i.get<long long>() + 1);
    return t + ")";
  };
  row("outliers (flagged, kept)", outliers(a), outliers(b));
  return out;
}

std::string effect_row(const char* name, const json& eff) {
  if (!eff.is_object()) return "";
  std::string conf = fmt::format("{:.3g} %", num(eff, "confidence") * 100);
  const double achieved = num(eff, "achieved_confidence");
  if (std::isfinite(achieved) && achieved + 1e-9 < num(eff, "confidence")) {
    conf += fmt::format(" (achieved {:.3g} %: too few units)", achieved * 100);
  }
  return fmt::format("<tr><th>{}</th><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td></tr>\n", name,
                     fixed(num(eff, "estimate"), 4), fixed(num(eff, "ci_low"), 4), fixed(num(eff, "ci_high"), 4),
                     conf, e(str(eff, "method")));
}

std::string list_items(const json& items, const char* css) {
  if (!items.is_array() || items.empty()) return "";
  std::string out = fmt::format("<ul class=\"{}\">\n", css);
  for (const auto& w : items) out += "<li>" + e(w.is_string() ? w.get<std::string>() : w.dump()) + "</li>\n";
  return out + "</ul>\n";
}

std::string plots_of(const PlotSet& plots, std::size_t metric, const std::string& metric_name) {
  std::string out = "<div class=\"plots\">\n";
  for (const char* kind : kPlotKinds) {
    for (const auto& p : plots.plots) {
      if (p.metric != metric || p.kind != kind) continue;
      out += fmt::format(
          "<figure class=\"plot plot-{0}\"><img src=\"data:image/png;base64,{1}\" alt=\"{2}: {3}\">"
          "<figcaption>{2}: {4}</figcaption></figure>\n",
          kind, base64_encode(p.png), e(metric_name), kind_caption(kind), e(p.title));
    }
  }
  out += "</div>\n";
  std::string missing;
  for (const auto& m : plots.missing) {
    if (!m.metric || *m.metric != metric) continue;
    missing += fmt::format("<li>{} ({}): {}</li>\n", e(m.kind), kind_caption(m.kind), e(m.reason));
  }
  if (!missing.empty()) out += "<div class=\"missing-plots\"><p>Plots missing:</p><ul>\n" + missing + "</ul></div>\n";
  return out;
}

std::string metric_section(const HtmlInputs& in, std::size_t i, const json& m) {
  const json& report = in.report;
  const std::string a_label = a_label_of(report), b_label = b_label_of(report);
  const std::string name = str(m, "name"), unit = str(m, "unit"), verdict = str(m, "verdict", "inconclusive");
  std::string out;
  out += fmt::format("<section class=\"metric\" id=\"metric-{}\">\n", i);
  out += fmt::format("<h2>{} <span class=\"badge verdict-{}\">{}</span></h2>\n", e(name), e(verdict), e(verdict));
  out += fmt::format("<p class=\"unit\">unit {}, {} is better</p>\n", e(unit.empty() ? "none" : unit),
                     e(str(m, "better", "higher")));
  out += fmt::format("<p class=\"sentence\">{}</p>\n", e(metric_sentence(m, b_label)));
  if (m.contains("runs_needed") && m["runs_needed"].is_number()) {
    out += fmt::format("<p class=\"runs-needed\">About {} {} per side would likely settle it.</p>\n",
                       m["runs_needed"].get<long long>(), str(m["a"], "unit_kind") == "boot" ? "boots" : "runs");
  }
  out += list_items(m.value("warnings", json::array()), "warnings");
  out += list_items(m.value("notes", json::array()), "notes");
  out += "<div class=\"tables\">\n<table class=\"stats\">\n" + side_stat_rows(m, a_label, b_label) + "</table>\n";
  out += "<table class=\"effects\">\n<tr><th>ratio B/A</th><th>estimate</th><th>interval</th><th>level</th>"
         "<th>method</th></tr>\n";
  out += effect_row("effect", m.value("effect", json()));
  out += effect_row("paired effect", m.value("paired_effect", json()));
  if (m.contains("mode_test") && m["mode_test"].is_object()) {
    out += effect_row("inside the dominant mode", m["mode_test"].value("dominant_mode_effect", json()));
  }
  out += effect_row("bootstrap ratio of medians", m.value("bootstrap_median_ratio", json()));
  out += "</table>\n";
  const json mw = m.value("mann_whitney", json::object());
  out += fmt::format("<p>Mann-Whitney U = {}, p = {} (Holm-adjusted {}){}.</p>\n", fixed(num(mw, "u"), 1),
                     pvalue(num(mw, "p")), pvalue(num(mw, "p_holm")), mw.value("exact", false) ? ", exact" : "");
  const json modes = m.value("modes", json::array());
  if (modes.size() > 1) {
    out += "<table class=\"modes\">\n<tr><th>mode</th><th>range</th><th>" + e(a_label) + "</th><th>" + e(b_label) +
           "</th></tr>\n";
    for (std::size_t k = 0; k < modes.size(); ++k) {
      const json& md = modes[k];
      out += fmt::format("<tr><th>{}{}</th><td>{} to {}</td><td>{:.0f} % ({})</td><td>{:.0f} % ({})</td></tr>\n", k + 1,
                         md.value("dominant", false) ? " (dominant)" : "", e(format_value(num(md, "low"), unit)),
                         e(format_value(num(md, "high"), unit)), num(md, "a_fraction") * 100, md.value("a_count", 0),
                         num(md, "b_fraction") * 100, md.value("b_count", 0));
    }
    out += "</table>\n";
    if (m.contains("mode_test") && m["mode_test"].is_object()) {
      const json& t = m["mode_test"];
      out += fmt::format("<p>Fisher's exact test of the mode fractions: p = {} two-sided; B more often in worse modes: "
                         "p = {} (judged at {}).</p>\n",
                         pvalue(num(t, "p_two_sided")), pvalue(num(t, "p_b_more_in_worse")), pvalue(num(t, "alpha")));
    }
  }
  out += "</div>\n";
  out += plots_of(in.plots, i, name);
  out += "</section>\n";
  return out;
}

// Accelerators in use: environment.json's, else every one named in the journal.
std::set<std::string> accelerators(const HtmlInputs& in) {
  std::set<std::string> acc;
  if (in.environment.is_object() && in.environment.contains("accelerator") && in.environment["accelerator"].is_string()) {
    acc.insert(in.environment["accelerator"].get<std::string>());
  }
  if (in.report.contains("context")) {
    for (const char* side : {"a", "b"}) {
      const json c = in.report["context"].value(side, json::object());
      for (const auto& x : c.value("accelerators", json::array())) {
        if (x.is_string() && !x.get<std::string>().empty()) acc.insert(x.get<std::string>());
      }
    }
  }
  return acc;
}

std::string host_section(const HtmlInputs& in) {
  std::string out = "<section class=\"host\"><h2>Host and accelerator</h2>\n<table>\n";
  const auto row = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) out += "<tr><th>" + e(k) + "</th><td>" + e(v) + "</td></tr>\n";
  };
  const json& env = in.environment;
  if (env.is_object()) {
    row("host", str(env, "hostname"));
    if (env.contains("host_kernel") && env["host_kernel"].is_object()) {
      row("host kernel", str(env["host_kernel"], "sysname") + " " + str(env["host_kernel"], "release") + " " +
                             str(env["host_kernel"], "machine"));
    }
    row("CPU", str(env, "cpu_model") +
                   (env.contains("cpus_online") ? fmt::format(" ({} CPUs online)", env["cpus_online"].dump()) : ""));
    row("cpufreq governor", env.contains("cpufreq_governor") && env["cpufreq_governor"].is_string()
                                ? env["cpufreq_governor"].get<std::string>()
                                : "none (no cpufreq)");
    if (env.contains("load_average") && env["load_average"].is_array()) row("load average", env["load_average"].dump());
    row("QEMU", str(env, "qemu_version"));
    row("libvirt", str(env, "libvirt_version") + (str(env, "libvirt_uri").empty() ? "" : ", " + str(env, "libvirt_uri")));
    row("accelerator", str(env, "accelerator") +
                           (str(env, "accelerator_reason").empty() ? "" : " (" + str(env, "accelerator_reason") + ")"));
  }
  if (in.report.contains("context")) {
    for (const char* side : {"a", "b"}) {
      const json c = in.report["context"].value(side, json::object());
      std::string hosts, accs;
      for (const auto& h : c.value("hosts", json::array())) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
      for (const auto& a : c.value("accelerators", json::array())) accs += (accs.empty() ? "" : ", ") + a.get<std::string>();
      const std::string letter = side[0] == 'a' ? "A" : "B";
      row("side " + letter + " measured on", hosts + (accs.empty() ? "" : " (" + accs + ")"));
    }
  }
  out += "</table>\n";
  if (accelerators(in).contains("tcg")) {
    out += "<p class=\"warning tcg\">Measured under TCG (QEMU's emulator, no KVM): the numbers describe the emulator "
           "as much as the kernel, and effects of the I/O path may be hidden or magnified. Confirm on a host with "
           "/dev/kvm before acting on the verdict.</p>\n";
  }
  if (accelerators(in).empty() && !env.is_object()) {
    out += "<p>Not recorded: the measurements came from files, not from an abvm run.</p>\n";
  }
  return out + "</section>\n";
}

std::string sides_section(const HtmlInputs& in) {
  if (in.sides.empty()) return "";
  std::set<std::string> keys;
  std::vector<std::string> order;
  for (const auto& s : in.sides) {
    for (const auto& [k, v] : s.settings) {
      if (keys.insert(k).second) order.push_back(k);
    }
  }
  const auto value_of = [](const SideInfo& s, const std::string& key) -> std::string {
    for (const auto& [k, v] : s.settings) {
      if (k == key) return v;
    }
    return "(default)";
  };
  std::string out = "<section class=\"sides\"><h2>The two sides</h2>\n<table>\n<tr><th></th>";
  for (const auto& s : in.sides) out += "<th>" + e(labelled(s.letter, s.label)) + "</th>";
  out += "</tr>\n";
  std::vector<std::string> differs;
  for (const auto& k : order) {
    bool same = true;
    for (const auto& s : in.sides) same = same && value_of(s, k) == value_of(in.sides.front(), k);
    if (!same) differs.push_back(k);
    out += fmt::format("<tr{}><th>{}</th>", same ? "" : " class=\"differs\"", e(k));
    for (const auto& s : in.sides) out += "<td>" + e(value_of(s, k)) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (differs.empty()) {
    out += "<p class=\"differs-summary\">The sides do not differ in any recorded setting (an A/A comparison).</p>\n";
  } else {
    std::string list;
    for (const auto& k : differs) list += (list.empty() ? "" : ", ") + k;
    out += "<p class=\"differs-summary\">What differs: " + e(list) + ".</p>\n";
  }
  return out + "</section>\n";
}

std::string failures_section(const HtmlInputs& in) {
  const json fr = in.report.value("failed_runs", json::object());
  std::string out = "<section class=\"failures\" id=\"failures\"><h2>Failed trials</h2>\n";
  if (in.failures.empty()) return out + "<p>None: every run produced its measurements.</p>\n</section>\n";
  out += fmt::format("<p>{} failed run(s) (A: {}, B: {}). They are counted, never averaged in.</p>\n",
                     in.failures.size(), fr.value("a", 0), fr.value("b", 0));
  out += "<table>\n<tr><th>side</th><th>trial</th><th>outcome</th><th>what happened</th><th>console</th></tr>\n";
  for (const auto& f : in.failures) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", e(f.side), e(f.trial),
                       e(f.outcome), e(f.what),
                       f.console_log.empty() ? std::string("-")
                                             : fmt::format("<a href=\"{}\">console.log</a>", e(f.console_log)));
  }
  return out + "</table>\n</section>\n";
}

std::string replace_once(std::string text, std::string_view key, const std::string& value) {
  const auto at = text.find(key);
  if (at == std::string::npos) throw Error(fmt::format("report/template.html: no {} placeholder; restore it", key));
  return text.replace(at, key.size(), value);
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string load_html_template() {
  const std::filesystem::path p = resource("report/template.html");
  try {
    return read_file(p);
  } catch (const Error& ex) {
    throw InfraError(fmt::format("{} (the HTML report's template)", ex.what()));
  }
}

std::vector<FailedTrial> failures_from_report(const nlohmann::json& report) {
  std::vector<FailedTrial> out;
  for (const auto& f : report.value("failures", json::array())) {
    FailedTrial t{.side = str(f, "side"), .outcome = str(f, "outcome"), .what = str(f, "what")};
    const std::string source = str(f, "source");
    if (source.rfind("trial ", 0) == 0) {
      const auto end = source.find(' ', 6);
      t.trial = source.substr(6, end == std::string::npos ? std::string::npos : end - 6);
    } else {
      t.trial = source;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string metric_sentence(const nlohmann::json& metric, const std::string& b_label) {
  const json eff = metric.value("effect", json::object());
  const double r = num(eff, "estimate"), lo = num(eff, "ci_low"), hi = num(eff, "ci_high");
  const std::string unit = str(metric, "unit"), name = str(metric, "name");
  const std::string who = labelled("B", b_label);
  const std::string verdict = str(metric, "verdict", "inconclusive");
  if (!std::isfinite(r)) return fmt::format("{} in {}: no estimate: {}", who, name, verdict);
  std::string s = std::abs(r - 1) < 5e-4 ? fmt::format("{} is as fast as A in {}", who, name)
                                         : fmt::format("{} is {} {} in {}", who, percent(r), change_word(r, unit), name);
  if (std::isfinite(lo) && std::isfinite(hi)) {
    const std::string conf = fmt::format("{:.3g} % CI", num(eff, "confidence") * 100);
    if ((lo - 1) * (hi - 1) > 0) {
      const double near = std::abs(lo - 1) < std::abs(hi - 1) ? lo : hi, far = near == lo ? hi : lo;
      s += fmt::format(" ({} {} to {} {})", conf, fmt::format("{:.1f}", std::abs(near - 1) * 100), percent(far),
                       change_word(lo, unit));
    } else {
      s += fmt::format(" ({} from {} {} to {} {})", conf, percent(lo), change_word(lo, unit), percent(hi),
                       change_word(hi, unit));
    }
  }
  return s + ": " + verdict;
}

std::string html_report(const HtmlInputs& in) {
  const json& report = in.report;
  const std::string verdict = str(report, "verdict", "inconclusive");
  const json options = report.value("options", json::object());
  const double margin = num(options, "margin");
  const json metrics = report.value("metrics", json::array());
  const std::string b_label = b_label_of(report);

  std::string body;
  body += "<header>\n<h1>" + e(in.title) + "</h1>\n";
  if (!in.description.empty()) body += "<p class=\"description\">" + e(in.description) + "</p>\n";
  body += "</header>\n";

  // The verdict first, in words: the metrics that decided it, then every other metric.
  body += fmt::format("<section class=\"verdict verdict-{0}\" id=\"verdict\">\n<p class=\"overall\">Verdict: "
                      "<strong>{1}</strong></p>\n<ul class=\"headlines\">\n",
                      e(verdict), e(verdict_words(verdict, margin)));
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const bool decides = str(metrics[i], "verdict") == verdict;
      if (decides != (pass == 0)) continue;
      body += fmt::format("<li class=\"{}\"><a href=\"#metric-{}\">{}</a></li>\n", decides ? "decides" : "other", i,
                          e(metric_sentence(metrics[i], b_label)));
    }
  }
  body += "</ul>\n";
  body += fmt::format("<p class=\"options\">Margin of practical interest ±{:.3g} %, family-wise confidence {:.3g} % "
                      "(intervals at {:.4g} % per metric), bootstrap seed {}.</p>\n",
                      margin * 100, num(options, "confidence") * 100, num(options, "interval_confidence") * 100,
                      options.contains("seed") ? options["seed"].dump() : "-");
  body += list_items(report.value("warnings", json::array()), "warnings");
  body += "</section>\n";

  body += sides_section(in);
  body += host_section(in);
  for (const auto& m : in.plots.missing) {
    if (!m.metric) body += "<p class=\"missing-plots\" id=\"no-plots\">No plots: " + e(m.reason) + "</p>\n";
  }
  for (std::size_t i = 0; i < metrics.size(); ++i) body += metric_section(in, i, metrics[i]);
  body += failures_section(in);

  const json source = report.value("source", json::object());
  body += "<footer>\n<p>abvm " + e(report.contains("tool") ? str(report["tool"], "version") : "") + ", report schema " +
          e(report.contains("schema_version") ? report["schema_version"].dump() : "?") + ". Source: ";
  if (str(source, "kind") == "results") {
    body += "results directory " + e(str(source, "results_dir"));
  } else {
    std::string files;
    for (const char* side : {"a", "b"}) {
      files += side[0] == 'a' ? "A: " : "; B: ";
      std::string list;
      for (const auto& f : source.value(side, json::array())) list += (list.empty() ? "" : ", ") + f.get<std::string>();
      files += list;
    }
    body += e(files);
  }
  body += ".</p>\n</footer>\n";

  std::string html = replace_once(in.template_html, "{{title}}", e(in.title));
  return replace_once(std::move(html), "{{body}}", body);
}

}  // namespace abvm
