#include "kernels/kernel.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <future>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <sstream>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"

namespace fs = std::filesystem;

namespace abvm {
namespace {

// Bumped when the layout of a cache entry or the build procedure changes, so that old
// entries are never mistaken for new ones.
constexpr int kCacheFormat = 1;
// Source builds: 2 since they are built in the kept build tree (trees/<source>/linux), whose
// path the image records, so a format-1 image differs from a format-2 one of the same recipe.
constexpr int kSourceBuildFormat = 2;

// Options every abvm guest kernel built from source must have built in: the guest boots an
// initramfs without modules and finds its disk through virtio-pci.
const std::vector<std::string> kRequiredBuiltIn = {"CONFIG_VIRTIO", "CONFIG_VIRTIO_PCI", "CONFIG_VIRTIO_BLK",
                                                   "CONFIG_BLK_DEV_INITRD"};

void say(const KernelBuildOptions& options, std::string_view line) {
  if (options.progress) {
    options.progress(line);
  } else {
    std::cerr << "abvm: kernel: " << line << '\n';
  }
}

fs::path cache_root(const KernelBuildOptions& options) {
  return options.cache_dir ? *options.cache_dir : abvm_cache_dir() / "kernels";
}

std::string first_word(const std::string& s) { return s.substr(0, s.find_first_of(" \t\n")); }

std::string sha256_text(const std::string& text) {
  return first_word(run_checked({"sha256sum"}, {.stdin_data = text}));
}

std::string sha256_file(const fs::path& path) { return first_word(run_checked({"sha256sum", path.string()})); }

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string tail_lines(const std::string& text, std::size_t n) {
  std::size_t pos = text.size();
  while (pos > 0 && text[pos - 1] == '\n') --pos;
  std::size_t end = pos;
  for (std::size_t i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  std::string out = text.substr(pos, end - pos);
  if (!out.empty() && out[0] == '\n') out.erase(0, 1);
  return out;
}

// Serialises concurrent abvm processes building the same cache entry (flock: released by
// the kernel when the process dies, so a killed build never leaves a stale lock).
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fs::create_directories(path.parent_path());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InfraError(fmt::format("{}: cannot open lock file: {}", path.string(), std::strerror(errno)));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw InfraError(fmt::format("{}: flock: {}", path.string(), std::strerror(errno)));
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// A directory removed on scope exit unless released (failed builds leave nothing behind).
class TempDir {
 public:
  explicit TempDir(fs::path path) : path_(std::move(path)) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::create_directories(path_);
  }
  ~TempDir() {
    if (!released_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  fs::path path_;
  bool released_ = false;
};

// The version string a bzImage carries in its setup header (Documentation/x86/boot.rst:
// kernel_version at 0x20e is an offset from 0x200 to a NUL-terminated string), e.g.
// "6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian ...".
std::string bzimage_version(const fs::path& image) {
  std::string data = read_file(image);
  if (data.size() < 0x210 || data.compare(0x202, 4, "HdrS") != 0) {
    throw Error(fmt::format("{}: not an x86 bzImage (no HdrS setup header)", image.string()));
  }
  auto offset = static_cast<std::size_t>(static_cast<unsigned char>(data[0x20e]) |
                                         (static_cast<unsigned char>(data[0x20f]) << 8)) + 0x200;
  if (offset >= data.size()) throw Error(fmt::format("{}: bzImage version offset out of range", image.string()));
  return std::string(data.c_str() + offset);
}

// ---- Debian packages --------------------------------------------------------------------

struct DebianPackage {
  std::string name;
  std::string version;
  std::string depends;
};

DebianPackage apt_show(const std::string& package) {
  ProcessResult r = run_process({"apt-cache", "show", "--no-all-versions", package}, {.extra_env = {"LC_ALL=C"}});
  if (r.exit_code != 0 || r.out.find("Package:") == std::string::npos) {
    throw Error(fmt::format("Debian package '{}' not found by apt-cache{}: check the name (apt-cache search "
                            "linux-image) and run apt-get update",
                            package, r.err.empty() ? "" : " (" + tail_lines(r.err, 1) + ")"));
  }
  DebianPackage p;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line) && !line.empty()) {
    auto field = [&](std::string_view key) -> std::optional<std::string> {
      if (line.rfind(key, 0) == 0) return line.substr(key.size());
      return std::nullopt;
    };
    if (auto v = field("Package: ")) p.name = *v;
    if (auto v = field("Version: ")) p.version = *v;
    if (auto v = field("Depends: ")) p.depends = *v;
  }
  return p;
}

bool is_concrete_image(const std::string& name) {
  constexpr std::string_view prefix = "linux-image-";
  return name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
         std::isdigit(static_cast<unsigned char>(name[prefix.size()]));
}

// linux-image-cloud-amd64 -> linux-image-6.1.0-57-cloud-amd64 (the metapackage's only
// linux-image-<digit> dependency); a concrete package resolves to itself.
DebianPackage resolve_kernel_package(const std::string& package) {
  DebianPackage p = apt_show(package);
  if (is_concrete_image(p.name)) return p;
  std::istringstream deps(p.depends);
  std::string dep;
  while (std::getline(deps, dep, ',')) {
    dep.erase(0, dep.find_first_not_of(' '));
    std::string name = first_word(dep);
    if (is_concrete_image(name)) return apt_show(name);
  }
  throw Error(fmt::format("Debian package '{}' is neither a kernel image (linux-image-<version>-<flavour>) nor "
                          "a metapackage depending on one (Depends: {})",
                          package, p.depends));
}

std::optional<KernelArtifact> load_cached(const fs::path& entry) {
  fs::path identity_file = entry / "identity.json";
  if (!fs::exists(identity_file)) return std::nullopt;
  nlohmann::json id = nlohmann::json::parse(read_file(identity_file));
  KernelArtifact a;
  a.image = entry / id.at("image").get<std::string>();
  if (id.contains("modules_dir")) a.modules_dir = entry / id.at("modules_dir").get<std::string>();
  a.release = id.at("release").get<std::string>();
  a.recipe = id.at("recipe").get<std::string>();
  a.identity = id;
  a.cache_hit = true;
  return a;
}

// ---- source builds ------------------------------------------------------------------------

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

// Parses `CONFIG_X=value` and `# CONFIG_X is not set` lines; value "n" for the latter.
std::map<std::string, std::string> parse_config(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CONFIG_", 0) == 0) {
      auto eq = line.find('=');
      if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    } else if (line.rfind("# CONFIG_", 0) == 0 && line.size() > 13 &&
               line.compare(line.size() - 11, 11, " is not set") == 0) {
      out[line.substr(2, line.size() - 13)] = "n";
    }
  }
  return out;
}

std::string describe_setting(const std::string& option, const std::map<std::string, std::string>& config) {
  auto it = config.find(option);
  if (it == config.end() || it->second == "n") return fmt::format("# {} is not set", option);
  return option + "=" + it->second;
}

struct FragmentSetting {
  fs::path file;
  std::size_t line = 0;
  std::string value;  // "y", "m", "n", or the literal value
};

// What the fragments ask for; a later fragment overrides an earlier one, as in Kconfig.
std::map<std::string, FragmentSetting> fragment_settings(const std::vector<fs::path>& fragments) {
  std::map<std::string, FragmentSetting> out;
  for (const auto& f : fragments) {
    std::istringstream in(read_file(f));
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      auto one = parse_config(line);
      for (auto& [k, v] : one) out[k] = {f, n, v};
    }
  }
  return out;
}

std::string debian_key(const DebianPackage& p) {
  return sha256_text(
      nlohmann::json{{"format", kCacheFormat}, {"source", "debian-package"}, {"package", p.name}, {"version", p.version}}
          .dump());
}

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
      const auto touched = nlohmann::json::parse(read_file(record));
      for (const auto& rel : touched) restore_from_pristine(pristine, src, rel.get<std::string>());
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

}  // namespace

std::string file_sha256(const fs::path& path) { return sha256_file(path); }

std::string text_sha256(const std::string& text) { return sha256_text(text); }

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

void check_kernel_config(const std::vector<fs::path>& fragments, const std::string& config_text,
                         const fs::path& recipe_file) {
  auto config = parse_config(config_text);
  auto wanted = fragment_settings(fragments);
  for (const auto& [option, want] : wanted) {
    std::string have = config.count(option) ? config.at(option) : "n";
    if (have == want.value) continue;
    if (want.value == "n" && have != "y" && have != "m") continue;
    throw Error(located(want.file.string(), want.line,
                        fmt::format("{} was dropped by `make olddefconfig` (the final .config has `{}`): a "
                                    "dependency is missing; enable it in the fragment",
                                    want.value == "n" ? "# " + option + " is not set" : option + "=" + want.value,
                                    describe_setting(option, config))));
  }
  for (const auto& option : kRequiredBuiltIn) {
    if (config.count(option) && config.at(option) == "y") continue;
    std::string why = fmt::format("the kernel's .config has `{}`, but abvm guests boot an initramfs without "
                                  "modules and need {}=y: fix the fragment",
                                  describe_setting(option, config), option);
    if (auto it = wanted.find(option); it != wanted.end()) {
      throw Error(located(it->second.file.string(), it->second.line, why));
    }
    throw Error(located(recipe_file.string(), 0, why));
  }
}

std::string_view to_string(KernelSource source) {
  switch (source) {
    case KernelSource::debian_package: return "debian-package";
    case KernelSource::linux_source: return "linux-source";
    case KernelSource::tarball: return "tarball";
    case KernelSource::git: return "git";
  }
  return "?";
}

KernelArtifact fetch_debian_kernel(const std::string& package, const KernelBuildOptions& options) {
  DebianPackage p = resolve_kernel_package(package);
  std::string key = debian_key(p);
  fs::path root = cache_root(options);
  fs::path entry = root / key;
  if (auto hit = load_cached(entry)) {
    say(options, fmt::format("{} {}: cached in {}", p.name, p.version, entry.string()));
    return *hit;
  }
  FileLock lock(root / "locks" / (key + ".lock"));
  if (auto hit = load_cached(entry)) return *hit;  // another process finished it meanwhile

  say(options, fmt::format("downloading {} {} (for {})", p.name, p.version, package));
  TempDir tmp(root / ("tmp-" + key));
  run_checked({"apt-get", "download", "-q", p.name + "=" + p.version}, {.cwd = tmp.path()});
  fs::path deb;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    if (e.path().extension() == ".deb") deb = e.path();
  }
  if (deb.empty()) throw InfraError(fmt::format("apt-get download {} produced no .deb in {}", p.name, tmp.path().string()));
  std::string deb_sha256 = sha256_file(deb);
  run_checked({"dpkg-deb", "-x", deb.string(), (tmp.path() / "root").string()});
  fs::remove(deb);

  fs::path boot = tmp.path() / "root" / "boot";
  std::string release;
  if (fs::is_directory(boot)) {
    for (const auto& e : fs::directory_iterator(boot)) {
      std::string name = e.path().filename().string();
      if (name.rfind("vmlinuz-", 0) == 0) release = name.substr(8);
    }
  }
  if (release.empty()) throw Error(fmt::format("Debian package {} contains no boot/vmlinuz-*: not a kernel image", p.name));
  fs::path image = fs::path("root") / "boot" / ("vmlinuz-" + release);
  fs::path modules = fs::path("root") / "lib" / "modules" / release;
  if (!fs::is_directory(tmp.path() / modules)) {
    throw Error(fmt::format("Debian package {} has no lib/modules/{}/", p.name, release));
  }
  fs::path config = fs::path("root") / "boot" / ("config-" + release);
  // modules.dep is generated at install time (the package's postinst runs depmod): the
  // image worker resolves module dependencies from it, so make it here the same way.
  run_checked({"depmod", "-b", (tmp.path() / "root").string(), release});

  nlohmann::json id = {
      {"format", kCacheFormat},
      {"recipe", package},
      {"source", {{"type", "debian-package"}, {"package", p.name}, {"version", p.version}, {"requested", package},
                  {"deb_sha256", deb_sha256}}},
      {"release", release},
      {"version", bzimage_version(tmp.path() / image)},
      {"image", image.string()},
      {"modules_dir", modules.string()},
      {"image_sha256", sha256_file(tmp.path() / image)},
      {"config_sha256", fs::exists(tmp.path() / config) ? sha256_file(tmp.path() / config) : ""},
      {"patches", nlohmann::json::array()},
      {"cache_key", key},
      {"built_at", utc_now()},
  };
  write_file_atomic(tmp.path() / "identity.json", id.dump(2) + "\n");
  fs::rename(tmp.path(), entry);
  tmp.release();
  say(options, fmt::format("{} {} -> {}", p.name, p.version, entry.string()));
  auto a = load_cached(entry);
  a->cache_hit = false;
  return *a;
}

std::string kernel_cache_key(const KernelRecipe& recipe) {
  if (recipe.source == KernelSource::debian_package) {
    DebianPackage p = resolve_kernel_package(recipe.package);
    return debian_key(p);
  }
  return sha256_text(key_material(recipe, source_identity(recipe)).dump());
}

namespace {

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
