#include "kernels/source_tree.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/process.hpp"
#include "kernels/cache_entry.hpp"

namespace fs = std::filesystem;

namespace abvm {

std::vector<std::string> paths_touched_by_patch(std::string_view text) {
  std::vector<std::string> out;
  auto add = [&](std::string path, bool strip_one) {
    if (path.size() >= 2 && path.front() == '"' && path.back() == '"') path = path.substr(1, path.size() - 2);
    if (path == "/dev/null" || path.empty()) return;
    if (strip_one) {
      const auto slash = path.find('/');
      if (slash == std::string::npos) return;  // patch -p1 would not use it either
      path = path.substr(slash + 1);
    }
    while (path.starts_with("./")) path = path.substr(2);
    // patch refuses absolute names and names with "..": such a file is never touched.
    const fs::path p(path);
    if (p.is_absolute() || std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; })) return;
    if (!path.empty() && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  };
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  // A file header is a "--- " line directly followed by a "+++ " line; either may end in a tab
  // and a timestamp. Requiring the pair keeps a removed line that reads "-- x" out.
  auto header_path = [](std::string_view line) {
    line.remove_prefix(4);
    return std::string(line.substr(0, line.find('\t')));
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("--- ") && i + 1 < lines.size() && lines[i + 1].starts_with("+++ ")) {
      add(header_path(lines[i]), true);
      add(header_path(lines[i + 1]), true);
      ++i;
      continue;
    }
    for (std::string_view head : {"rename from ", "rename to ", "copy from ", "copy to "}) {
      if (lines[i].starts_with(head)) add(std::string(lines[i].substr(head.size())), false);
    }
  }
  return out;
}

namespace kernel_build {
namespace {

std::string describe_source(const nlohmann::json& source) {
  std::string type = source.at("type");
  if (type == "linux-source") return fmt::format("{} {}", source.at("package").get<std::string>(), source.at("version").get<std::string>());
  if (type == "git") return "git commit " + source.at("commit").get<std::string>();
  return "tarball sha256 " + source.at("sha256").get<std::string>().substr(0, 12);
}

fs::path source_archive(const KernelRecipe& r) {
  if (r.source == KernelSource::linux_source) return fs::path("/usr/src") / (r.package + ".tar.xz");
  return r.path;
}

}  // namespace

nlohmann::json source_identity(const KernelRecipe& r) {
  switch (r.source) {
    case KernelSource::linux_source: {
      ProcessResult q = run_process({"dpkg-query", "-W", "-f=${Status} ${Version}", r.package});
      if (q.exit_code != 0 || q.out.rfind("install ok installed ", 0) != 0) {
        throw Error(located(r.file.string(), 0,
                            fmt::format("Debian package {} is not installed: install it with `apt-get install {}` "
                                        "(harness/setup.sh lists it)",
                                        r.package, r.package)));
      }
      return {{"type", "linux-source"}, {"package", r.package}, {"version", q.out.substr(q.out.rfind(' ') + 1)}};
    }
    case KernelSource::tarball:
      if (!fs::is_regular_file(r.path)) {
        throw Error(located(r.file.string(), 0, fmt::format("source tarball {} does not exist", r.path.string())));
      }
      return {{"type", "tarball"}, {"sha256", sha256_file(r.path)}};
    case KernelSource::git: {
      const std::string commit = r.commit.empty() ? "HEAD" : r.commit;
      ProcessResult head = run_process({"git", "-C", r.path.string(), "rev-parse", "--verify", "--end-of-options",
                                        commit + "^{commit}"});
      if (head.exit_code != 0) {
        throw Error(located(r.file.string(), 0,
                            fmt::format("{} has no commit '{}': {}", r.path.string(), commit, tail_lines(head.err, 1))));
      }
      // A named commit comes from the object store, whatever the work tree holds; HEAD is the
      // work tree's, which must then be what is committed.
      std::string dirty = r.commit.empty() ? run_checked({"git", "-C", r.path.string(), "status", "--porcelain",
                                                          "--untracked-files=no"})
                                           : "";
      if (!dirty.empty()) {
        throw Error(located(r.file.string(), 0,
                            fmt::format("git tree {} has uncommitted changes: abvm builds its HEAD commit, so commit "
                                        "them (or put them in the recipe's patch series)",
                                        r.path.string())));
      }
      return {{"type", "git"}, {"commit", first_word(head.out)}};
    }
    case KernelSource::debian_package:
      break;
  }
  throw Error("internal: source_identity called for a Debian package recipe");
}

// The pristine tree under <root>/src/<sha256 of the source identity>/: unpacked once, never
// modified (builds copy it), returned as the single top-level directory of the archive.
fs::path unpacked_source(const KernelRecipe& r, const nlohmann::json& source, const fs::path& root,
                         const KernelBuildOptions& options) {
  std::string id = sha256_text(source.dump());
  fs::path dir = root / "src" / id;
  auto top = [&](const fs::path& d) -> fs::path {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(d)) entries.push_back(e.path());
    if (entries.size() != 1 || !fs::is_directory(entries[0])) {
      throw Error(located(r.file.string(), 0,
                          fmt::format("the kernel source unpacked into {} entries in {}, expected one top-level "
                                      "directory",
                                      entries.size(), d.string())));
    }
    if (!fs::exists(entries[0] / "Makefile") || !fs::exists(entries[0] / "Kconfig")) {
      throw Error(located(r.file.string(), 0,
                          fmt::format("{} is not a kernel source tree (no top-level Makefile and Kconfig)",
                                      entries[0].string())));
    }
    return entries[0];
  };
  if (fs::is_directory(dir)) return top(dir);
  FileLock lock(root / "locks" / ("src-" + id + ".lock"));
  if (fs::is_directory(dir)) return top(dir);
  TempDir tmp(root / "src" / ("tmp-" + id));
  if (r.source == KernelSource::git) {
    say(options, fmt::format("{}: exporting {} at {}", r.name, r.path.string(), source.at("commit").get<std::string>()));
    fs::path tar = tmp.path() / "source.tar";
    run_checked({"git", "-C", r.path.string(), "archive", "--format=tar", "--prefix=linux/", "-o", tar.string(),
                 source.at("commit").get<std::string>()});
    run_checked({"tar", "-xf", tar.string(), "-C", tmp.path().string()});
    fs::remove(tar);
  } else {
    fs::path archive = source_archive(r);
    if (!fs::is_regular_file(archive)) {
      throw Error(located(r.file.string(), 0, fmt::format("kernel source {} does not exist", archive.string())));
    }
    say(options, fmt::format("{}: unpacking {}", r.name, archive.string()));
    ProcessResult x = run_process({"tar", "-xf", archive.string(), "-C", tmp.path().string()});
    if (x.exit_code != 0) {
      throw Error(located(r.file.string(), 0, fmt::format("cannot unpack {}: {}", archive.string(), tail_lines(x.err, 3))));
    }
  }
  top(tmp.path());
  fs::rename(tmp.path(), dir);
  tmp.release();
  return top(dir);
}

namespace {

// Puts `rel` (a path a patch touched) back as it is in the pristine tree, or removes it when the
// pristine tree has no such file. The copy gets a new mtime, so make rebuilds what depends on it.
void restore_from_pristine(const fs::path& pristine, const fs::path& src, const std::string& rel) {
  const fs::path p(rel);
  if (p.empty() || p.is_absolute() ||
      std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".." || part == "."; })) {
    throw Error(fmt::format("unsafe path {} in the build tree's record", rel));
  }
  std::error_code ec;
  const fs::path from = pristine / p, to = src / p;
  const auto from_status = fs::symlink_status(from, ec);
  if (fs::is_directory(from_status)) return;
  fs::remove(to, ec);  // a file or symlink; a directory a patch made stays (it holds no source)
  if (fs::is_symlink(from_status)) {
    fs::create_directories(to.parent_path());
    fs::copy_symlink(from, to);
  } else if (fs::is_regular_file(from_status)) {
    fs::create_directories(to.parent_path());
    fs::copy_file(from, to);
  }
}

}  // namespace

// The build tree <dir>/linux for a build of `recipe`: the tree of the previous build in <dir>
// with the files that build's patches touched restored from the pristine tree, or a fresh copy
// of the pristine tree. The paths this build's patches will touch are written down before any
// is applied, so that a build killed halfway still leaves a tree the next one can restore.
fs::path prepare_build_tree(const KernelRecipe& recipe, const fs::path& pristine, const fs::path& dir,
                            const KernelBuildOptions& options) {
  const fs::path src = dir / "linux";
  const fs::path record = dir / "patched-paths.json";
  std::error_code ec;
  bool reused = false;
  if (fs::is_regular_file(src / "Makefile", ec) && fs::is_regular_file(record, ec)) {
    try {
      const auto touched = JsonDocument::read(record).root().as<std::vector<std::string>>();
      for (const auto& rel : touched) restore_from_pristine(pristine, src, rel);
      reused = true;
      say(options, fmt::format("{}: reusing the build tree {} ({} patched file(s) restored)", recipe.name,
                               src.string(), touched.size()));
    } catch (const std::exception& e) {
      say(options, fmt::format("{}: the build tree {} cannot be restored ({}); copying it afresh", recipe.name,
                               src.string(), e.what()));
    }
  }
  if (!reused) {
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    say(options, fmt::format("{}: copying the source tree to {}", recipe.name, src.string()));
    run_checked({"cp", "-a", "--reflink=auto", pristine.string(), src.string()});
  }
  nlohmann::json touched = nlohmann::json::array();
  for (const auto& patch : recipe.patches) {
    for (auto& rel : paths_touched_by_patch(read_file(patch.path))) {
      if (std::find(touched.begin(), touched.end(), rel) == touched.end()) touched.push_back(std::move(rel));
    }
  }
  write_file_atomic(record, touched.dump() + "\n");
  return src;
}

// Applies the recipe's patch series to the build tree, in order.
void apply_patches(const KernelRecipe& recipe, const fs::path& src, const nlohmann::json& source,
                   const KernelBuildOptions& options) {
  for (std::size_t i = 0; i < recipe.patches.size(); ++i) {
    const KernelPatch& patch = recipe.patches[i];
    say(options, fmt::format("{}: applying {}", recipe.name, patch.name));
    ProcessResult r = run_process({"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i",
                                   patch.path.string()},
                                  {.cwd = src, .extra_env = {"LC_ALL=C"}});
    if (r.exit_code != 0) {
      throw Error(located(recipe.series->string(), 0,
                          fmt::format("patch {} of {} ({}) does not apply to {}:\n{}{}Refresh it against this "
                                      "source or remove it from the series.",
                                      i + 1, recipe.patches.size(), patch.path.string(), describe_source(source),
                                      r.out, r.err)));
    }
  }
}

}  // namespace kernel_build
}  // namespace abvm
