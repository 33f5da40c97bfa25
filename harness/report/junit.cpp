#include "report/junit.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/format.hpp"
#include "report/html.hpp"

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

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') continue;
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string junit_report(const nlohmann::json& report, const JunitOptions& options) {
  const json metrics = report.value("metrics", json::array());
  const json source = report.value("source", json::object());
  const std::string a_label = str(source, "a_label").empty() ? "A" : str(source, "a_label");
  const std::string b_label = str(source, "b_label").empty() ? "B" : str(source, "b_label");
  std::size_t failures = 0, skipped = 0;
  std::string cases;
  for (const auto& m : metrics) {
    const std::string verdict = str(m, "verdict");
    const std::string sentence = metric_sentence(m, b_label);
    cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n", xml_escape(options.suite),
                         xml_escape(str(m, "name")));
    if (verdict == "regression") {
      ++failures;
      cases += fmt::format("      <failure type=\"regression\" message=\"{}\">{}</failure>\n", xml_escape(sentence),
                           xml_escape(details(m, a_label, b_label)));
    } else if (verdict == "inconclusive") {
      ++skipped;
      std::string reason = sentence;
      if (m.contains("runs_needed") && m["runs_needed"].is_number()) {
        reason += fmt::format("; about {} {} per side would likely settle it", m["runs_needed"].get<long long>(),
                              str(m["a"], "unit_kind") == "boot" ? "boots" : "runs");
      }
      cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(reason));
    }
    cases += fmt::format("      <system-out>{}{}</system-out>\n", xml_escape(sentence + "\n"),
                         xml_escape(details(m, a_label, b_label)));
    cases += "    </testcase>\n";
  }
  const json opts = report.value("options", json::object());
  std::string props;
  const auto prop = [&](const std::string& k, const std::string& v) {
    props += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
  };
  prop("verdict", str(report, "verdict"));
  prop("margin", fmt::format("{:g}", num(opts, "margin")));
  prop("confidence", fmt::format("{:g}", num(opts, "confidence")));
  prop("side_a", a_label);
  prop("side_b", b_label);
  std::string err;
  for (const auto& w : report.value("warnings", json::array())) err += "warning: " + w.get<std::string>() + "\n";
  for (const auto& f : report.value("failures", json::array())) {
    err += fmt::format("failed run ({}, {}): {}\n", str(f, "side"), str(f, "outcome"), str(f, "what"));
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"abvm\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\" time=\"0\">\n",
                     metrics.size(), failures, skipped);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"0\">\n",
                     xml_escape(options.suite), metrics.size(), failures, skipped);
  out += "    <properties>\n" + props + "    </properties>\n";
  out += cases;
  if (!err.empty()) out += "    <system-err>" + xml_escape(err) + "</system-err>\n";
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace abvm
