#include "guest/domain_xml.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fmt/format.h>
#include <pugixml.hpp>
#include <sstream>

#include "config/rules.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "core/units.hpp"
#include "core/utf8.hpp"

namespace abvm {

std::string_view to_string(GuestOutcome::End end) {
  switch (end) {
    case GuestOutcome::End::finished: return "finished";
    case GuestOutcome::End::powered_off: return "powered_off";
    case GuestOutcome::End::crashed: return "crashed";
    case GuestOutcome::End::timeout: return "timeout";
    case GuestOutcome::End::infra_error: return "infra_error";
  }
  return "unknown";
}

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '+' || c == '-';
}

// XML 1.0 cannot carry most control characters at all (pugixml would write them raw and libvirt
// would refuse the document), and in a path or command line they are a mistake anyway. Bytes
// that are not UTF-8 (a Latin-1 file name, say) pugixml would also write raw.
void check_text(std::string_view field, std::string_view value) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      throw Error(fmt::format(
          "domain {}: control character 0x{:02x} at offset {} (\"{}\"); remove it from the {}", field, c,
          i, std::string(value.substr(0, 60)), field));
    }
  }
  if (const auto at = first_invalid_utf8(value); at != std::string_view::npos) {
    throw Error(fmt::format("domain {}: byte 0x{:02x} at offset {} is not UTF-8, which libvirt's XML cannot carry; "
                            "rename the file or directory (or fix the text) to use UTF-8",
                            field, static_cast<unsigned char>(value[at]), at));
  }
}

void check_path(std::string_view field, const std::filesystem::path& p) {
  check_text(field, p.native());
  if (!p.is_absolute()) {
    throw Error(fmt::format("domain {}: '{}' is not an absolute path; QEMU resolves relative paths "
                            "against its own directory, so give an absolute one",
                            field, p.native()));
  }
}

template <std::size_t N>
void check_one_of(std::string_view field, const std::string& value, const std::array<std::string_view, N>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw Error(fmt::format("virtio-blk {} '{}' is not one of: {}", field, value, fmt::join(allowed, ", ")));
}

// "vcpus = 300: must be 1..255": the same bounds the experiment loader enforces (config/rules.hpp).
void check_bounds(std::string_view field, std::int64_t value, rules::IntBounds bounds, std::string_view unit = "") {
  if (bounds.contains(value)) return;
  throw Error(fmt::format("{} = {}{}: must be {}..{}{}", field, value, unit, bounds.min, bounds.max, unit));
}

void validate_machine(const MachineOptions& m) {
  check_bounds("vcpus", m.vcpus, rules::vcpus);
  check_bounds("memory", m.memory_mib, rules::memory_mib, " MiB");
  if (m.vcpu_pins.empty()) return;
  if (static_cast<int>(m.vcpu_pins.size()) != m.vcpus) {
    throw Error(fmt::format("vcpu pinning lists {} host CPUs for {} vCPUs: give exactly one per vCPU",
                            m.vcpu_pins.size(), m.vcpus));
  }
  for (int cpu : m.vcpu_pins) {
    if (!rules::host_cpu.contains(cpu)) {
      throw Error(fmt::format("vcpu pinning: host CPU {} is out of range: must be {}..{}", cpu, rules::host_cpu.min,
                              rules::host_cpu.max));
    }
  }
}

// The loader's rules for <iotune> (config/rules.hpp), for specs that did not come from a file.
void validate_iotune(const IotuneOptions& t) {
  for (const IotuneField& f : kIotuneFields) {
    const auto& v = t.*f.member;
    const rules::IntBounds b = rules::iotune_bounds(f.unit);
    if (!v || (*v >= static_cast<std::uint64_t>(b.min) && *v <= static_cast<std::uint64_t>(b.max))) continue;
    const bool size = f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes;
    const auto shown = [&](std::int64_t x) {
      return size ? format_size(static_cast<std::uint64_t>(x)) : std::to_string(x);
    };
    throw Error(fmt::format("virtio-blk iotune {} = {}: must be {}..{} (leave it unset for no limit)", f.name, *v,
                            shown(b.min), shown(b.max)));
  }
  const auto c = rules::iotune_conflict(t);
  if (!c) return;
  using K = rules::IotuneConflict::Kind;
  const std::string_view why = [&]() -> std::string_view {
    switch (c->kind) {
      case K::total_and_one_way: return "libvirt takes a total limit or read and write limits, not both";
      case K::max_without_rate: return "a burst rate needs its rate limit";
      case K::max_below_rate: return "QEMU refuses a burst rate below its rate";
      case K::length_without_max: return "a burst length needs its burst rate";
      case K::burst_too_large: return "QEMU allows at most 1e15 per burst";
      case K::size_without_iops: return "an iops size needs an iops limit";
    }
    return "";
  }();
  const auto shown = [&](std::string_view name) {
    const auto v = rules::iotune_value(t, name);
    return v ? std::to_string(*v) : std::string("unset");
  };
  throw Error(fmt::format("virtio-blk iotune {} = {} with {} = {}: {}", c->key, shown(c->key), c->other,
                          shown(c->other), why));
}

void validate_disk(const VirtioBlkOptions& d) {
  check_one_of("cache", d.cache, rules::cache_modes);
  check_one_of("io", d.io, rules::io_modes);
  if (!rules::io_allowed_with_cache(d.io, d.cache)) {
    throw Error(fmt::format("virtio-blk io 'native' needs cache 'none' or 'directsync' (QEMU refuses "
                            "it with cache '{}'); use io 'threads' or 'io_uring' instead",
                            d.cache));
  }
  if (d.queues) check_bounds("virtio-blk queues", *d.queues, rules::virtqueues);
  validate_iotune(d.iotune);
  if (d.queue_size) {
    const int q = *d.queue_size;
    if (!rules::queue_size.contains(q) || !rules::is_power_of_two(q)) {
      throw Error(fmt::format("virtio-blk queue_size = {}: must be a power of two in {}..{}", q,
                              rules::queue_size.min, rules::queue_size.max));
    }
  }
}

void validate(const DomainSpec& s) {
  validate_domain_name(s.name);
  if (s.kernel.empty()) throw Error("domain kernel: no kernel image given");
  check_path("kernel", s.kernel);
  if (!s.initrd.empty()) check_path("initrd", s.initrd);
  check_text("kernel command line", s.cmdline);
  if (s.console_log.empty()) throw Error("domain console log: no path given for the serial console");
  check_path("console log", s.console_log);
  if (s.disks.size() > kMaxScratchDisks) {
    throw Error(fmt::format("{} scratch disks: a guest has at most {}", s.disks.size(), kMaxScratchDisks));
  }
  for (std::size_t i = 0; i < s.disks.size(); ++i) {
    const ScratchDisk& d = s.disks[i];
    if (d.path.empty()) throw Error(fmt::format("scratch disk {}: no image path given", i));
    check_path("scratch disk", d.path);
    check_text("disk serial", d.serial);
    // QEMU truncates the virtio-blk serial to 20 bytes; the guest would then not find its disk.
    if (d.serial.empty() || d.serial.size() > 20) {
      throw Error(fmt::format("disk serial '{}' must be 1-20 characters (QEMU's limit)", d.serial));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (s.disks[j].serial == d.serial) throw Error(fmt::format("disk serial '{}' is used twice", d.serial));
    }
    validate_disk(d.options);
  }

  if (!s.host_cpus.empty() && !rules::valid_cpu_set(s.host_cpus)) {
    throw Error(fmt::format("host CPU set '{}' is not CPU numbers and ranges such as \"0\" or \"2-3\"", s.host_cpus));
  }
  validate_machine(s.machine);
}

// Paths a host gave back (volume paths) reach the XML as they are: they get the same checks.
void validate(const HostFiles& f, const DomainSpec& s) {
  check_path("kernel", f.kernel);
  if (!f.initrd.empty()) check_path("initrd", f.initrd);
  if (f.disks.size() != s.disks.size()) {
    throw Error(fmt::format("domain scratch disks: {} host paths for {} disks", f.disks.size(), s.disks.size()));
  }
  for (const auto& d : f.disks) check_path("scratch disk", d);
  check_path("console log", f.console_log);
}

void text_child(pugi::xml_node parent, const char* name, const std::string& text) {
  parent.append_child(name).text().set(text.c_str());
}

// The i-th scratch disk as vda, vdb, ...
void append_scratch_disk(pugi::xml_node devices, const ScratchDisk& scratch, const std::filesystem::path& source,
                         std::size_t i) {
  const VirtioBlkOptions& d = scratch.options;
  auto disk = devices.append_child("disk");
  disk.append_attribute("type").set_value("file");
  disk.append_attribute("device").set_value("disk");
  // A modern-only virtio device on both sides: QEMU refuses iommu_platform on a transitional
  // (legacy-capable) device, and A and B must differ only in the option under test.
  disk.append_attribute("model").set_value("virtio-non-transitional");
  auto drv = disk.append_child("driver");
  drv.append_attribute("name").set_value("qemu");
  drv.append_attribute("type").set_value("raw");
  drv.append_attribute("cache").set_value(d.cache.c_str());
  drv.append_attribute("io").set_value(d.io.c_str());
  drv.append_attribute("iommu").set_value(d.iommu_platform ? "on" : "off");
  // QEMU's default for a write error is to pause the guest on ENOSPC, which abvm would see only
  // as a timeout: a scratch disk whose filesystem fills up must fail the guest's write instead.
  drv.append_attribute("error_policy").set_value("report");
  if (d.queues) drv.append_attribute("queues").set_value(*d.queues);
  if (d.queue_size) drv.append_attribute("queue_size").set_value(*d.queue_size);
  if (d.iothread) drv.append_attribute("iothread").set_value(1);
  disk.append_child("source").append_attribute("file").set_value(source.c_str());
  auto target = disk.append_child("target");
  const std::string dev = fmt::format("vd{}", static_cast<char>('a' + i));
  target.append_attribute("dev").set_value(dev.c_str());
  target.append_attribute("bus").set_value("virtio");
  // Where libvirt writes it (after <target>), its elements in libvirt's order (kIotuneFields).
  if (any_set(d.iotune)) {
    auto iotune = disk.append_child("iotune");
    for (const IotuneField& f : kIotuneFields) {
      if (const auto& v = d.iotune.*f.member) text_child(iotune, std::string(f.name).c_str(), std::to_string(*v));
    }
  }
  text_child(disk, "serial", scratch.serial);
}

// The serial console: a pty, the one serial type libvirt's QEMU driver opens as a console stream;
// QEMU also writes every byte to `log` (append off: a retry of the trial starts it afresh).
void add_serial_console(pugi::xml_node devices, const std::filesystem::path& log_file) {
  auto serial = devices.append_child("serial");
  serial.append_attribute("type").set_value("pty");
  auto log = serial.append_child("log");
  log.append_attribute("file").set_value(log_file.c_str());
  log.append_attribute("append").set_value("off");
  serial.append_child("target").append_attribute("port").set_value(0);
  auto console = devices.append_child("console");
  console.append_attribute("type").set_value("pty");
  auto ctarget = console.append_child("target");
  ctarget.append_attribute("type").set_value("serial");
  ctarget.append_attribute("port").set_value(0);
}

}  // namespace

void validate_domain_name(std::string_view name) {
  if (name.empty() || name.size() > 200) {
    throw Error(fmt::format("domain name '{}' must be 1-200 characters long", std::string(name.substr(0, 60))));
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i])) {
      auto c = static_cast<unsigned char>(name[i]);
      std::string shown = (c < 0x20 || c >= 0x7f) ? fmt::format("0x{:02x}", c) : fmt::format("'{}'", name[i]);
      throw Error(fmt::format("domain name '{}' contains {} at offset {}: use only letters, digits and . _ + -",
                              std::string(name), shown, i));
    }
  }
  if (name.front() == '-' || name.front() == '.') {
    throw Error(fmt::format("domain name '{}' must not start with '{}'", std::string(name), name.front()));
  }
}

std::string domain_name(std::string_view label, long serial) {
  std::string clean;
  for (char c : label) clean += name_char(c) ? c : '_';
  if (clean.size() > 120) clean.resize(120);
  return fmt::format("{}{}.{}-{}-{}", domain_name_prefix, static_cast<long>(::getpid()), boot_tag(), clean, serial);
}

std::optional<DomainOwner> domain_owner(std::string_view name) {
  if (!name.starts_with(domain_name_prefix)) return std::nullopt;
  name.remove_prefix(domain_name_prefix.size());
  const std::string_view owner = name.substr(0, name.find('-'));
  const std::string_view pid = owner.substr(0, owner.find('.'));
  const bool digits = pid.find_first_not_of("0123456789") == std::string_view::npos;
  if (pid.empty() || pid.size() > 9 || !digits) return std::nullopt;
  DomainOwner out{.pid = std::stol(std::string(pid)), .boot = ""};
  if (pid.size() < owner.size()) out.boot = std::string(owner.substr(pid.size() + 1));
  return out;
}

bool is_leftover_domain(std::string_view name, bool local_daemon, std::string_view this_boot,
                        const std::function<bool(long)>& alive) {
  const auto owner = domain_owner(name);
  if (!owner || owner->pid <= 0) return false;
  if (owner->boot.empty() ? !local_daemon : owner->boot != this_boot) return false;
  return !alive(owner->pid);
}

HostFiles local_host_files(const DomainSpec& spec) {
  HostFiles f{.kernel = spec.kernel, .initrd = spec.initrd, .disks = {}, .console_log = spec.console_log};
  for (const ScratchDisk& d : spec.disks) f.disks.push_back(d.path);
  return f;
}

std::string domain_xml(const DomainSpec& spec) { return domain_xml(spec, local_host_files(spec)); }

std::string domain_xml(const DomainSpec& spec, const HostFiles& files) {
  validate(spec);
  validate(files, spec);
  const bool kvm = spec.accelerator == Accelerator::kvm;
  const auto& m = spec.machine;

  pugi::xml_document doc;
  auto domain = doc.append_child("domain");
  domain.append_attribute("type").set_value(kvm ? "kvm" : "qemu");
  text_child(domain, "name", spec.name);
  auto memory = domain.append_child("memory");
  memory.append_attribute("unit").set_value("MiB");
  memory.text().set(m.memory_mib);
  auto vcpu = domain.append_child("vcpu");
  vcpu.append_attribute("placement").set_value("static");
  // The domain's default CPU set: libvirt pins the vCPUs and QEMU's emulator threads to it.
  if (!spec.host_cpus.empty()) vcpu.append_attribute("cpuset").set_value(spec.host_cpus.c_str());
  vcpu.text().set(m.vcpus);
  if (std::any_of(spec.disks.begin(), spec.disks.end(), [](const ScratchDisk& d) { return d.options.iothread; })) {
    domain.append_child("iothreads").text().set(1);
  }
  if (!m.vcpu_pins.empty()) {
    auto cputune = domain.append_child("cputune");
    for (std::size_t i = 0; i < m.vcpu_pins.size(); ++i) {
      auto pin = cputune.append_child("vcpupin");
      pin.append_attribute("vcpu").set_value(static_cast<unsigned>(i));
      pin.append_attribute("cpuset").set_value(m.vcpu_pins[i]);
    }
  }

  auto os = domain.append_child("os");
  auto type = os.append_child("type");
  type.append_attribute("arch").set_value("x86_64");
  type.append_attribute("machine").set_value("pc");
  type.text().set("hvm");
  text_child(os, "kernel", files.kernel.native());
  if (!files.initrd.empty()) text_child(os, "initrd", files.initrd.native());
  text_child(os, "cmdline", spec.cmdline);

  domain.append_child("features").append_child("acpi");
  // Under KVM the guest should see the host CPU (the kernel's code paths depend on its features);
  // TCG keeps QEMU's default model, which it emulates fastest.
  if (kvm) domain.append_child("cpu").append_attribute("mode").set_value("host-passthrough");
  domain.append_child("clock").append_attribute("offset").set_value("utc");
  text_child(domain, "on_poweroff", "destroy");
  text_child(domain, "on_reboot", "destroy");
  text_child(domain, "on_crash", "destroy");

  auto devices = domain.append_child("devices");
  for (std::size_t i = 0; i < spec.disks.size(); ++i) append_scratch_disk(devices, spec.disks[i], files.disks[i], i);

  add_serial_console(devices, files.console_log);
  // libvirt adds a USB controller to 'pc' machines unless told not to; the guest does not need it.
  auto usb = devices.append_child("controller");
  usb.append_attribute("type").set_value("usb");
  usb.append_attribute("model").set_value("none");
  devices.append_child("memballoon").append_attribute("model").set_value("none");

  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent | pugi::format_no_declaration);
  return out.str();
}

}  // namespace abvm
