#include "nightly/settings.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"

namespace abvm {
namespace fs = std::filesystem;

std::string without_nightly_tables(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line[start] == '[') {
      std::string name = line.substr(start);
      name = name.substr(0, name.find(']'));
      name.erase(0, name.find_first_not_of("[ \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      inside = name == "nightly" || name.starts_with("nightly.");
    }
    if (!inside) out += line;
    out += '\n';
  }
  return out;
}

namespace {

class NightlyReader {
 public:
  explicit NightlyReader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::node* n, const std::string& message) const {
    const auto line = n != nullptr ? n->source().begin.line : 0;
    throw Error(line != 0 ? fmt::format("{}:{}: {}", file_.string(), line, message)
                          : fmt::format("{}: {}", file_.string(), message));
  }

  void known(const toml::table& t, const std::string& where, const std::set<std::string>& keys) const {
    for (const auto& [k, v] : t) {
      if (!keys.contains(std::string(k.str()))) {
        std::string list;
        for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
        fail(&v, fmt::format("unknown key '{}' in [{}] (known: {})", k.str(), where, list));
      }
    }
  }

  std::string text(const toml::table& t, const std::string& where, const std::string& key, bool required) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) fail(&t, fmt::format("[{}] needs {} (see README, Nightly CI)", where, key));
      return "";
    }
    const auto v = n->value<std::string>();
    if (!v || v->empty()) fail(n, fmt::format("{}.{} must be a non-empty string", where, key));
    return *v;
  }

  std::optional<int> count(const toml::table& t, const std::string& where, const std::string& key, int min) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    const auto v = n->value<std::int64_t>();
    if (!v || *v < min || *v > 100000) fail(n, fmt::format("{}.{} must be a whole number from {} to 100000", where, key, min));
    return static_cast<int>(*v);
  }

  std::optional<std::chrono::milliseconds> duration(const toml::table& t, const std::string& where,
                                                    const std::string& key) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    const auto v = n->value<std::string>();
    if (!v) fail(n, fmt::format("{}.{} must be a duration such as \"2h\" or \"90m\"", where, key));
    try {
      return parse_duration(*v);
    } catch (const Error& ex) {
      fail(n, fmt::format("{}.{}: {}", where, key, ex.what()));
    }
  }

 private:
  fs::path file_;
};

NightlySettings read_settings(const fs::path& file, const toml::table& root) {
  const toml::node* node = root.get("nightly");
  const NightlyReader r(file);
  if (node == nullptr || !node->is_table()) {
    r.fail(node, "an abvm nightly experiment needs a [nightly] table: tree, branch, base, url and recipe (README, "
                 "Nightly CI)");
  }
  const toml::table& t = *node->as_table();
  r.known(t, "nightly", {"tree", "branch", "base", "url", "recipe", "drift_every", "bisect"});
  NightlySettings s;
  s.tree = fs::weakly_canonical(file.parent_path() / r.text(t, "nightly", "tree", true));
  s.branch = r.text(t, "nightly", "branch", true);
  s.base = r.text(t, "nightly", "base", true);
  s.url = r.text(t, "nightly", "url", true);
  if (!s.url.starts_with("https://")) {
    r.fail(t.get("url"), fmt::format("nightly.url '{}' must be the tree's public https:// URL (the history, reports "
                                     "and KCIDB name the tree by it; the local tree is nightly.tree)", s.url));
  }
  s.recipe = r.text(t, "nightly", "recipe", true);
  s.drift_every = r.count(t, "nightly", "drift_every", 0).value_or(7);
  if (const toml::node* b = t.get("bisect")) {
    if (!b->is_table()) r.fail(b, "nightly.bisect must be a table ([nightly.bisect])");
    const toml::table& bt = *b->as_table();
    r.known(bt, "nightly.bisect", {"max_boots", "max_wall_time", "max_steps"});
    s.bisect_max_boots = r.count(bt, "nightly.bisect", "max_boots", 1);
    s.bisect_max_wall = r.duration(bt, "nightly.bisect", "max_wall_time");
    s.bisect_max_steps = r.count(bt, "nightly.bisect", "max_steps", 1);
  }
  return s;
}

// The file must leave both sides to the nightly: their kernels are the night's commits, their labels
// the commits' short shas, and nothing else may differ between them.
void check_sides_unset(const toml::table& root, const fs::path& file) {
  for (const char* key : {"sides", "guest.kernel"}) {
    if (const toml::node* n = root.at_path(key).node()) {
      throw Error(fmt::format("{}:{}: {} is set, but abvm nightly sets both sides: each side's kernel is one of the "
                              "night's commits of nightly.tree built with nightly.recipe, and the sides differ in "
                              "nothing else (put shared settings in [guest], [device] ...): remove it",
                              file.string(), n->source().begin.line, key));
    }
  }
}

// A night is the demo's kind of comparison (issue 28): co-scheduled pairs with sequential stopping,
// so that tonight's two commits meet the same host, and a clear night stops at its first look.
void check_night_design(const toml::table& root, const fs::path& file, const Experiment& experiment) {
  constexpr const char* kWhy = "abvm nightly runs both commits co-scheduled with sequential stopping, like "
                               "configs/demo.toml";
  if (experiment.schedule.design != Design::co_scheduled) {
    const toml::node* n = root.at_path("schedule.design").node();
    throw Error(n != nullptr ? fmt::format("{}:{}: schedule.design is \"{}\", but {}: set it to \"co-scheduled\"",
                                           file.string(), n->source().begin.line, to_string(experiment.schedule.design), kWhy)
                             : fmt::format("{}: schedule.design is not set, but {}: add design = \"co-scheduled\" to "
                                           "[schedule]",
                                           file.string(), kWhy));
  }
  if (!experiment.schedule.sequential.enabled) {
    const toml::node* n = root.at_path("schedule.sequential.enabled").node();
    throw Error(n != nullptr ? fmt::format("{}:{}: schedule.sequential.enabled is false, but {}: set it to true",
                                           file.string(), n->source().begin.line, kWhy)
                             : fmt::format("{}: schedule.sequential.enabled is not set, but {}: add "
                                           "[schedule.sequential] with enabled = true",
                                           file.string(), kWhy));
  }
}

}  // namespace

NightlyExperiment load_nightly_experiment(const fs::path& file, const fs::path& kernels_dir) {
  NightlyExperiment x{.file = fs::absolute(file)};
  const std::string text = read_file(x.file);
  toml::table root;
  try {
    root = toml::parse(text, x.file.string());
  } catch (const toml::parse_error& ex) {
    throw Error(fmt::format("{}:{}: invalid TOML: {}", x.file.string(), ex.source().begin.line, ex.description()));
  }
  x.nightly = read_settings(x.file, root);
  x.sha256 = text_sha256(text);
  x.experiment_text = without_nightly_tables(text);
  check_sides_unset(root, x.file);
  // Stand-ins for the night's kernels, after the file's last line (its line numbers stay as they are).
  x.experiment = load_experiment_text(x.experiment_text + "[sides.A]\nkernel = \"nightly-A\"\n[sides.B]\nkernel = "
                                                          "\"nightly-B\"\n",
                                      x.file.string(), x.file.parent_path());
  check_night_design(root, x.file, x.experiment);
  const std::string& recipe = x.nightly.recipe;
  const bool is_path = recipe.find('/') != std::string::npos || recipe.ends_with(".toml");
  try {
    x.build = load_kernel_recipe(is_path ? (x.file.parent_path() / recipe).string() : recipe, kernels_dir);
  } catch (const Error& ex) {
    throw Error(fmt::format("{} (nightly.recipe): {}", x.file.string(), ex.what()));
  }
  if (x.build.source == KernelSource::debian_package || !x.build.patches.empty()) {
    throw Error(fmt::format("{} (nightly.recipe): recipe '{}' {}: abvm nightly takes only its config, fragments and "
                            "make_args and builds the tree's commits; name a recipe without a series",
                            x.file.string(), recipe,
                            x.build.source == KernelSource::debian_package ? "is a packaged Debian kernel"
                                                                           : "has a patch series"));
  }
  x.build.source = KernelSource::git;
  x.build.path = x.nightly.tree;
  x.build.package.clear();
  return x;
}

}  // namespace abvm
