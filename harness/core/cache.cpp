#include "core/cache.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace abvm {

std::filesystem::path abvm_cache_dir() {
  // The XDG spec says relative values are invalid and must be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::filesystem::path(xdg) / "abvm";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return std::filesystem::path(home) / ".cache" / "abvm";
  }
  throw InfraError("cannot locate a cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path; "
                   "set XDG_CACHE_HOME to a writable directory");
}

}  // namespace abvm
