#pragma once
// Where abvm keeps what it builds once and reuses (guest images, static tools, kernels):
// outside the repository, keyed by content hashes, safe to delete at any time.
#include <filesystem>

namespace abvm {

// $XDG_CACHE_HOME/abvm if XDG_CACHE_HOME is set and absolute, else $HOME/.cache/abvm.
// Does not create the directory. Throws InfraError when neither variable is usable.
std::filesystem::path abvm_cache_dir();

}  // namespace abvm
