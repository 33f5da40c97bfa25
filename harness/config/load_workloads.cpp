#include <fmt/format.h>

#include <map>

#include "config/load_sections.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace {

// "type = \"dd\" or type = \"fio\"": every kind, as the file would set it.
std::string type_choices() {
  std::vector<std::string> choices;
  for (const std::string& kind : workload_kind_names()) choices.push_back("type = " + quote(kind));
  return fmt::format("{}", fmt::join(choices, " or "));
}

// The kind `type` names, with its own keys read by its reader (load_<kind>.cpp).
WorkloadSpec read_spec(KeyReader& r, const std::string& p, const std::string& type) {
  WorkloadSpec spec = default_spec(type).value();  // the key table's choices for type are the kinds
  visit_kind(overloaded{[&](DdWorkload& dd) { read_kind(r, p, dd); },
                        [&](FioWorkload& fio) { read_kind(r, p, fio); }},
             spec);
  return spec;
}

// The workload at `p`; `first_line` holds the names read before it, at their lines.
Workload read_workload(KeyReader& r, const std::string& p, const toml::table& table,
                     std::map<std::string, std::size_t>& first_line) {
  const std::size_t table_line = table.source().begin.line;
  Workload w;
  const auto name = r.get_string(p + ".name");
  if (!name) r.fail(table_line, fmt::format("{} has no name: add name = \"...\" (unique, [A-Za-z0-9_-]+)", p));
  if (!valid_name(*name, false)) {
    r.fail(r.line_of(p + ".name"), fmt::format("key '{}.name' = {} may only contain letters, digits, '_' and "
                                               "'-' (metrics are named <workload>.<metric>)", p, quote(*name)));
  }
  if (const auto [it, inserted] = first_line.emplace(*name, r.line_of(p + ".name")); !inserted) {
    r.fail(r.line_of(p + ".name"), fmt::format("workload name {} is used twice (first at {}:{}): give each "
                                               "workload its own name", quote(*name), r.file(), it->second));
  }
  w.name = *name;
  r.note(p + ".name", quote(w.name));
  const auto type = r.get_string(p + ".type");
  if (!type) r.fail(table_line, fmt::format("workload {} has no type: add {}", quote(w.name), type_choices()));
  r.note(p + ".type", quote(*type));
  for (const auto& [key, node] : table) {
    const KeySpec& spec = r.spec_of(p + "." + std::string(key.str()));
    if (!spec.only_for.empty() && spec.only_for != *type) {
      r.fail(node.source().begin.line,
             fmt::format("key '{}.{}' is for {} workloads, but workload {} is {}: remove it", p, key.str(),
                         spec.only_for, quote(w.name), *type));
    }
  }
  w.repetitions = r.get_int(p + ".repetitions").value_or(w.repetitions);
  r.note(p + ".repetitions", fmt::format("{}", w.repetitions));
  w.warmup = r.get_int(p + ".warmup").value_or(w.warmup);
  r.note(p + ".warmup", fmt::format("{}", w.warmup));
  w.pre_run.sync = r.get_bool(p + ".sync").value_or(w.pre_run.sync);
  r.note(p + ".sync", render(w.pre_run.sync));
  w.pre_run.drop_caches = r.get_bool(p + ".drop_caches").value_or(w.pre_run.drop_caches);
  r.note(p + ".drop_caches", render(w.pre_run.drop_caches));
  w.pre_run.scheduler_none = r.get_bool(p + ".scheduler_none").value_or(w.pre_run.scheduler_none);
  r.note(p + ".scheduler_none", render(w.pre_run.scheduler_none));
  w.min_run_time = r.get_duration(p + ".min_run_time");
  r.note(p + ".min_run_time", w.min_run_time ? quote(format_duration(*w.min_run_time)) : "schedule.min_run_time");
  w.spec = read_spec(r, p, *type);
  return w;
}

}  // namespace

void read_workloads(KeyReader& r, Experiment& e) {
  const toml::node* list = r.at("workload");
  if (list == nullptr || list->as_array()->empty()) {
    r.fail(0, "no [[workload]]: add at least one, e.g. [[workload]] name = \"dd-write\" type = \"dd\"");
  }
  std::map<std::string, std::size_t> first_line;
  for (std::size_t i = 0; i < list->as_array()->size(); ++i) {
    const std::string p = fmt::format("workload[{}]", i);
    e.workloads.push_back(read_workload(r, p, *list->as_array()->get(i)->as_table(), first_line));
  }
}

}  // namespace abvm::loader
