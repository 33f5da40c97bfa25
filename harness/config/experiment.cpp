#include "config/experiment.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>

#include "config/load_sections.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {

const char* to_string(ScheduleOrder order) {
  return order == ScheduleOrder::interleaved ? "interleaved" : "sequential";
}

const char* to_string(Design design) { return traits(design).name.data(); }

std::optional<Design> design_from_string(std::string_view text) {
  for (const DesignTraits& t : kDesignTraits) {
    if (text == t.name) return t.design;
  }
  return std::nullopt;
}

const char* to_string(LookCorrection correction) {
  switch (correction) {
    case LookCorrection::obrien_fleming: return "obrien-fleming";
    case LookCorrection::pocock: return "pocock";
    case LookCorrection::pocock_spending: return "pocock-spending";
    case LookCorrection::bonferroni: break;
  }
  return "bonferroni";
}

namespace fs = std::filesystem;

namespace loader {

void read_top(KeyReader& r, Experiment& e) {
  const auto name = r.get_string("name");
  if (!name) {
    r.fail(0, "missing key 'name': add name = \"...\" ([A-Za-z0-9._-]+; results go to "
              "results/<name>-<timestamp>/)");
  }
  if (!valid_name(*name, true)) {
    r.fail(r.line_of("name"), fmt::format("key 'name' = {} may only contain letters, digits, '.', '_' and '-' "
                                          "(it names the results directory)", quote(*name)));
  }
  e.name = *name;
  r.note("name", quote(e.name));
  e.description = r.get_string("description").value_or("");
  r.note("description", quote(e.description));
}

}  // namespace loader

Experiment load_experiment(const fs::path& file, const LoadOptions& options) {
  const std::string text = read_file(file);
  fs::path base = file.parent_path();
  if (base.empty()) base = ".";
  return load_experiment_text(text, file.string(), base, options);
}

Experiment load_experiment_text(std::string_view text, std::string display_name, const fs::path& base_dir,
                                const LoadOptions& options) {
  using namespace loader;
  toml::table root;
  try {
    root = toml::parse(text, display_name);
  } catch (const toml::parse_error& e) {
    throw Error(located(display_name, e.source().begin.line, fmt::format("invalid TOML: {}", e.description())));
  }
  check_schema(root, display_name);
  KeyReader r(display_name, base_dir, std::move(root));
  Experiment e;
  e.source = display_name;
  e.source_text = std::string(text);
  SharedSideValues shared;
  read_top(r, e);
  read_guest(r, e, shared);
  read_disk(r, e);
  read_hosts(r, e);
  read_device(r, "device", shared.device, nullptr, "");
  read_side(r, shared, options, Side::a, e.a);
  read_side(r, shared, options, Side::b, e.b);
  check_sides(r, e);
  read_workloads(r, e);
  read_schedule(r, e);
  read_analysis(r, e);
  e.effective = r.take_effective();
  return e;
}

std::string describe_effective_config(const Experiment& experiment) {
  std::size_t key_width = 0;
  std::size_t value_width = 0;
  for (const EffectiveValue& v : experiment.effective) {
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, std::min<std::size_t>(v.value.size(), 40));
  }
  std::string out = fmt::format("# experiment {} from {}: every value and where it came from\n",
                                experiment.name, experiment.source);
  for (const EffectiveValue& v : experiment.effective) {
    out += fmt::format("{:<{}}  {:<{}}  {}\n", v.key, key_width, v.value, value_width, v.origin);
  }
  return out;
}

}  // namespace abvm
