#include "report/junit.hpp"

#include <fmt/format.h>

#include <pugixml.hpp>
#include <sstream>

#include "core/utf8.hpp"
#include "report/format.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace {

// The evidence behind one metric's verdict, as plain text for the CI's test details.
std::string details(const ReportMetric& m, const std::string& a_label, const std::string& b_label) {
  std::string t;
  for (const ReportSide* s : {&m.a, &m.b}) {
    t += fmt::format("{}: n={} median={} min={} max={}\n", s == &m.a ? a_label : b_label, s->n,
                     format_value(s->median, m.unit), format_value(s->min, m.unit), format_value(s->max, m.unit));
  }
  const ReportEffect& eff = m.effect;
  t += fmt::format("ratio B/A {:.4f} [{:.4f}, {:.4f}] at {:.4g} % ({})\n", eff.estimate, eff.low, eff.high,
                   eff.confidence * 100, eff.method);
  for (const auto& w : sentences(m.findings, Severity::warning)) t += "warning: " + w + "\n";
  for (const auto& n : sentences(m.findings, Severity::note)) t += "note: " + n + "\n";
  return t;
}

}  // namespace

std::string xml_text(std::string_view text) {
  // A byte that is not UTF-8 (console output can hold any) becomes U+FFFD: pugixml would write
  // it raw and no XML reader would take the document. Control characters XML 1.0 forbids go.
  std::string out = to_well_formed_utf8(text);
  std::erase_if(out, [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r'; });
  return out;
}

namespace {

// Every string reaches the document through these, so none carries a character XML 1.0 forbids;
// pugixml escapes markup.
void set_attr(pugi::xml_node node, const char* name, const std::string& value) {
  node.append_attribute(name).set_value(xml_text(value).c_str());
}

void set_text(pugi::xml_node node, const std::string& text) { node.text().set(xml_text(text).c_str()); }

void add_counts(pugi::xml_node node, std::size_t tests, std::size_t failures, std::size_t skipped, bool with_skipped) {
  set_attr(node, "tests", std::to_string(tests));
  set_attr(node, "failures", std::to_string(failures));
  set_attr(node, "errors", "0");
  if (with_skipped) set_attr(node, "skipped", std::to_string(skipped));
  set_attr(node, "time", "0");
}

}  // namespace

std::string junit_report(const ReportModel& report, const JunitOptions& options) {
  const std::string a_label = report.source.a_label.empty() ? "A" : report.source.a_label;
  const std::string b_label = report.source.b_label.empty() ? "B" : report.source.b_label;
  // A workload with no valid run on either side is a failing test case of its own: a CI job must not
  // pass on a question it never measured.
  std::size_t failures = report.missing.size(), skipped = 0;
  for (const auto& m : report.metrics) {
    failures += m.judged && m.verdict == Verdict::regression;
    skipped += m.judged && m.verdict == Verdict::inconclusive;
  }
  const std::size_t tests = report.metrics.size() + report.missing.size();

  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version").set_value("1.0");
  decl.append_attribute("encoding").set_value("UTF-8");
  // The Ant/Jenkins JUnit format (harness/tests/data/report/junit.xsd) has no `skipped` on
  // <testsuites>: the per-suite count carries it.
  pugi::xml_node suites = doc.append_child("testsuites");
  set_attr(suites, "name", "abvm");
  add_counts(suites, tests, failures, skipped, false);
  pugi::xml_node suite = suites.append_child("testsuite");
  set_attr(suite, "name", options.suite);
  add_counts(suite, tests, failures, skipped, true);

  pugi::xml_node props = suite.append_child("properties");
  const auto prop = [&](const std::string& k, const std::string& v) {
    pugi::xml_node p = props.append_child("property");
    set_attr(p, "name", k);
    set_attr(p, "value", v);
  };
  prop("verdict", to_string(report.verdict));
  prop("margin", fmt::format("{:g}", report.margin));
  prop("confidence", fmt::format("{:g}", report.confidence));
  prop("side_a", a_label);
  prop("side_b", b_label);

  for (const MissingData& d : report.missing) {
    pugi::xml_node tc = suite.append_child("testcase");
    set_attr(tc, "classname", options.suite);
    set_attr(tc, "name", missing_title(d));
    set_attr(tc, "time", "0");
    pugi::xml_node f = tc.append_child("failure");
    set_attr(f, "type", "no-data");
    set_attr(f, "message", missing_words(d));
    set_text(f, d.first_failure.empty() ? "" : "first failure: " + d.first_failure + "\n");
  }
  for (const auto& m : report.metrics) {
    const std::string sentence = headline(m, report);
    pugi::xml_node tc = suite.append_child("testcase");
    set_attr(tc, "classname", options.suite);
    set_attr(tc, "name", m.name);
    set_attr(tc, "time", "0");
    if (!m.judged) {
      // Reported beside the judged metrics: a passing case that says what it measured.
      set_text(tc.append_child("system-out"), sentence + "\n" + kNotJudgedWords + "\n" + details(m, a_label, b_label));
      continue;
    }
    if (m.verdict == Verdict::regression) {
      pugi::xml_node f = tc.append_child("failure");
      set_attr(f, "type", "regression");
      set_attr(f, "message", sentence);
      set_text(f, details(m, a_label, b_label));
    } else if (m.verdict == Verdict::inconclusive) {
      set_attr(tc.append_child("skipped"), "message", sentence);
    }
    set_text(tc.append_child("system-out"), sentence + "\n" + details(m, a_label, b_label));
  }

  std::string err;
  for (const auto& w : sentences(report.findings, Severity::warning)) err += "warning: " + w + "\n";
  for (const auto& f : report.failures) err += fmt::format("failed run ({}, {}): {}\n", to_string(f.side), f.outcome, f.what);
  if (!err.empty()) set_text(suite.append_child("system-err"), err);

  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
  return out.str();
}

}  // namespace abvm
