#include "bisect/series.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

// Where the experiment sets `key`: "file:line" when the file sets it, else the file with the
// key's origin ("configs/x.toml (sides.B.kernel: side B inherits guest.kernel (default))").
std::string at_key(const Experiment& e, const std::string& key) {
  for (const auto& v : e.effective) {
    if (v.key != key) continue;
    if (v.origin.starts_with(e.source + ":")) return fmt::format("{} ({})", v.origin, key);
    return fmt::format("{} ({}: {})", e.source, key, v.origin);
  }
  return fmt::format("{} ({})", e.source, key);
}

[[noreturn]] void fail(const Experiment& e, const std::string& key, const std::string& message) {
  throw Error(fmt::format("{}: {}", at_key(e, key), message));
}

std::vector<std::string> texts(const std::vector<fs::path>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(read_file(f));
  return out;
}

// The first way `b` is not built like `a` apart from its patches, or "".
std::string build_difference(const KernelRecipe& a, const KernelRecipe& b) {
  if (a.source != b.source) return fmt::format("its source is {}, the base's {}", to_string(b.source), to_string(a.source));
  if (a.package != b.package) return fmt::format("its package is {}, the base's {}", b.package, a.package);
  if (a.path != b.path) return fmt::format("its source is {}, the base's {}", b.path.string(), a.path.string());
  if (a.base_config != b.base_config) return fmt::format("its config is {}, the base's {}", b.base_config, a.base_config);
  if (texts(a.fragments) != texts(b.fragments)) return "its config fragments differ from the base's";
  if (a.make_args != b.make_args) return "its make_args differ from the base's";
  return "";
}

// The first of side B's settings other than its kernel and label that is not side A's, with both
// values, from the effective values the loader recorded (so it names the key the file sets).
struct SideDifference {
  std::string key, a_value, b_value;  // key: "sides.B.device.iommu_platform"
};
std::optional<SideDifference> side_difference(const Experiment& e) {
  const auto value_of = [&](const std::string& key) -> std::optional<std::string> {
    for (const auto& v : e.effective) {
      if (v.key == key) return v.value;
    }
    return std::nullopt;
  };
  for (const auto& v : e.effective) {
    if (!v.key.starts_with("sides.B.") || v.key == "sides.B.kernel" || v.key == "sides.B.label") continue;
    const auto a = value_of("sides.A." + v.key.substr(8));
    if (a && *a != v.value) return SideDifference{v.key, *a, v.value};
  }
  return std::nullopt;
}

KernelRecipe load_side_recipe(const Experiment& e, Side s, const fs::path& kernels_dir) {
  const std::string key = fmt::format("sides.{}.kernel", to_string(s));
  try {
    KernelRecipe r = load_kernel_recipe(e.side(s).kernel, kernels_dir);
    if (r.source == KernelSource::debian_package) {
      fail(e, key, fmt::format("kernel '{}' is a packaged Debian kernel, which has no patch series: abvm bisect "
                               "needs kernels built from source (kernels/*.toml with source = \"linux-source\", "
                               "\"tarball\" or \"git\")",
                               e.side(s).kernel));
    }
    return r;
  } catch (const Error& ex) {
    if (std::string_view(ex.what()).starts_with(e.source)) throw;
    fail(e, key, ex.what());
  }
}

}  // namespace

BisectSeries load_bisect_series(const Experiment& e, const fs::path& kernels_dir) {
  if (const auto d = side_difference(e)) {
    fail(e, d->key,
         fmt::format("side B's {} = {} differs from side A's {}: abvm bisect compares kernels only, so the sides must "
                     "differ in their kernel and nothing else (set it in the shared table instead)",
                     d->key.substr(8), d->b_value, d->a_value));
  }
  const KernelRecipe base = load_side_recipe(e, Side::a, kernels_dir);
  BisectSeries s{.base_recipe = e.a.kernel, .tip_recipe = e.b.kernel, .tip = load_side_recipe(e, Side::b, kernels_dir)};
  if (const std::string differs = build_difference(base, s.tip); !differs.empty()) {
    fail(e, "sides.B.kernel",
         fmt::format("kernel '{}' is not side A's kernel '{}' plus patches: {}; abvm bisect needs B's recipe to be A's "
                     "with a longer patch series",
                     e.b.kernel, e.a.kernel, differs));
  }
  const auto& tip = s.tip.patches;
  for (std::size_t i = 0; i < base.patches.size(); ++i) {
    if (i >= tip.size() || read_file(base.patches[i].path) != read_file(tip[i].path)) {
      fail(e, "sides.B.kernel",
           fmt::format("the patches of side A's kernel '{}' are not the first patches of side B's '{}' (patch {} {} "
                       "differs): abvm bisect needs A's series to be the start of B's",
                       e.a.kernel, e.b.kernel, i + 1, base.patches[i].name));
    }
  }
  s.base_patches = base.patches.size();
  s.patches.assign(tip.begin() + static_cast<std::ptrdiff_t>(s.base_patches), tip.end());
  if (s.patches.empty()) {
    fail(e, "sides.B.kernel",
         fmt::format("kernel '{}' has no patches beyond side A's '{}': there is nothing to bisect (side B needs a "
                     "recipe with a patch series, side A its base)",
                     e.b.kernel, e.a.kernel));
  }
  return s;
}

namespace {

// A name for a copied file: `wanted` when it is a plain relative path no other file took, else
// "<n>-<file name>". Keeps the series' own names, which kernels.json and the side check read.
fs::path copy_name(const std::string& wanted, std::set<fs::path>& taken) {
  fs::path p = fs::path(wanted).lexically_normal();
  const bool plain = !p.is_absolute() && !p.empty() &&
                     std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
  if (!plain) p = fs::path(wanted).filename();
  for (int n = 2; taken.contains(p); ++n) p = fmt::format("{}-{}", n, fs::path(wanted).filename().string());
  taken.insert(p);
  return p;
}

std::string recipe_text(const KernelRecipe& tip, int kernel, int patches, const std::vector<std::string>& fragments,
                        const std::string& series_file) {
  toml::table t;
  t.insert("description", fmt::format("kernel {} of the bisection of {}: its base and the first {} of the {} patches",
                                      kernel, tip.name, kernel, patches));
  t.insert("source", std::string(to_string(tip.source)));
  if (!tip.package.empty()) t.insert("package", tip.package);
  if (!tip.path.empty()) t.insert("path", tip.path.string());
  t.insert("config", tip.base_config);
  toml::array frag;
  for (const auto& f : fragments) frag.push_back(f);
  t.insert("fragments", frag);
  t.insert("series", series_file);
  toml::array make;
  for (const auto& a : tip.make_args) make.push_back(a);
  if (!make.empty()) t.insert("make_args", make);
  std::ostringstream out;
  out << "# Written by abvm bisect: " << tip.name << " (" << tip.file.string() << ") up to patch " << kernel
      << " of the series.\n"
      << toml::toml_formatter{t} << "\n";
  return out.str();
}

}  // namespace

std::vector<fs::path> write_kernel_recipes(const BisectSeries& s, const fs::path& dir) {
  fs::create_directories(dir);
  std::set<fs::path> taken;
  std::vector<std::string> fragments;
  for (const auto& f : s.tip.fragments) {
    const fs::path name = fs::path("fragments") / copy_name(f.filename().string(), taken);
    fs::create_directories((dir / name).parent_path());
    write_file_atomic(dir / name, read_file(f));
    fragments.push_back(name.string());
  }
  std::vector<std::string> patch_names;
  for (const auto& p : s.tip.patches) {
    const fs::path name = copy_name(p.name, taken);
    fs::create_directories((dir / "patches" / name).parent_path());
    write_file_atomic(dir / "patches" / name, read_file(p.path));
    patch_names.push_back(name.string());
  }
  std::vector<fs::path> recipes;
  const int n = static_cast<int>(s.patches.size());
  for (int k = 0; k <= n; ++k) {
    std::string series = "# kernel " + std::to_string(k) + ": the base's patches and the first " + std::to_string(k) +
                         " of the series\n";
    for (std::size_t i = 0; i < s.base_patches + static_cast<std::size_t>(k); ++i) series += patch_names[i] + "\n";
    const std::string series_file = fmt::format("patches/kernel-{}.series", k);
    write_file_atomic(dir / series_file, series);
    recipes.push_back(dir / fmt::format("kernel-{}.toml", k));
    write_file_atomic(recipes.back(), recipe_text(s.tip, k, n, fragments, series_file));
  }
  return recipes;
}

}  // namespace abvm
