#include "report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/resources.hpp"
#include "core/vocabulary.hpp"
#include "report/format.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace {

std::string e(std::string_view s) { return html_escape(s); }

std::string fixed(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-"; }

std::string pvalue(double p) { return std::isfinite(p) ? fmt::format("{:.3g}", p) : "-"; }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const char* kind_caption(const std::string& kind) {
  if (kind == "runs") return "every run per side over a box plot";
  if (kind == "order") return "value against run order";
  if (kind == "distribution") return "distributions with the detected modes";
  if (kind == "effect") return "effect with its interval against the margin";
  if (kind == "timeline") return "A's and B's runs of blocks on the host's clock";
  if (kind == "cost") return "each run's cost against its throughput, per side";
  return "plot";
}

std::string side_stat_rows(const ReportMetric& m, const std::string& a_label, const std::string& b_label) {
  const ReportSide& a = m.a;
  const ReportSide& b = m.b;
  std::string out;
  out += fmt::format("<tr><th></th><th>{}</th><th>{}</th></tr>\n", e(a_label), e(b_label));
  const auto row = [&](const char* name, const std::string& x, const std::string& y) {
    out += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td></tr>\n", name, x, y);
  };
  const auto value_row = [&](const char* name, double ReportSide::*field) {
    row(name, e(format_value(a.*field, m.unit)), e(format_value(b.*field, m.unit)));
  };
  const auto count = [](const ReportSide& s) {
    std::string t = fmt::format("{}", s.n);
    if (s.per_boot) t += fmt::format(" runs in {} boots", s.units);
    return t;
  };
  row("n", count(a), count(b));
  value_row("median", &ReportSide::median);
  value_row("mean", &ReportSide::mean);
  value_row("standard deviation", &ReportSide::sd);
  value_row("MAD", &ReportSide::mad);
  value_row("IQR", &ReportSide::iqr);
  value_row("min", &ReportSide::min);
  value_row("max", &ReportSide::max);
  row("CV", fixed(a.cv * 100, 1) + " %", fixed(b.cv * 100, 1) + " %");
  const auto outliers = [](const ReportSide& s) {
    if (s.outliers.empty()) return std::string("none");
    std::string t = fmt::format("{} (runs", s.outliers.size());
    for (const auto i : s.outliers) t += fmt::format(" #{}", i + 1);
    return t + ")";
  };
  row("outliers (flagged, kept)", outliers(a), outliers(b));
  return out;
}

std::string effect_row(const char* name, const std::optional<ReportEffect>& eff) {
  if (!eff) return "";
  std::string conf = fmt::format("{:.3g} %", eff->confidence * 100);
  const double achieved = eff->achieved_confidence;
  if (std::isfinite(achieved) && achieved + 1e-9 < eff->confidence) {
    conf += fmt::format(" (achieved {:.3g} %: too few units)", achieved * 100);
  }
  return fmt::format("<tr><th>{}</th><td>{}</td><td>[{}, {}]</td><td>{}</td><td>{}</td></tr>\n", name,
                     fixed(eff->estimate, 4), fixed(eff->low, 4), fixed(eff->high, 4), conf, e(eff->method));
}

std::string list_items(const std::vector<std::string>& items, const char* css) {
  if (items.empty()) return "";
  std::string out = fmt::format("<ul class=\"{}\">\n", css);
  for (const auto& w : items) out += "<li>" + e(w) + "</li>\n";
  return out + "</ul>\n";
}

std::string plots_of(const PlotSet& plots, std::size_t metric, const std::string& metric_name) {
  std::string out = "<div class=\"plots\">\n";
  std::vector<std::string> kinds(std::begin(kPlotKinds), std::end(kPlotKinds));
  kinds.emplace_back(kTimelineKind);
  kinds.emplace_back(kCostKind);
  for (const std::string& kind : kinds) {
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

// The modes of one metric with Fisher's test of their fractions; "" with a single mode.
std::string modes_table(const ReportMetric& m, const std::string& a_label, const std::string& b_label) {
  if (m.modes.size() <= 1) return "";
  std::string out = "<table class=\"modes\">\n<tr><th>mode</th><th>range</th><th>" + e(a_label) + "</th><th>" +
                    e(b_label) + "</th></tr>\n";
  for (std::size_t k = 0; k < m.modes.size(); ++k) {
    const ReportMode& md = m.modes[k];
    out += fmt::format("<tr><th>{}{}</th><td>{} to {}</td><td>{:.0f} % ({})</td><td>{:.0f} % ({})</td></tr>\n", k + 1,
                       md.dominant ? " (dominant)" : "", e(format_value(md.low, m.unit)),
                       e(format_value(md.high, m.unit)), md.a_fraction * 100, md.a_count, md.b_fraction * 100,
                       md.b_count);
  }
  out += "</table>\n";
  if (const auto& t = m.mode_test) {
    out += fmt::format("<p>Fisher's exact test of the mode fractions: p = {} two-sided; B more often in worse modes: "
                       "p = {} (judged at {}).</p>\n",
                       pvalue(t->p_two_sided), pvalue(t->p_b_more_in_worse), pvalue(t->alpha));
  }
  return out;
}

// Where the metric's noise comes from and what a decision would cost with either estimate.
std::string noise_paragraph(const ReportNoise& n, double margin) {
  const auto shown = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("?"); };
  std::string out = fmt::format("<p class=\"noise\">Noise (sd of ln): between boots {}, within a boot {}",
                                fixed(n.between_boot_sd, 3), fixed(n.within_boot_sd, 3));
  if (n.pairs >= 2) {
    out += fmt::format(", per-block B/A {} (pairing correlation {}, {} blocks)", fixed(n.pair_sd, 3),
                       fixed(n.pair_correlation, 2), n.pairs);
  }
  out += fmt::format(". A ±{:.3g} % interval needs about {} boots per side unpaired", margin * 50,
                     shown(n.blocks_unpaired));
  if (n.pairs >= 2) out += fmt::format(", {} blocks paired", shown(n.blocks_paired));
  return out + ".</p>\n";
}

// A pool's hosts: each host's paired effect over its own blocks, and whether they agree.
std::string hosts_table(const ReportHosts& h) {
  std::string out = "<table class=\"hosts\">\n<tr><th>host</th><th>blocks</th><th>median A</th><th>median B</th>"
                    "<th>paired B/A</th><th>interval</th></tr>\n";
  for (const auto& x : h.hosts) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", e(x.host), x.blocks, fixed(x.median_a, 4),
                       fixed(x.median_b, 4));
    out += x.paired_effect ? fmt::format("<td>{}</td><td>[{}, {}]</td></tr>\n", fixed(x.paired_effect->estimate, 4),
                                         fixed(x.paired_effect->low, 4), fixed(x.paired_effect->high, 4))
                           : std::string("<td>-</td><td>-</td></tr>\n");
  }
  out += "</table>\n";
  return out + fmt::format("<p class=\"hosts\">The hosts {} (Kruskal-Wallis on the per-block log ratios, p = {}).</p>\n",
                           h.disagree ? "disagree beyond chance" : "agree", pvalue(h.p));
}

std::string metric_section(const HtmlInputs& in, std::size_t i, const ReportMetric& m) {
  const std::string& a_label = in.report.source.a_label;
  const std::string& b_label = in.report.source.b_label;
  const std::string verdict = to_string(m.verdict);
  std::string out;
  out += fmt::format("<section class=\"metric\" id=\"metric-{}\">\n", i);
  out += fmt::format("<h2>{} <span class=\"badge verdict-{}\">{}</span></h2>\n", e(m.name), e(verdict), e(verdict));
  out += fmt::format("<p class=\"unit\">unit {}, {} is better</p>\n", e(m.unit.empty() ? "none" : m.unit),
                     e(to_string(m.better)));
  if (!m.judged) out += fmt::format("<p class=\"unit\">{}</p>\n", e(kNotJudgedWords));
  out += fmt::format("<p class=\"sentence\">{}</p>\n", e(headline(m, in.report)));
  const bool paired = m.primary_estimate == Estimate::paired;
  out += list_items(sentences(m.findings, Severity::warning), "warnings");
  out += list_items(sentences(m.findings, Severity::note), "notes");
  out += "<div class=\"tables\">\n<table class=\"stats\">\n" + side_stat_rows(m, a_label, b_label) + "</table>\n";
  out += "<table class=\"effects\">\n<tr><th>ratio B/A</th><th>estimate</th><th>interval</th><th>level</th>"
         "<th>method</th></tr>\n";
  if (paired) {
    out += effect_row("paired effect (decides: the design pairs A and B)", m.effect);
    out += effect_row("unpaired effect", m.unpaired_effect);
  } else {
    out += effect_row("effect", m.effect);
    out += effect_row("paired effect", m.paired_effect);
  }
  // Beside the decided estimate, the one that leaves nothing out (issue 26), wherever pairs could be.
  if (m.overlap) out += effect_row("every pair, none left out", m.all_pairs_effect);
  if (m.mode_test) out += effect_row("inside the dominant mode", m.mode_test->dominant_mode_effect);
  out += effect_row("bootstrap ratio of medians", m.bootstrap_median_ratio);
  out += "</table>\n";
  const ReportMannWhitney& mw = m.mann_whitney;
  out += fmt::format("<p>Mann-Whitney U = {}, p = {} (Holm-adjusted {}){}.</p>\n", fixed(mw.u, 1), pvalue(mw.p),
                     pvalue(mw.p_holm), mw.exact ? ", exact" : "");
  out += modes_table(m, a_label, b_label);
  if (m.noise) out += noise_paragraph(*m.noise, in.report.margin);
  if (const auto& o = m.overlap) {
    std::string words = overlap_words(*o);
    words[0] = 'O';  // a sentence here
    out += "<p class=\"overlap\">" + e(words) + ".</p>\n";
  }
  if (m.hosts) out += hosts_table(*m.hosts);
  out += "</div>\n";
  out += plots_of(in.plots, i, m.name);
  out += "</section>\n";
  return out;
}

// Accelerators in use: environment.json's, else every one named in the journal.
std::set<Accelerator> accelerators(const HtmlInputs& in) {
  std::set<Accelerator> acc;
  if (in.context.environment) acc.insert(in.context.environment->accelerator);
  for (const SideContext* c : {&in.report.context_a, &in.report.context_b}) acc.insert(c->accelerators.begin(), c->accelerators.end());
  return acc;
}

// "virtio_blk.queue_depth=1 (12 boots); virtio_pci.force_legacy=N (12 boots)": what the side's
// guests reported running with, so a driver setting of the experiment can be seen to have held.
std::string describe_module_params(const SideContext& c) {
  std::vector<std::string> parts;
  for (const auto& [param, values] : c.module_params) {
    for (const auto& [value, boots] : values) {
      parts.push_back(fmt::format("{}={} ({} boot{})", param, value, boots, boots == 1 ? "" : "s"));
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// "negotiated in 12/12 boots": how many of the side's reporting boots showed `value` of `fact`.
std::string fact_count(const SideContext& c, const std::string& fact, const std::string& value) {
  const auto it = c.facts.find(fact);
  if (it == c.facts.end()) return "";
  int total = 0, with = 0;
  for (const auto& [v, boots] : it->second) {
    total += boots;
    if (v == value) with = boots;
  }
  return fmt::format("{}/{} boots", with, total);
}

// What the sides' guests reported of themselves, side by side: the kernel each booted, and the
// facts the sides are checked against (a mismatch is a failed trial, listed below).
std::string facts_rows(const HtmlInputs& in) {
  const SideContext& a = in.report.context_a;
  const SideContext& b = in.report.context_b;
  if (a.facts.empty() && b.facts.empty()) return "";
  std::string out;
  const auto values = [](const SideContext& c, const std::string& fact) {
    std::string s;
    if (const auto it = c.facts.find(fact); it != c.facts.end()) {
      for (const auto& [v, boots] : it->second) s += fmt::format("{}{} ({} boot{})", s.empty() ? "" : "; ", v, boots, boots == 1 ? "" : "s");
    }
    return s;
  };
  for (const char* fact : {"kernel_release", "kernel_version"}) {
    out += fmt::format("<tr><th>{}</th><td>A: {}<br>B: {}</td></tr>\n", e(fact), e(values(a, fact)), e(values(b, fact)));
  }
  out += fmt::format("<tr><th>VIRTIO_F_ACCESS_PLATFORM</th><td>side A negotiated it in {}; side B in {}</td></tr>\n",
                     e(fact_count(a, "virtio_f_access_platform", "negotiated")),
                     e(fact_count(b, "virtio_f_access_platform", "negotiated")));
  out += fmt::format("<tr><th>\"DMA API in use\" (the seed's patch)</th><td>side A reported it in {}; side B in {}</td></tr>\n",
                     e(fact_count(a, "dma_api_in_use", "reported")), e(fact_count(b, "dma_api_in_use", "reported")));
  return out;
}

std::string host_rows(const HostEnvironment& env) {
  std::string out;
  const auto row = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) out += "<tr><th>" + e(k) + "</th><td>" + e(v) + "</td></tr>\n";
  };
  row("host", env.hostname);
  if (const auto& k = env.host_kernel) row("host kernel", k->sysname + " " + k->release + " " + k->machine);
  row("CPU", env.cpu_model + fmt::format(" ({} CPUs online)", env.cpus_online));
  row("cpufreq governor", env.cpufreq_governor.value_or("none (no cpufreq)"));
  // As the JSON writes the numbers ("[0.41,0.38,0.3]").
  if (env.load_average) row("load average", nlohmann::json(*env.load_average).dump());
  row("QEMU", env.qemu_version);
  row("libvirt", env.libvirt_version + (env.libvirt_uri.empty() ? "" : ", " + env.libvirt_uri));
  row("accelerator", std::string(to_string(env.accelerator)) +
                         (env.accelerator_reason.empty() ? "" : " (" + env.accelerator_reason + ")"));
  return out;
}

std::string host_section(const HtmlInputs& in) {
  std::string out = "<section class=\"host\"><h2>Host and accelerator</h2>\n<table>\n";
  if (in.context.environment) out += host_rows(*in.context.environment);
  for (Side side : kSides) {
    const SideContext& c = side == Side::a ? in.report.context_a : in.report.context_b;
    std::vector<std::string> accs;
    for (Accelerator a : c.accelerators) accs.emplace_back(to_string(a));
    const std::string hosts = joined(c.hosts), acc = joined(accs);
    const std::string where = hosts + (acc.empty() ? "" : " (" + acc + ")");
    if (!where.empty()) out += fmt::format("<tr><th>side {} measured on</th><td>{}</td></tr>\n", to_string(side), e(where));
    if (!c.module_params.empty()) {
      out += fmt::format("<tr><th>side {} module parameters</th><td>{}</td></tr>\n", to_string(side),
                         e(describe_module_params(c)));
    }
  }
  out += facts_rows(in);
  for (const auto& line : run_length_lines(in.report.context_a, in.report.context_b)) {
    const std::size_t colon = line.find(": ");
    out += fmt::format("<tr><th>run length of {}</th><td>{}</td></tr>\n", e(line.substr(0, colon)), e(line.substr(colon + 2)));
  }
  out += "</table>\n";
  if (accelerators(in).contains(Accelerator::tcg)) {
    out += "<p class=\"warning tcg\">Measured under TCG (QEMU's emulator, no KVM): the numbers describe the emulator "
           "as much as the kernel, and effects of the I/O path may be hidden or magnified. Confirm on a host with "
           "/dev/kvm before acting on the verdict.</p>\n";
  }
  if (accelerators(in).empty() && !in.context.environment) {
    out += "<p>Not recorded: the measurements came from files, not from an abvm run.</p>\n";
  }
  return out + "</section>\n";
}

// The two sides' settings at a glance: what differs first, then what is set, then one line naming
// the keys that no side sets (the demo's 20 iotune keys would otherwise come before what matters).
std::string sides_section(const HtmlInputs& in) {
  if (in.context.sides.empty()) return "";
  std::set<std::string> keys;
  std::vector<std::string> order;
  for (const auto& s : in.context.sides) {
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
  const auto unset = [](const std::string& v) { return v == "unset" || v == "(default)"; };
  std::vector<std::string> differs, set, unset_everywhere;
  for (const auto& k : order) {
    bool same = true, all_unset = true;
    for (const auto& s : in.context.sides) {
      same = same && value_of(s, k) == value_of(in.context.sides.front(), k);
      all_unset = all_unset && unset(value_of(s, k));
    }
    (!same ? differs : all_unset ? unset_everywhere : set).push_back(k);
  }
  std::string out = "<section class=\"sides\"><h2>The two sides</h2>\n<table>\n<tr><th></th>";
  for (const auto& s : in.context.sides) out += "<th>" + e(labelled(s.letter, s.label)) + "</th>";
  out += "</tr>\n";
  const auto rows = [&](const std::vector<std::string>& ks, const char* attribute) {
    for (const auto& k : ks) {
      out += fmt::format("<tr{}><th>{}</th>", attribute, e(k));
      for (const auto& s : in.context.sides) out += "<td>" + e(value_of(s, k)) + "</td>";
      out += "</tr>\n";
    }
  };
  rows(differs, " class=\"differs\"");
  rows(set, "");
  const auto joined = [](const std::vector<std::string>& ks) {
    std::string list;
    for (const auto& k : ks) list += (list.empty() ? "" : ", ") + k;
    return list;
  };
  if (!unset_everywhere.empty()) {
    out += fmt::format("<tr class=\"unset\"><th>unset on every side ({})</th><td colspan=\"{}\">{}</td></tr>\n",
                       unset_everywhere.size(), in.context.sides.size(), e(joined(unset_everywhere)));
  }
  out += "</table>\n";
  if (differs.empty()) {
    out += "<p class=\"differs-summary\">The sides do not differ in any recorded setting (an A/A comparison).</p>\n";
  } else {
    out += "<p class=\"differs-summary\">What differs: " + e(joined(differs)) + ".</p>\n";
  }
  return out + "</section>\n";
}

std::string failures_section(const HtmlInputs& in) {
  std::string out = "<section class=\"failures\" id=\"failures\"><h2>Failed trials</h2>\n";
  if (in.failures.empty()) return out + "<p>None: every run produced its measurements.</p>\n</section>\n";
  out += fmt::format("<p>{} failed run(s) (A: {}, B: {}). They are counted, never averaged in.</p>\n",
                     in.failures.size(), in.report.failed_a, in.report.failed_b);
  out += "<table>\n<tr><th>side</th><th>trial</th><th>outcome</th><th>what happened</th><th>console</th></tr>\n";
  for (const auto& f : in.failures) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", e(f.side), e(f.trial),
                       e(f.outcome), e(f.what),
                       f.console_log.empty() ? std::string("-")
                                             : fmt::format("<a href=\"{}\">console.log</a>", e(f.console_log)));
  }
  return out + "</table>\n</section>\n";
}

std::string footer(const ReportModel& report) {
  const ReportSource& source = report.source;
  std::string out = "<footer>\n<p>abvm " + e(report.tool_version) + ", report schema " +
                    e(fmt::format("{}", report.schema_version)) + ". Source: ";
  if (source.kind == "results") {
    out += "results directory " + e(source.results_dir);
  } else {
    out += e("A: " + joined(source.a) + "; B: " + joined(source.b));
  }
  return out + ".</p>\n</footer>\n";
}

std::string replace_once(std::string text, std::string_view key, const std::string& value) {
  const auto at = text.find(key);
  if (at == std::string::npos) throw Error(fmt::format("report/template.html: no {} placeholder; restore it", key));
  return text.replace(at, key.size(), value);
}

constexpr std::string_view kSectionEnd = "</section>\n";
constexpr std::string_view kBisectionOpen = "<section class=\"bisection\" id=\"bisection\">\n";

std::string commit_words(const ReportCommit& c) {
  return fmt::format("<code title=\"{}\">{}</code> {}", e(c.commit), e(short_sha(c.commit)), e(c.subject));
}

// What the bisection says in one sentence: the commit, the range left, or that it named none.
std::string bisection_sentence(const ReportBisection& b) {
  const bool exact = std::all_of(b.culprits.begin(), b.culprits.end(), [](const auto& c) { return c.size() == 1; });
  if (b.culprits.empty()) {
    return fmt::format("The bisection of this regression named no commit ({}: {}).", e(b.outcome), e(b.end));
  }
  if (b.outcome == "culprits" && exact) {
    return fmt::format("The bisection of this regression names the commit{} that made it:",
                       b.culprits.size() > 1 ? "s" : "");
  }
  if (b.outcome == "culprits") {
    return fmt::format("The bisection of this regression narrowed it to a range ({}):", e(b.end));
  }
  return fmt::format("The bisection of this regression ended before naming one commit ({}: {}); the culprit is in "
                     "the range it left:", e(b.outcome), e(b.end));
}

std::string bisection_section(const ReportBisection& b) {
  std::string out = std::string(kBisectionOpen) + "<h2>Bisection <span class=\"badge\">" + e(b.outcome) +
                    "</span></h2>\n<p>" + bisection_sentence(b) + "</p>\n";
  if (!b.culprits.empty()) out += "<ul class=\"culprits\">\n";
  for (const auto& c : b.culprits) {
    if (c.size() == 1) {
      out += "<li class=\"culprit\">" + commit_words(c.front()) + "</li>\n";
      continue;
    }
    out += fmt::format("<li class=\"range\">one of these {} commits:<ul>\n", c.size());
    for (const auto& commit : c) out += "<li>" + commit_words(commit) + "</li>\n";
    out += "</ul></li>\n";
  }
  if (!b.culprits.empty()) out += "</ul>\n";
  out += fmt::format("<p>{} steps, {} boots per side: <a href=\"{}\">the bisection's page</a> shows each step with "
                     "its own report.</p>\n",
                     b.steps, b.boots_per_side, e(b.href));
  return out + std::string(kSectionEnd);
}

}  // namespace

std::string with_bisection_section(std::string report_html, const ReportBisection& bisection) {
  const std::string section = bisection_section(bisection);
  if (const auto at = report_html.find(kBisectionOpen); at != std::string::npos) {
    const auto end = report_html.find(kSectionEnd, at);
    const auto length = end == std::string::npos ? std::string::npos : end + kSectionEnd.size() - at;
    return report_html.replace(at, length, section);
  }
  const auto verdict = report_html.find("id=\"verdict\"");
  const auto after = verdict == std::string::npos ? std::string::npos : report_html.find(kSectionEnd, verdict);
  if (after == std::string::npos) throw Error("the HTML report has no verdict section to put the bisection after");
  return report_html.insert(after + kSectionEnd.size(), section);
}

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

std::vector<FailedTrial> failures_from_report(const ReportModel& report) {
  std::vector<FailedTrial> out;
  for (const FailedRun& f : report.failures) {
    FailedTrial t{.side = to_string(f.side), .outcome = f.outcome, .what = f.what};
    if (f.source.rfind("trial ", 0) == 0) {
      const auto end = f.source.find(' ', 6);
      t.trial = f.source.substr(6, end == std::string::npos ? std::string::npos : end - 6);
    } else {
      t.trial = f.source;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string html_report(const HtmlInputs& in) {
  const ReportModel& report = in.report;
  const std::string verdict = to_string(report.verdict);

  std::string body;
  body += "<header>\n<h1>" + e(in.context.title) + "</h1>\n";
  if (!in.context.description.empty()) body += "<p class=\"description\">" + e(in.context.description) + "</p>\n";
  body += "</header>\n";

  // The verdict first, in words: the metrics that decided it, then every other metric.
  body += fmt::format("<section class=\"verdict verdict-{0}\" id=\"verdict\">\n<p class=\"overall\">Verdict: "
                      "<strong>{1}</strong></p>\n<ul class=\"headlines\">\n",
                      e(verdict), e(verdict_headline(report)));
  // A workload with no data decides first: it alone makes the verdict inconclusive.
  for (const MissingData& d : report.missing) {
    body += "<li class=\"decides missing\">" + e(missing_words(d));
    if (!d.first_failure.empty()) body += "<br><span class=\"first-failure\">First failure: " + e(d.first_failure) + "</span>";
    body += "</li>\n";
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < report.metrics.size(); ++i) {
      const bool decides = report.metrics[i].verdict == report.verdict;
      if (decides != (pass == 0)) continue;
      body += fmt::format("<li class=\"{}\"><a href=\"#metric-{}\">{}</a></li>\n", decides ? "decides" : "other", i,
                          e(headline(report.metrics[i], report)));
    }
  }
  body += "</ul>\n";
  body += fmt::format("<p class=\"options\">Margin of practical interest ±{:.3g} %, family-wise confidence {:.3g} % "
                      "(intervals at {:.4g} % per metric), bootstrap seed {}.</p>\n",
                      report.margin * 100, report.confidence * 100, report.interval_confidence * 100, report.seed);
  if (!report.source.design.empty()) {
    body += fmt::format("<p class=\"design\">Design {}{}.</p>\n", e(report.source.design),
                        report.source.decided_by.empty() ? "" : "; sequential stopping: " + e(report.source.decided_by));
  }
  body += list_items(sentences(report.findings, Severity::warning), "warnings");
  body += "</section>\n";

  body += sides_section(in);
  body += host_section(in);
  for (const auto& m : in.plots.missing) {
    if (!m.metric) body += "<p class=\"missing-plots\" id=\"no-plots\">No plots: " + e(m.reason) + "</p>\n";
  }
  for (std::size_t i = 0; i < report.metrics.size(); ++i) body += metric_section(in, i, report.metrics[i]);
  body += failures_section(in);
  body += footer(report);

  return fill_html_template(in.template_html, in.context.title, body);
}

std::string fill_html_template(const std::string& template_html, std::string_view title, const std::string& body) {
  std::string html = replace_once(template_html, "{{title}}", e(title));
  return replace_once(std::move(html), "{{body}}", body);
}

}  // namespace abvm
