#include "run/prepare.hpp"

#include <fmt/format.h>

#include <map>

#include "guest/image.hpp"
#include "guest/modules.hpp"
#include "kernels/kernel.hpp"

namespace abvm {

std::string guest_cmdline(const SideSpec& side) {
  std::string c(kGuestKernelCmdline);
  if (!side.cmdline.empty()) c += " " + side.cmdline;
  return c;
}

SideBoot side_boot(const SideSpec& side, std::filesystem::path kernel, std::string modules_archive) {
  return {.label = side.label,
          .kernel = std::move(kernel),
          .cmdline = guest_cmdline(side),
          .modules_archive = std::move(modules_archive),
          .machine = side.machine,
          .disk = side.device};
}

SideExpectation side_expectation(const SideSpec& side, const nlohmann::json& identity, const std::string& release) {
  SideExpectation expect{.cmdline = guest_cmdline(side), .access_platform = side.device.iommu_platform};
  expect.release = release;
  expect.version = identity.value("version", "");
  bool reports = false;
  for (const auto& patch : identity.value("patches", nlohmann::json::array())) {
    reports = reports || patch.value("name", "").find("abvm-report") != std::string::npos;
  }
  expect.dma_api_reported = reports;
  return expect;
}

PreparedGuests BuildingPreparer::prepare(const Experiment& e) {
  PreparedGuests p;
  say_("guest image ...");
  const GuestImage image = build_guest_image();
  p.base_image = image.path;
  p.image = {{"path", image.path.string()},
             {"sha256", image.sha256},
             {"compressed_size", image.compressed_size},
             {"files", image.contents.size()}};
  // Both sides often share a recipe: build it once.
  std::map<std::string, std::pair<KernelArtifact, std::string>> built;
  p.kernels = nlohmann::json::object();
  for (Side s : kSides) {
    const SideSpec& side = e.side(s);
    if (!built.contains(side.kernel)) {
      say_(fmt::format("kernel '{}' ...", side.kernel));
      KernelArtifact k = build_kernel(load_kernel_recipe(side.kernel));
      std::string modules = k.modules_dir ? build_modules_archive(*k.modules_dir, kGuestModules) : std::string();
      built.emplace(side.kernel, std::pair{std::move(k), std::move(modules)});
    }
    const auto& [kernel, modules] = built.at(side.kernel);
    SideBoot& boot = s == Side::a ? p.a : p.b;
    boot = side_boot(side, kernel.image, modules);
    boot.expect = side_expectation(side, kernel.identity, kernel.release);
    p.kernels[to_string(s)] = {{"label", side.label},           {"recipe", side.kernel},
                               {"release", kernel.release},     {"image", kernel.image.string()},
                               {"cmdline", guest_cmdline(side)}, {"identity", kernel.identity}};
  }
  return p;
}

}  // namespace abvm
