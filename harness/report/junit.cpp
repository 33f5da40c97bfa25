#include "report/junit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <pugixml.hpp>
#include <sstream>

#include "core/utf8.hpp"
#include "report/format.hpp"
#include "report/html.hpp"
#include "report/report_data.hpp"

namespace abvm {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

double num(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : std::nan("");
}

// The evidence behind one metric's verdict, as plain text for the CI's test details.
std::string details(const json& m, const std::string& a_label, const std::string& b_label) {
  const std::string unit = str(m, "unit");
  std::string t;
  for (const char* side : {"a", "b"}) {
    const json& s = m[side];
    t += fmt::format("{}: n={} median={} min={} max={}\n", side[0] == 'a' ? a_label : b_label, s.value("n", 0),
                     format_value(num(s, "median"), unit), format_value(num(s, "min"), unit),
                     format_value(num(s, "max"), unit));
  }
  const json eff = m.value("effect", json::object());
  t += fmt::format("ratio B/A {:.4f} [{:.4f}, {:.4f}] at {:.4g} % ({})\n", num(eff, "estimate"), num(eff, "ci_low"),
                   num(eff, "ci_high"), num(eff, "confidence") * 100, str(eff, "method"));
  for (const auto& w : m.value("warnings", json::array())) t += "warning: " + w.get<std::string>() + "\n";
  for (const auto& n : m.value("notes", json::array())) t += "note: " + n.get<std::string>() + "\n";
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

std::string inconclusive_reason(const json& m, const std::string& sentence) {
  std::string reason = sentence;
  if (m.contains("runs_needed") && m["runs_needed"].is_number()) {
    reason += fmt::format("; about {} {} per side would likely settle it", m["runs_needed"].get<long long>(),
                          str(m["a"], "unit_kind") == "boot" ? "boots" : "runs");
  }
  return reason;
}

}  // namespace

std::string junit_report(const nlohmann::json& report, const JunitOptions& options) {
  const json metrics = report.value("metrics", json::array());
  const json source = report.value("source", json::object());
  const std::string a_label = str(source, "a_label").empty() ? "A" : str(source, "a_label");
  const std::string b_label = str(source, "b_label").empty() ? "B" : str(source, "b_label");
  // A workload with no valid run on either side is a failing test case of its own: a CI job must not
  // pass on a question it never measured (absent in reports of older abvm).
  const json missing = report.value("missing", json::array());
  std::size_t failures = missing.size(), skipped = 0;
  for (const auto& m : metrics) {
    failures += str(m, "verdict") == "regression";
    skipped += str(m, "verdict") == "inconclusive";
  }
  const std::size_t tests = metrics.size() + missing.size();

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

  const json opts = report.value("options", json::object());
  pugi::xml_node props = suite.append_child("properties");
  const auto prop = [&](const std::string& k, const std::string& v) {
    pugi::xml_node p = props.append_child("property");
    set_attr(p, "name", k);
    set_attr(p, "value", v);
  };
  prop("verdict", str(report, "verdict"));
  prop("margin", fmt::format("{:g}", num(opts, "margin")));
  prop("confidence", fmt::format("{:g}", num(opts, "confidence")));
  prop("side_a", a_label);
  prop("side_b", b_label);

  const JsonOrigin origin{.file = "the JSON report", .advice = "regenerate it with abvm analyze"};
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const MissingData d = read_report_missing(missing[i], origin, fmt::format("missing[{}]", i));
    pugi::xml_node tc = suite.append_child("testcase");
    set_attr(tc, "classname", options.suite);
    set_attr(tc, "name", missing_title(d));
    set_attr(tc, "time", "0");
    pugi::xml_node f = tc.append_child("failure");
    set_attr(f, "type", "no-data");
    set_attr(f, "message", missing_words(d));
    set_text(f, d.first_failure.empty() ? "" : "first failure: " + d.first_failure + "\n");
  }
  for (const auto& m : metrics) {
    const std::string verdict = str(m, "verdict");
    const std::string sentence = metric_sentence(m, b_label, num(opts, "margin"));
    pugi::xml_node tc = suite.append_child("testcase");
    set_attr(tc, "classname", options.suite);
    set_attr(tc, "name", str(m, "name"));
    set_attr(tc, "time", "0");
    if (verdict == "regression") {
      pugi::xml_node f = tc.append_child("failure");
      set_attr(f, "type", "regression");
      set_attr(f, "message", sentence);
      set_text(f, details(m, a_label, b_label));
    } else if (verdict == "inconclusive") {
      set_attr(tc.append_child("skipped"), "message", inconclusive_reason(m, sentence));
    }
    set_text(tc.append_child("system-out"), sentence + "\n" + details(m, a_label, b_label));
  }

  std::string err;
  for (const auto& w : report.value("warnings", json::array())) err += "warning: " + w.get<std::string>() + "\n";
  for (const auto& f : report.value("failures", json::array())) {
    err += fmt::format("failed run ({}, {}): {}\n", str(f, "side"), str(f, "outcome"), str(f, "what"));
  }
  if (!err.empty()) set_text(suite.append_child("system-err"), err);

  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
  return out.str();
}

}  // namespace abvm
