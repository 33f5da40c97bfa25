#pragma once
// What each side boots, prepared once per session before the first trial: the guest image, each
// side's kernel (built from its recipe or found in the cache), the kernel's virtio modules, and
// the identities recorded with the results (kernels.json, image.json).
//
// A seam of the run stage: the real preparer builds kernels (kernels/) and the image (guest/);
// tests of the runner hand it prepared files instead, so a whole run needs no kernel build.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "config/experiment.hpp"
#include "run/orchestrator.hpp"

namespace abvm {

struct PreparedGuests {
  std::filesystem::path base_image;   // the guest image (gzip cpio), see guest/image.hpp
  SideBoot a, b;                      // label, kernel, full command line, modules, machine, disk
  nlohmann::json kernels;             // kernels.json: per side label, recipe, release, identity
  nlohmann::json image;               // image.json: path, sha256, size

  const SideBoot& side(Side s) const { return s == Side::a ? a : b; }
};

class GuestPreparer {
 public:
  virtual ~GuestPreparer() = default;
  // Throws Error (a wrong recipe) or InfraError (a build that failed).
  virtual PreparedGuests prepare(const Experiment& experiment) = 0;
};

// The real one: guest image from guests/base.toml, kernels from kernels/ recipes (cached by
// content hash), progress lines through `say`.
class BuildingPreparer final : public GuestPreparer {
 public:
  explicit BuildingPreparer(std::function<void(const std::string&)> say) : say_(std::move(say)) {}
  PreparedGuests prepare(const Experiment& experiment) override;

 private:
  std::function<void(const std::string&)> say_;
};

// The whole kernel command line of a side: abvm's guest command line plus the side's own.
std::string guest_cmdline(const SideSpec& side);

// The SideBoot of a side whose kernel and modules are known (no expectation: nothing checked).
SideBoot side_boot(const SideSpec& side, std::filesystem::path kernel, std::string modules_archive);

// What a side's guests must report, given its built kernel: the side's command line, its
// device.iommu_platform as the negotiated VIRTIO_F_ACCESS_PLATFORM, the kernel's release and build
// (the identity's "version") and, when the kernel carries the seed's reporting patch ("abvm-report"
// in a patch name), the "DMA API in use" line (else its absence). The real preparer sets it.
SideExpectation side_expectation(const SideSpec& side, const nlohmann::json& identity, const std::string& release);

}  // namespace abvm
