#include <fmt/format.h>

#include "config/load_sections.hpp"

namespace abvm::loader {

void read_guest(KeyReader& r, Experiment& e, SharedSideValues& shared) {
  shared.machine.vcpus = r.get_int("guest.vcpus").value_or(shared.machine.vcpus);
  r.note("guest.vcpus", fmt::format("{}", shared.machine.vcpus));
  shared.machine.memory_mib = r.get_int("guest.memory_mib").value_or(shared.machine.memory_mib);
  r.note("guest.memory_mib", fmt::format("{}", shared.machine.memory_mib));
  shared.machine.vcpu_pins = r.get_ints("guest.vcpu_pins").value_or(shared.machine.vcpu_pins);
  r.note("guest.vcpu_pins", render_list(shared.machine.vcpu_pins));
  e.guest.image = r.get_string("guest.image").value_or(e.guest.image);
  r.note("guest.image", quote(e.guest.image));
  const std::string accel = r.get_string("guest.accelerator").value_or("auto");
  e.guest.accelerator = parse_accelerator(accel);
  r.note("guest.accelerator", quote(accel));
  shared.kernel = r.get_string("guest.kernel").value_or("debian-cloud");
  r.note("guest.kernel", quote(shared.kernel));
  shared.cmdline = r.get_string("guest.cmdline").value_or("");
  r.note("guest.cmdline", quote(shared.cmdline));
}

}  // namespace abvm::loader
