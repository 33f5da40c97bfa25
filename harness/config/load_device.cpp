#include <fmt/format.h>

#include <algorithm>

#include "config/load_sections.hpp"
#include "config/rules.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace {

std::string render_iotune(const IotuneField& f, const std::optional<std::uint64_t>& value) {
  if (!value) return "unset";
  const bool size = f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes;
  return size ? quote(format_size(*value)) : std::to_string(*value);
}

// The combinations libvirt or QEMU refuse (rules::iotune_conflict), at the line of the key at
// fault. In a side's table a value may come from [device.iotune]; the message then says so.
void check_iotune(const KeyReader& r, const std::string& prefix, const IotuneOptions& t, const std::string& side_name) {
  const auto conflict = rules::iotune_conflict(t);
  if (!conflict) return;
  const auto where = [&](std::string_view name) {
    const std::string own = prefix + ".iotune." + std::string(name);
    return r.at(own) != nullptr ? own : "device.iotune." + std::string(name);
  };
  const auto inherited = [&](const std::string& path) {
    return path.starts_with(prefix + ".") ? "" : fmt::format(" (which {} inherits)", side_name);
  };
  const auto value = [&](std::string_view name) {
    const auto f = std::find_if(kIotuneFields.begin(), kIotuneFields.end(),
                                [&](const IotuneField& x) { return x.name == name; });
    return render_iotune(*f, t.*f->member);
  };
  const std::string key_path = where(conflict->key), other_path = where(conflict->other);
  const std::string key = fmt::format("'{}'{}", key_path, inherited(key_path));
  const std::string other = other_path + inherited(other_path);
  // A shared table's conflict is reported there, so a side's involves a key of its own.
  const std::size_t line = r.line_of(inherited(key_path).empty() ? key_path : other_path);
  using K = rules::IotuneConflict::Kind;
  std::string message;
  switch (conflict->kind) {
    case K::total_and_one_way:
      message = fmt::format("key {} cannot be set with {}: libvirt takes a total limit or read and write "
                            "limits, not both; remove one of them", key, other);
      break;
    case K::max_without_rate:
      message = fmt::format("key {} needs {}: a burst rate belongs to a rate limit; set {}, or remove {}", key,
                            other, conflict->other, conflict->key);
      break;
    case K::max_below_rate:
      message = fmt::format("key {} = {} is lower than {} = {}: QEMU refuses a burst rate below its rate; raise "
                            "it, or remove it (unset, QEMU lets a tenth of a second at the rate through at once)",
                            key, value(conflict->key), other, value(conflict->other));
      break;
    case K::length_without_max:
      message = fmt::format("key {} needs {}: it is how long that burst rate may last; set {}, or remove {}", key,
                            other, conflict->other, conflict->key);
      break;
    case K::burst_too_large:
      message = fmt::format("key {} = {} seconds at {} = {} is more than QEMU's limit of {} {} per burst: "
                            "shorten the burst or lower its rate", key, value(conflict->key), other,
                            value(conflict->other), rules::iotune_value_max,
                            conflict->key.find("_bytes_") != std::string_view::npos ? "bytes" : "requests");
      break;
    case K::size_without_iops:
      message = fmt::format("key {} needs an iops limit (total_iops_sec, read_iops_sec or write_iops_sec): it "
                            "says how many bytes count as one request; set one, or remove size_iops_sec", key);
      break;
  }
  r.fail(line, message);
}

}  // namespace

void read_device(KeyReader& r, const std::string& prefix, VirtioBlkOptions& device, const VirtioBlkOptions* shared,
                 const std::string& side_name) {
  const auto origin = [&](const std::string& key) {
    const std::string path = prefix + "." + key;
    if (shared == nullptr || r.at(path) != nullptr) return r.origin_of(path);
    return fmt::format("{} inherits device.{} ({})", side_name, key, r.origin_of("device." + key));
  };
  if (shared != nullptr) device = *shared;
  device.iommu_platform = r.get_bool(prefix + ".iommu_platform").value_or(device.iommu_platform);
  r.note(prefix + ".iommu_platform", render(device.iommu_platform), origin("iommu_platform"));
  if (auto q = r.get_int(prefix + ".queues")) device.queues = q;
  r.note(prefix + ".queues", render_optional(device.queues), origin("queues"));
  if (auto q = r.get_int(prefix + ".queue_size")) {
    if (!rules::is_power_of_two(*q)) {
      r.fail(r.line_of(prefix + ".queue_size"),
             fmt::format("key '{}.queue_size' = {} is not a power of two: use {}, {}, ... {}", prefix, *q,
                           rules::queue_size.min, 2 * rules::queue_size.min, rules::queue_size.max));
    }
    device.queue_size = q;
  }
  r.note(prefix + ".queue_size", render_optional(device.queue_size), origin("queue_size"));
  device.cache = r.get_string(prefix + ".cache").value_or(device.cache);
  r.note(prefix + ".cache", quote(device.cache), origin("cache"));
  device.io = r.get_string(prefix + ".io").value_or(device.io);
  r.note(prefix + ".io", quote(device.io), origin("io"));
  device.iothread = r.get_bool(prefix + ".iothread").value_or(device.iothread);
  r.note(prefix + ".iothread", render(device.iothread), origin("iothread"));
  for (const IotuneField& f : kIotuneFields) {
    const std::string key = "iotune." + std::string(f.name);
    const std::string path = prefix + "." + key;
    std::optional<std::uint64_t>& value = device.iotune.*f.member;
    if (f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes) {
      if (auto v = r.get_size(path)) value = *v;
    } else if (auto v = r.get_integer(path)) {
      value = static_cast<std::uint64_t>(*v);  // the key table's range starts at 1
    }
    r.note(path, render_iotune(f, value), origin(key));
  }
  check_iotune(r, prefix, device.iotune, side_name);
}

}  // namespace abvm::loader
