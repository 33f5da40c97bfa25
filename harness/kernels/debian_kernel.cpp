// Debian packaged kernels: a metapackage resolved to its linux-image-<release>, downloaded with
// apt-get, unpacked and depmod'ed into the cache.
#include <fmt/format.h>

#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "kernels/cache_entry.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;

namespace abvm {
using namespace kernel_build;
namespace {

// Bumped when the layout of a cache entry or the build procedure changes, so that old
// entries are never mistaken for new ones.
constexpr int kCacheFormat = 1;

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

std::string debian_key(const DebianPackage& p) {
  return sha256_text(
      nlohmann::json{{"format", kCacheFormat}, {"source", "debian-package"}, {"package", p.name}, {"version", p.version}}
          .dump());
}

}  // namespace

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

std::string kernel_build::debian_kernel_cache_key(const std::string& package) {
  return debian_key(resolve_kernel_package(package));
}

}  // namespace abvm
