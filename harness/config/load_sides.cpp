#include <fmt/format.h>

#include "config/load_sections.hpp"
#include "config/rules.hpp"

namespace abvm::loader {

void read_side(KeyReader& r, const SharedSideValues& shared, const LoadOptions& options, Side id, SideSpec& side) {
  const std::string p = fmt::format("sides.{}", to_string(id));
  const std::string side_name = fmt::format("side {}", to_string(id));
  const auto inherited = [&](const std::string& key, const std::string& shared_key) {
    if (r.at(p + "." + key) != nullptr) return r.origin_of(p + "." + key);
    return fmt::format("{} inherits {} ({})", side_name, shared_key, r.origin_of(shared_key));
  };
  side.label = r.get_string(p + ".label").value_or(to_string(id));
  r.note(p + ".label", quote(side.label));
  side.kernel = r.get_string(p + ".kernel").value_or(shared.kernel);
  r.note(p + ".kernel", quote(side.kernel), inherited("kernel", "guest.kernel"));
  if (side.kernel.empty()) {
    r.fail(r.line_of(p + ".kernel"), fmt::format("key '{}.kernel' is empty: name a kernel recipe", p));
  }
  if (options.kernel_exists && !options.kernel_exists(side.kernel)) {
    const std::string key = r.at(p + ".kernel") != nullptr ? p + ".kernel" : "guest.kernel";
    r.fail(r.line_of(key), fmt::format("key '{}' = {}: no such kernel recipe or file: see kernels/ for the "
                                       "recipes, or give a path to a kernel image", key, quote(side.kernel)));
  }
  side.cmdline = r.get_string(p + ".cmdline").value_or(shared.cmdline);
  const std::string append = r.get_string(p + ".cmdline_append").value_or("");
  std::string cmdline_origin = inherited("cmdline", "guest.cmdline");
  if (!append.empty()) {
    side.cmdline = side.cmdline.empty() ? append : side.cmdline + " " + append;
    cmdline_origin += fmt::format(" + {}.cmdline_append ({})", p, r.origin_of(p + ".cmdline_append"));
  }
  r.note(p + ".cmdline", quote(side.cmdline), cmdline_origin);
  r.note(p + ".cmdline_append", quote(append));

  side.machine = shared.machine;
  if (auto v = r.get_int(p + ".guest.vcpus")) side.machine.vcpus = *v;
  r.note(p + ".guest.vcpus", fmt::format("{}", side.machine.vcpus), inherited("guest.vcpus", "guest.vcpus"));
  if (auto v = r.get_int(p + ".guest.memory_mib")) side.machine.memory_mib = *v;
  r.note(p + ".guest.memory_mib", fmt::format("{}", side.machine.memory_mib),
         inherited("guest.memory_mib", "guest.memory_mib"));
  if (auto v = r.get_ints(p + ".guest.vcpu_pins")) side.machine.vcpu_pins = *v;
  r.note(p + ".guest.vcpu_pins", render_list(side.machine.vcpu_pins),
         inherited("guest.vcpu_pins", "guest.vcpu_pins"));
  if (!side.machine.vcpu_pins.empty() &&
      side.machine.vcpu_pins.size() != static_cast<std::size_t>(side.machine.vcpus)) {
    const std::string key = r.at(p + ".guest.vcpu_pins") != nullptr ? p + ".guest.vcpu_pins" : "guest.vcpu_pins";
    r.fail(r.line_of(key), fmt::format("key '{}' has {} CPUs for {} vCPUs on {}: give one host CPU per vCPU",
                                       key, side.machine.vcpu_pins.size(), side.machine.vcpus, side_name));
  }

  read_device(r, p + ".device", side.device, &shared.device, side_name);
  if (!rules::io_allowed_with_cache(side.device.io, side.device.cache)) {
    const std::string key = r.at(p + ".device.io") != nullptr     ? p + ".device.io"
                            : r.at(p + ".device.cache") != nullptr ? p + ".device.cache"
                            : r.at("device.cache") != nullptr      ? "device.cache"
                                                                   : "device.io";
    r.fail(r.line_of(key), fmt::format("{}: device.io = \"native\" needs device.cache = \"none\" or \"directsync\" "
                                       "(QEMU's native AIO opens the disk with O_DIRECT): change one of them",
                                       side_name));
  }
}

void check_sides(const KeyReader& r, const Experiment& e) {
  const bool allow = r.get_bool("schedule.allow_identical_sides").value_or(false);
  if (e.a.label == e.b.label) {
    r.fail(r.line_of(r.at("sides.B.label") != nullptr ? "sides.B.label" : "sides.A.label"),
           fmt::format("sides A and B have the same label {}: give them different labels (reports name the sides "
                       "by them)", quote(e.a.label)));
  }
  SideSpec a = e.a;
  a.label = e.b.label;
  if (a == e.b && !allow) {
    r.fail(r.line_of("sides.B"),
           "sides A and B are identical (same kernel, command line, device and guest options): set what B "
           "changes in [sides.B], or set schedule.allow_identical_sides = true for an A/A run");
  }
}

}  // namespace abvm::loader
