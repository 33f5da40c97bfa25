#include <fmt/format.h>

#include <algorithm>

#include "config/load_sections.hpp"

namespace abvm::loader {

void read_analysis(KeyReader& r, Experiment& e) {
  AnalysisSettings& a = e.analysis;
  a.margin = r.get_number("analysis.margin").value_or(a.margin);
  r.note("analysis.margin", fmt::format("{}", a.margin));
  a.confidence = r.get_number("analysis.confidence").value_or(a.confidence);
  r.note("analysis.confidence", fmt::format("{}", a.confidence));
  if (auto seed = r.get_integer("analysis.seed")) a.seed = static_cast<std::uint64_t>(*seed);
  r.note("analysis.seed", std::to_string(a.seed));
  std::vector<std::string> shown;
  if (const toml::node* list = r.at("analysis.metrics")) {
    for (std::size_t i = 0; i < list->as_array()->size(); ++i) {
      const std::string p = fmt::format("analysis.metrics[{}]", i);
      MetricSelection m;
      const auto name = r.get_string(p + ".name");
      if (!name) {
        r.fail(list->as_array()->get(i)->source().begin.line,
               fmt::format("{} has no name: add name = \"<workload>.<metric>\"", p));
      }
      m.name = *name;
      const auto dot = m.name.find('.');
      const std::string workload = m.name.substr(0, dot);
      const bool known = std::any_of(e.workloads.begin(), e.workloads.end(),
                                     [&](const Workload& w) { return w.name == workload; });
      if (dot == std::string::npos || dot + 1 == m.name.size() || !known) {
        std::vector<std::string> names;
        for (const Workload& w : e.workloads) names.push_back(w.name);
        r.fail(r.line_of(p + ".name"),
               fmt::format("key '{}.name' = {} does not name a metric of a workload: use "
                             "\"<workload>.<metric>\" with one of the workloads {}",
                             p, quote(m.name), fmt::join(names, ", ")));
      }
      for (const MetricSelection& other : a.metrics) {
        if (other.name == m.name) {
          r.fail(r.line_of(p + ".name"), fmt::format("metric {} is listed twice in analysis.metrics", quote(m.name)));
        }
      }
      if (auto better = r.get_string(p + ".better")) {
        m.better = parse_better(*better).value_or(Better::lower);
      }
      shown.push_back(fmt::format("{{ name = {}{} }}", quote(m.name),
                                  m.better ? fmt::format(", better = \"{}\"",
                                                         to_string(*m.better))
                                           : ""));
      a.metrics.push_back(std::move(m));
    }
  }
  r.note("analysis.metrics", fmt::format("[{}]", fmt::join(shown, ", ")));
}

}  // namespace abvm::loader
