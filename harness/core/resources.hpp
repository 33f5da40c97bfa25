#pragma once
// Where abvm finds the data it ships with (report template, plot script, JSON schema, guest recipe
// and agent, kernel recipes with their fragments and patches, example configs), and where runs land.
// The one place that knows the install layout:
//
//   <prefix>/bin/abvm
//   <prefix>/share/abvm/{report,guests,kernels,configs}/...
//
// and that a binary in its build tree uses its source tree, which has the same four folders.
#include <filesystem>
#include <string_view>

namespace abvm {

// The environment variable that overrides data_dir().
inline constexpr std::string_view kDataDirVariable = "ABVM_DATA_DIR";

// The directory holding abvm's data, chosen by the first rule that applies:
//   1. $ABVM_DATA_DIR when set and not empty; an Error naming the variable if it does not hold
//      abvm's data (no report/template.html, guests/base.toml, kernels/ there).
//   2. the source tree, when the running binary lies inside the build tree it was built in (so the
//      tests and `build/abvm` read the files being edited);
//   3. <prefix>/share/abvm, the prefix being the parent of the directory of the running binary
//      (/proc/self/exe, symlinks resolved).
// Throws InfraError naming every place it looked when no rule finds the data. Absolute.
std::filesystem::path data_dir();

// data_dir() / relative, after checking that it exists; InfraError naming the missing file, the
// data directory and why that directory was chosen, when it does not.
std::filesystem::path resource(std::string_view relative);

// Where `abvm run` puts results directories by default: results/ under the current working
// directory (the repository's results/ when abvm runs from the repository's root).
std::filesystem::path default_results_root();

}  // namespace abvm
