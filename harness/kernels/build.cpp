// Kernels built from source: the cache key, `make` with progress lines, and the cache entry it
// leaves (the tree it builds in: kernels/source_tree.cpp; the .config check: kernel_config.cpp).
#include "kernels/kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "kernels/cache_entry.hpp"
#include "kernels/source_tree.hpp"

namespace fs = std::filesystem;

namespace abvm {
using namespace kernel_build;
namespace {

// Source builds: 2 since they are built in the kept build tree (trees/<source>/linux), whose
// path the image records, so a format-1 image differs from a format-2 one of the same recipe.
constexpr int kSourceBuildFormat = 2;

std::string compiler_version() {
  std::string out = run_checked({"gcc", "--version"});
  return out.substr(0, out.find('\n'));
}

nlohmann::json key_material(const KernelRecipe& r, const nlohmann::json& source) {
  nlohmann::json fragments = nlohmann::json::array();
  for (const auto& f : r.fragments) fragments.push_back(sha256_text(read_file(f)));
  nlohmann::json patches = nlohmann::json::array();
  for (const auto& p : r.patches) patches.push_back(sha256_file(p.path));
  // Names and paths are deliberately left out: renaming a fragment or moving a recipe does
  // not change the kernel.
  return {{"format", kSourceBuildFormat}, {"source", source}, {"base_config", r.base_config},
          {"fragments", fragments}, {"patches", patches},      {"make_args", r.make_args},
          {"arch", "x86_64"},       {"compiler", compiler_version()}};
}

}  // namespace

std::string file_sha256(const fs::path& path) { return sha256_file(path); }

std::string text_sha256(const std::string& text) { return sha256_text(text); }

std::string_view to_string(KernelSource source) {
  switch (source) {
    case KernelSource::debian_package: return "debian-package";
    case KernelSource::linux_source: return "linux-source";
    case KernelSource::tarball: return "tarball";
    case KernelSource::git: return "git";
  }
  return "?";
}

std::string kernel_cache_key(const KernelRecipe& recipe) {
  if (recipe.source == KernelSource::debian_package) {
    return debian_kernel_cache_key(recipe.package);
  }
  return sha256_text(key_material(recipe, source_identity(recipe)).dump());
}

namespace {

// Objects kbuild wrote since `since` under `tree`, and the newest of them (relative): what make
// is working through. A walk of a tinyconfig tree takes well under a second.
struct BuildProgress {
  std::size_t objects = 0;
  std::string latest;
};

BuildProgress objects_since(const fs::path& tree, fs::file_time_type since) {
  BuildProgress p;
  fs::file_time_type newest = since;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(tree, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".o") continue;
    std::error_code tec;
    const auto t = it->last_write_time(tec);
    if (tec || t < since) continue;
    ++p.objects;
    if (t >= newest) {
      newest = t;
      p.latest = fs::relative(it->path(), tree, tec).string();
    }
  }
  return p;
}

// run_process, with a line every kProgressEvery while it runs (a kernel build takes minutes and
// is otherwise silent): elapsed time, objects compiled so far and the latest one.
constexpr auto kProgressEvery = std::chrono::seconds(15);

ProcessResult run_with_progress(const std::vector<std::string>& argv, const ProcessOptions& env, const fs::path& tree,
                                const std::function<void(const std::string&)>& report) {
  const auto started = std::chrono::steady_clock::now();
  const auto since = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  auto job = std::async(std::launch::async, [&] { return run_process(argv, env); });
  while (job.wait_for(kProgressEvery) != std::future_status::ready) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
    const BuildProgress p = objects_since(tree, since);
    report(p.objects == 0 ? fmt::format("{} s", elapsed.count())
                          : fmt::format("{} s, {} objects compiled, latest {}", elapsed.count(), p.objects, p.latest));
  }
  return job.get();
}

// What make leaves in a patched tree: the final .config, the release, the build log.
struct MadeKernel {
  std::string final_config;
  std::string release;
  fs::path log_file;
};

// Configures (base config, the fragments, olddefconfig; checked against the fragments) and
// builds bzImage in src, logging every make to work/build.log.
MadeKernel make_kernel(const KernelRecipe& recipe, const fs::path& src, const fs::path& work, const fs::path& root,
                       const std::string& key, const KernelBuildOptions& options) {
  fs::path log_file = work / "build.log";
  std::string log;
  std::vector<std::string> make = {"make", "ARCH=x86_64", "CC=ccache gcc", "KBUILD_BUILD_USER=abvm",
                                   "KBUILD_BUILD_HOST=abvm", "KBUILD_BUILD_VERSION=1",
                                   // Reproducible, and `uname -v` names the cache entry.
                                   "KBUILD_BUILD_TIMESTAMP=abvm-" + key.substr(0, 12)};
  make.insert(make.end(), recipe.make_args.begin(), recipe.make_args.end());
  ProcessOptions env{.cwd = src,
                     .extra_env = {"CCACHE_DIR=" + (root / "ccache").string(), "CCACHE_BASEDIR=" + src.string(),
                                   "CCACHE_NOHASHDIR=1", "LC_ALL=C"}};
  auto run_make = [&](std::vector<std::string> targets, const std::string& what) {
    std::vector<std::string> argv = make;
    argv.insert(argv.end(), targets.begin(), targets.end());
    say(options, fmt::format("{}: {}", recipe.name, describe_command(argv)));
    ProcessResult r = run_with_progress(argv, env, src, [&](const std::string& line) {
      say(options, fmt::format("{}: {}: {}", recipe.name, what, line));
    });
    log += "$ " + describe_command(argv) + "\n" + r.out + r.err;
    write_file_atomic(log_file, log);
    if (r.exit_code != 0) {
      // A patch or fragment can break the build: the user's to fix, with the log's tail.
      throw Error(located(recipe.file.string(), 0,
                          fmt::format("{} failed (exit {}); last lines of {}:\n{}", what, r.exit_code,
                                      log_file.string(), tail_lines(r.out + r.err, 30))));
    }
  };

  run_make({recipe.base_config}, "make " + recipe.base_config);
  std::string config = read_file(src / ".config");
  for (const auto& f : recipe.fragments) {
    config += "\n# abvm fragment " + f.filename().string() + "\n" + read_file(f);
  }
  write_file_atomic(src / ".config", config);
  run_make({"olddefconfig"}, "make olddefconfig");
  std::string final_config = read_file(src / ".config");
  check_kernel_config(recipe.fragments, final_config, recipe.file);

  run_make({fmt::format("-j{}", std::max(1, options.jobs)), "bzImage"}, "make bzImage");
  std::string release = read_file(src / "include" / "config" / "kernel.release");
  release.erase(release.find_last_not_of(" \n") + 1);
  return {std::move(final_config), std::move(release), log_file};
}

// Copies the image, config and log of a finished build into the cache entry with its
// identity.json (through a temporary directory renamed into place) and loads it back.
KernelArtifact store_source_build(const KernelRecipe& recipe, const fs::path& src, const MadeKernel& made,
                                  const nlohmann::json& source, const nlohmann::json& material,
                                  const std::string& key, const fs::path& root, const fs::path& entry,
                                  std::chrono::steady_clock::time_point started, const KernelBuildOptions& options) {
  TempDir tmp(root / ("tmp-" + key));
  fs::copy_file(src / "arch" / "x86" / "boot" / "bzImage", tmp.path() / "bzImage");
  write_file_atomic(tmp.path() / "config", made.final_config);
  fs::copy_file(made.log_file, tmp.path() / "build.log");
  nlohmann::json patches = nlohmann::json::array();
  for (std::size_t i = 0; i < recipe.patches.size(); ++i) {
    patches.push_back({{"name", recipe.patches[i].name}, {"sha256", material["patches"][i]}});
  }
  nlohmann::json fragments = nlohmann::json::array();
  for (std::size_t i = 0; i < recipe.fragments.size(); ++i) {
    fragments.push_back({{"name", recipe.fragments[i].filename().string()}, {"sha256", material["fragments"][i]}});
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nlohmann::json id = {
      {"format", kSourceBuildFormat},
      {"recipe", recipe.name},
      {"source", source},
      {"release", made.release},
      {"version", bzimage_version(tmp.path() / "bzImage")},
      {"image", "bzImage"},
      {"image_sha256", sha256_file(tmp.path() / "bzImage")},
      {"config_sha256", sha256_text(made.final_config)},
      {"base_config", recipe.base_config},
      {"fragments", fragments},
      {"patches", patches},
      {"make_args", recipe.make_args},
      {"compiler", material["compiler"]},
      {"cache_key", key},
      {"built_at", utc_now()},
      {"build_seconds", std::round(seconds * 10) / 10},
  };
  write_file_atomic(tmp.path() / "identity.json", id.dump(2) + "\n");
  fs::rename(tmp.path(), entry);
  tmp.release();
  say(options, fmt::format("{}: built {} in {:.1f} s -> {}", recipe.name, made.release, seconds, entry.string()));
  auto a = load_cached(entry);
  a->cache_hit = false;
  return *a;
}

}  // namespace

KernelArtifact build_kernel(const KernelRecipe& recipe, const KernelBuildOptions& options) {
  if (recipe.source == KernelSource::debian_package) {
    KernelArtifact a = fetch_debian_kernel(recipe.package, options);
    a.recipe = recipe.name;
    a.identity["recipe"] = recipe.name;
    return a;
  }
  nlohmann::json source = source_identity(recipe);
  nlohmann::json material = key_material(recipe, source);
  std::string key = sha256_text(material.dump());
  fs::path root = cache_root(options);
  fs::path entry = root / key;
  if (auto hit = load_cached(entry)) {
    say(options, fmt::format("{}: cached in {}", recipe.name, entry.string()));
    return *hit;
  }
  FileLock lock(root / "locks" / (key + ".lock"));
  if (auto hit = load_cached(entry)) return *hit;

  auto started = std::chrono::steady_clock::now();
  fs::path tree = unpacked_source(recipe, source, root, options);

  // One build tree per kernel source, kept between builds (see prepare_build_tree): kbuild then
  // recompiles only what changed since the tree's last build. ccache with
  // CCACHE_BASEDIR=<tree> and CCACHE_NOHASHDIR covers the first build of a fresh tree.
  const std::string tree_id = sha256_text(source.dump());
  FileLock tree_lock(root / "locks" / ("tree-" + tree_id + ".lock"));
  fs::path work = root / "trees" / tree_id;
  fs::path src = prepare_build_tree(recipe, tree, work, options);

  apply_patches(recipe, src, source, options);
  const MadeKernel made = make_kernel(recipe, src, work, root, key, options);
  return store_source_build(recipe, src, made, source, material, key, root, entry, started, options);
}

}  // namespace abvm
