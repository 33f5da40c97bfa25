// Kernel recipes: kernels/<name>.toml -> KernelRecipe, strictly (see kernels/kernel.hpp).
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/resources.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;

namespace abvm {
namespace {

constexpr std::array<std::string_view, 9> kKeys = {"description", "source", "package",   "path",     "commit",
                                                   "config",      "fragments", "series", "make_args"};
constexpr std::array<std::string_view, 3> kBaseConfigs = {"tinyconfig", "allnoconfig", "defconfig"};

std::string join(const auto& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + std::string(i);
  return out;
}

class RecipeReader {
 public:
  RecipeReader(fs::path file, const toml::table& table) : file_(std::move(file)), table_(table) {}

  [[noreturn]] void fail(const toml::node* node, const std::string& message) const {
    std::size_t line = node ? static_cast<std::size_t>(node->source().begin.line) : 0;
    throw Error(located(file_.string(), line, message));
  }

  std::optional<std::string> string(std::string_view key) const {
    const toml::node* node = table_.get(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) fail(node, fmt::format("'{}' must be a string", key));
    return node->value<std::string>();
  }

  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    const toml::node* node = table_.get(key);
    if (!node) return out;
    const toml::array* array = node->as_array();
    if (!array) fail(node, fmt::format("'{}' must be an array of strings", key));
    for (const auto& item : *array) {
      if (!item.is_string()) fail(&item, fmt::format("'{}' must be an array of strings", key));
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  const toml::node* node(std::string_view key) const { return table_.get(key); }

  // A path in the recipe, relative to the recipe's directory; must exist.
  fs::path existing(std::string_view key, const std::string& value, std::string_view what) const {
    fs::path p = fs::path(value).is_absolute() ? fs::path(value) : file_.parent_path() / value;
    p = p.lexically_normal();
    if (!fs::exists(p)) fail(node(key), fmt::format("{} {} does not exist", what, p.string()));
    return p;
  }

 private:
  fs::path file_;
  const toml::table& table_;
};

std::vector<KernelPatch> read_series(const fs::path& series) {
  std::vector<KernelPatch> out;
  std::istringstream in(read_file(series));
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string name;
    if (!(words >> name)) continue;
    // quilt allows per-patch options; abvm applies everything with -p1.
    std::string option;
    while (words >> option) {
      if (option != "-p1") {
        throw Error(located(series.string(), n, fmt::format("unsupported option '{}' for patch {}: abvm applies "
                                                            "patches with -p1 only",
                                                            option, name)));
      }
    }
    fs::path path = (series.parent_path() / name).lexically_normal();
    if (!fs::is_regular_file(path)) {
      throw Error(located(series.string(), n, fmt::format("patch {} does not exist", path.string())));
    }
    out.push_back({name, path});
  }
  return out;
}

// Where the source is: the package, or the path (and a git tree's commit), as the source asks.
void read_location(const RecipeReader& r, const std::string& source, KernelRecipe& recipe) {
  const bool packaged = recipe.source == KernelSource::debian_package || recipe.source == KernelSource::linux_source;
  if (packaged) {
    auto package = r.string("package");
    if (!package) r.fail(nullptr, fmt::format("missing key 'package' (required for source = \"{}\")", source));
    recipe.package = *package;
    if (r.node("path")) r.fail(r.node("path"), fmt::format("'path' does not apply to source = \"{}\"", source));
  } else {
    auto path = r.string("path");
    if (!path) r.fail(nullptr, fmt::format("missing key 'path' (required for source = \"{}\")", source));
    recipe.path = r.existing("path", *path, source == "git" ? "git tree" : "tarball");
    if (r.node("package")) r.fail(r.node("package"), fmt::format("'package' does not apply to source = \"{}\"", source));
  }
  if (auto commit = r.string("commit")) {
    if (recipe.source != KernelSource::git) {
      r.fail(r.node("commit"), fmt::format("'commit' applies to source = \"git\" only, not \"{}\"", source));
    }
    if (commit->empty() || commit->front() == '-') {
      r.fail(r.node("commit"), "'commit' must name a commit (a sha, branch or tag)");
    }
    recipe.commit = *commit;
  }
}

}  // namespace

fs::path default_kernels_dir() { return resource("kernels"); }

KernelRecipe load_kernel_recipe(const std::string& name_or_path, const fs::path& kernels_dir) {
  bool by_path = name_or_path.find('/') != std::string::npos ||
                 (name_or_path.size() > 5 && name_or_path.ends_with(".toml"));
  fs::path file = by_path ? fs::path(name_or_path) : kernels_dir / (name_or_path + ".toml");
  if (!fs::is_regular_file(file)) {
    if (by_path) throw Error(fmt::format("kernel recipe {} does not exist", file.string()));
    std::vector<std::string> names;
    if (fs::is_directory(kernels_dir)) {
      for (const auto& e : fs::directory_iterator(kernels_dir)) {
        if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
      }
    }
    std::sort(names.begin(), names.end());
    throw Error(fmt::format("kernel recipe '{}' not found: no {}.toml in {} (available: {})", name_or_path,
                            name_or_path, kernels_dir.string(), names.empty() ? "none" : join(names)));
  }
  file = fs::absolute(file).lexically_normal();

  toml::table table;
  try {
    table = toml::parse(read_file(file), file.string());
  } catch (const toml::parse_error& e) {
    throw Error(located(file.string(), e.source().begin.line, std::string(e.description())));
  }
  RecipeReader r(file, table);
  for (const auto& [key, value] : table) {
    if (std::find(kKeys.begin(), kKeys.end(), key.str()) == kKeys.end()) {
      r.fail(&value, fmt::format("unknown key '{}' in kernel recipe (known keys: {})", key.str(), join(kKeys)));
    }
  }

  KernelRecipe recipe;
  recipe.name = file.stem().string();
  recipe.file = file;
  recipe.description = r.string("description").value_or("");
  auto source = r.string("source");
  if (!source) r.fail(nullptr, "missing key 'source' (one of: debian-package, linux-source, tarball, git)");
  if (*source == "debian-package") {
    recipe.source = KernelSource::debian_package;
  } else if (*source == "linux-source") {
    recipe.source = KernelSource::linux_source;
  } else if (*source == "tarball") {
    recipe.source = KernelSource::tarball;
  } else if (*source == "git") {
    recipe.source = KernelSource::git;
  } else {
    r.fail(r.node("source"),
           fmt::format("source = \"{}\" is not one of: debian-package, linux-source, tarball, git", *source));
  }

  read_location(r, *source, recipe);

  if (recipe.source == KernelSource::debian_package) {
    // A packaged kernel is used as built: nothing to configure or patch.
    for (std::string_view key : {"config", "fragments", "series", "make_args"}) {
      if (r.node(key)) {
        r.fail(r.node(key), fmt::format("'{}' does not apply to source = \"debian-package\" (a packaged kernel "
                                        "is used as built; build it from source to change it)",
                                        key));
      }
    }
    return recipe;
  }

  if (auto config = r.string("config")) {
    if (std::find(kBaseConfigs.begin(), kBaseConfigs.end(), *config) == kBaseConfigs.end()) {
      r.fail(r.node("config"), fmt::format("config = \"{}\" is not one of: {}", *config, join(kBaseConfigs)));
    }
    recipe.base_config = *config;
  }
  for (const auto& f : r.strings("fragments")) recipe.fragments.push_back(r.existing("fragments", f, "config fragment"));
  if (auto series = r.string("series")) {
    recipe.series = r.existing("series", *series, "series file");
    recipe.patches = read_series(*recipe.series);
  }
  recipe.make_args = r.strings("make_args");
  for (const auto& a : recipe.make_args) {
    // Targets would change what gets built behind the cache's back; only variables.
    if (a.find('=') == std::string::npos) {
      r.fail(r.node("make_args"), fmt::format("make_args entry \"{}\" is not a VARIABLE=value assignment", a));
    }
  }
  return recipe;
}

}  // namespace abvm
