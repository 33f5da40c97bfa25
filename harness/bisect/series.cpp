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
#include "core/process.hpp"
#include "core/vocabulary.hpp"

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

namespace {

std::vector<SeriesEntry> entries_of(const std::vector<KernelPatch>& patches) {
  std::vector<SeriesEntry> out;
  for (const auto& p : patches) out.push_back({.name = p.name, .text = read_file(p.path)});
  return out;
}

// B's patches after A's: the series of two recipes of one source.
BisectSeries file_series(const Experiment& e, const KernelRecipe& base, const KernelRecipe& tip) {
  BisectSeries s{.base_recipe = e.a.kernel, .tip_recipe = e.b.kernel, .build = tip};
  const auto b = entries_of(tip.patches);
  s.base_patches = entries_of(base.patches);
  for (std::size_t i = 0; i < s.base_patches.size(); ++i) {
    if (i >= b.size() || s.base_patches[i].text != b[i].text) {
      fail(e, "sides.B.kernel",
           fmt::format("the patches of side A's kernel '{}' are not the first patches of side B's '{}' (patch {} {} "
                       "differs): abvm bisect needs A's series to be the start of B's",
                       e.a.kernel, e.b.kernel, i + 1, s.base_patches[i].name));
    }
  }
  s.patches.assign(b.begin() + static_cast<std::ptrdiff_t>(s.base_patches.size()), b.end());
  return s;
}

std::string git(const KernelRecipe& r, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", r.path.string()});
  return run_checked(args);
}

// The commit a git recipe builds, as a sha.
std::string commit_of(const Experiment& e, Side side, const KernelRecipe& r) {
  const std::string commit = r.commit.empty() ? "HEAD" : r.commit;
  const ProcessResult p = run_process({"git", "-C", r.path.string(), "rev-parse", "--verify", "--end-of-options",
                                       commit + "^{commit}"});
  if (p.exit_code != 0) {
    fail(e, fmt::format("sides.{}.kernel", to_string(side)),
         fmt::format("git tree {} has no commit '{}'", r.path.string(), commit));
  }
  return p.out.substr(0, p.out.find('\n'));
}

// The commits of base..tip as a series on the base commit, one `git format-patch` each.
BisectSeries git_series(const Experiment& e, const KernelRecipe& base, const KernelRecipe& tip, const std::string& from,
                        const std::string& to) {
  const auto refuse = [&](const std::string& why) {
    fail(e, "sides.B.kernel", fmt::format("kernels '{}' and '{}' are two commits of {}, but {}", e.a.kernel,
                                          e.b.kernel, tip.path.string(), why));
  };
  if (!base.patches.empty() || !tip.patches.empty()) {
    refuse("a recipe has a patch series too: bisect either the commits (no series) or a series (one commit)");
  }
  if (run_process({"git", "-C", tip.path.string(), "merge-base", "--is-ancestor", from, to}).exit_code != 0) {
    refuse(fmt::format("side A's {} is not an ancestor of side B's {}: give A the older commit", short_sha(from),
                       short_sha(to)));
  }
  if (!git(tip, {"rev-list", "--merges", from + ".." + to}).empty()) {
    refuse("there are merges between them: abvm bisect applies the commits in order, so the range must be linear");
  }
  BisectSeries s{.base_recipe = e.a.kernel, .tip_recipe = e.b.kernel, .build = base, .git_range = true};
  s.build.commit = from;
  std::istringstream commits(git(tip, {"rev-list", "--reverse", from + ".." + to}));
  for (std::string sha; std::getline(commits, sha);) {
    std::string subject = git(tip, {"log", "-1", "--format=%f", sha});
    subject = subject.substr(0, std::min<std::size_t>(subject.find('\n'), 52));
    s.patches.push_back({.name = fmt::format("{:04}-{}.patch", s.patches.size() + 1, subject),
                         .text = git(tip, {"format-patch", "-1", "--stdout", "--no-signature", sha}),
                         .commit = sha});
  }
  return s;
}

}  // namespace

BisectSeries load_bisect_series(const Experiment& e, const fs::path& kernels_dir) {
  if (!e.hosts.uris.empty()) {
    fail(e, "hosts.uris",
         "abvm bisect runs its steps on one libvirt connection, not a pool: remove [hosts] and name the host with "
         "abvm bisect --connect URI");
  }
  if (const auto d = side_difference(e)) {
    fail(e, d->key,
         fmt::format("side B's {} = {} differs from side A's {}: abvm bisect compares kernels only, so the sides must "
                     "differ in their kernel and nothing else (set it in the shared table instead)",
                     d->key.substr(8), d->b_value, d->a_value));
  }
  const KernelRecipe base = load_side_recipe(e, Side::a, kernels_dir);
  const KernelRecipe tip = load_side_recipe(e, Side::b, kernels_dir);
  if (const std::string differs = build_difference(base, tip); !differs.empty()) {
    fail(e, "sides.B.kernel",
         fmt::format("kernel '{}' is not side A's kernel '{}' plus patches: {}; abvm bisect needs B's recipe to be A's "
                     "with a longer patch series (or a later commit of the same git tree)",
                     e.b.kernel, e.a.kernel, differs));
  }
  const bool git_tree = base.source == KernelSource::git;
  const std::string from = git_tree ? commit_of(e, Side::a, base) : "", to = git_tree ? commit_of(e, Side::b, tip) : "";
  BisectSeries s = from != to ? git_series(e, base, tip, from, to) : file_series(e, base, tip);
  if (git_tree && from == to) s.build.commit = from;
  if (s.patches.empty()) {
    fail(e, "sides.B.kernel",
         fmt::format("kernel '{}' has no patches beyond side A's '{}': there is nothing to bisect (side B needs a "
                     "recipe with a patch series, or a later commit, side A its base)",
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

std::string recipe_text(const BisectSeries& s, int kernel, const std::vector<std::string>& fragments,
                        const std::string& series_file) {
  const KernelRecipe& r = s.build;
  toml::table t;
  t.insert("description", fmt::format("kernel {} of the bisection of {}: its base and the first {} of the {} patches",
                                      kernel, s.tip_recipe, kernel, s.patches.size()));
  t.insert("source", std::string(to_string(r.source)));
  if (!r.package.empty()) t.insert("package", r.package);
  if (!r.path.empty()) t.insert("path", r.path.string());
  if (!r.commit.empty()) t.insert("commit", r.commit);
  t.insert("config", r.base_config);
  toml::array frag;
  for (const auto& f : fragments) frag.push_back(f);
  t.insert("fragments", frag);
  t.insert("series", series_file);
  toml::array make;
  for (const auto& a : r.make_args) make.push_back(a);
  if (!make.empty()) t.insert("make_args", make);
  std::ostringstream out;
  out << "# Written by abvm bisect: " << s.tip_recipe << " up to patch " << kernel << " of the series.\n"
      << toml::toml_formatter{t} << "\n";
  return out.str();
}

}  // namespace

std::vector<fs::path> write_kernel_recipes(const BisectSeries& s, const fs::path& dir) {
  fs::create_directories(dir);
  std::set<fs::path> taken;
  std::vector<std::string> fragments;
  for (const auto& f : s.build.fragments) {
    const fs::path name = fs::path("fragments") / copy_name(f.filename().string(), taken);
    fs::create_directories((dir / name).parent_path());
    write_file_atomic(dir / name, read_file(f));
    fragments.push_back(name.string());
  }
  std::vector<std::string> patch_names;
  for (const auto* list : {&s.base_patches, &s.patches}) {
    for (const auto& p : *list) {
      const fs::path name = copy_name(p.name, taken);
      fs::create_directories((dir / "patches" / name).parent_path());
      write_file_atomic(dir / "patches" / name, p.text);
      patch_names.push_back(name.string());
    }
  }
  std::vector<fs::path> recipes;
  const std::size_t n = s.patches.size();
  for (std::size_t k = 0; k <= n; ++k) {
    std::string series = fmt::format("# kernel {}: the base's patches and the first {} of the series\n", k, k);
    for (std::size_t i = 0; i < s.base_patches.size() + k; ++i) series += patch_names[i] + "\n";
    const std::string series_file = fmt::format("patches/kernel-{}.series", k);
    write_file_atomic(dir / series_file, series);
    recipes.push_back(dir / fmt::format("kernel-{}.toml", k));
    write_file_atomic(recipes.back(), recipe_text(s, static_cast<int>(k), fragments, series_file));
  }
  return recipes;
}

}  // namespace abvm
