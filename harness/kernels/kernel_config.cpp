// The check of a built kernel's final .config against what its recipe's fragments asked for.
#include <fmt/format.h>

#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "kernels/kernel.hpp"

namespace fs = std::filesystem;

namespace abvm {
namespace {

// Options every abvm guest kernel built from source must have built in: the guest boots an
// initramfs without modules and finds its disk through virtio-pci.
const std::vector<std::string> kRequiredBuiltIn = {"CONFIG_VIRTIO", "CONFIG_VIRTIO_PCI", "CONFIG_VIRTIO_BLK",
                                                   "CONFIG_BLK_DEV_INITRD"};

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

}  // namespace

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

}  // namespace abvm
