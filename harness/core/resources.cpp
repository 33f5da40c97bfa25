#include "core/resources.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

#include "core/error.hpp"

// Set for this file only (top CMakeLists.txt): a definition every file saw would make each build
// directory recompile everything instead of sharing ccache hits.
#ifndef ABVM_BUILD_DIR
#error "ABVM_BUILD_DIR must name the build directory"
#endif

namespace fs = std::filesystem;

namespace abvm {
namespace {

// What a directory must hold to count as abvm's data: enough to tell it from a wrong directory,
// not a full inventory (resource() reports any single missing file precisely).
constexpr std::array<std::string_view, 3> kMarkers = {"report/template.html", "guests/base.toml", "kernels"};

std::optional<std::string_view> first_missing(const fs::path& dir) {
  std::error_code ec;
  for (std::string_view m : kMarkers) {
    if (!fs::exists(dir / m, ec)) return m;
  }
  return std::nullopt;
}

struct Located {
  fs::path dir;
  std::string why;  // for messages: how this directory was chosen
};

// The running binary. The kernel appends " (deleted)" when the file was replaced while running
// (a rebuild); its directory is still the right one.
fs::path executable() {
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw InfraError(fmt::format("cannot read /proc/self/exe to locate abvm's data: {}; set {} to abvm's "
                                       "share/abvm directory", ec.message(), kDataDirVariable));
  constexpr std::string_view deleted = " (deleted)";
  if (exe.ends_with(deleted)) exe.resize(exe.size() - deleted.size());
  return exe;
}

bool inside(const fs::path& p, const fs::path& dir) {
  const fs::path rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

Located locate() {
  if (const char* env = std::getenv(std::string(kDataDirVariable).c_str()); env != nullptr && *env != '\0') {
    const fs::path dir = fs::absolute(env).lexically_normal();
    if (auto missing = first_missing(dir)) {
      throw Error(fmt::format("{}={} does not hold abvm's data (no {} there): point it at an installed "
                              "share/abvm directory or at abvm's source tree, or unset it",
                              kDataDirVariable, env, *missing));
    }
    return {dir, fmt::format("from {}", kDataDirVariable)};
  }
  const fs::path exe = executable();
  std::error_code ec;
  const fs::path build = fs::weakly_canonical(ABVM_BUILD_DIR, ec);
  if (!ec && inside(exe.parent_path(), build)) {
    const fs::path source = fs::path(ABVM_SOURCE_DIR).lexically_normal();
    if (auto missing = first_missing(source)) {
      throw InfraError(fmt::format("{} runs from its build tree {}, but its source tree {} has no {}; restore it, "
                                   "or set {} to a directory holding abvm's data",
                                   exe.string(), build.string(), source.string(), *missing, kDataDirVariable));
    }
    return {source, fmt::format("the source tree of the build tree {}", build.string())};
  }
  const fs::path installed = (exe.parent_path().parent_path() / "share" / "abvm").lexically_normal();
  if (auto missing = first_missing(installed)) {
    throw InfraError(fmt::format("cannot find abvm's data: {} has no {} ({} is not in its build tree {} either); "
                                 "reinstall abvm (cmake --install), or set {} to its share/abvm directory",
                                 installed.string(), *missing, exe.string(), ABVM_BUILD_DIR, kDataDirVariable));
  }
  return {installed, fmt::format("the installation of {}", exe.string())};
}

}  // namespace

fs::path data_dir() { return locate().dir; }

fs::path resource(std::string_view relative) {
  const Located at = locate();
  const fs::path p = at.dir / relative;
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    throw InfraError(fmt::format("abvm's {} is missing: {} does not exist (data directory {}, {}); reinstall "
                                 "abvm, or set {} to a complete data directory",
                                 relative, p.string(), at.dir.string(), at.why, kDataDirVariable));
  }
  return p;
}

fs::path default_results_root() { return fs::current_path() / "results"; }

}  // namespace abvm
