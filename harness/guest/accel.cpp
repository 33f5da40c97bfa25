#include "guest/accel.hpp"

#include <fmt/format.h>
#include <map>
#include <mutex>

#include "guest/domain_xml.hpp"

namespace abvm {
namespace {

std::mutex cache_mutex;
std::map<std::string, AccelChoice>& cache() {
  static std::map<std::string, AccelChoice> c;
  return c;
}

}  // namespace


AccelChoice choose_accelerator(GuestDriver& driver, const AccelProbe& probe) {
  const std::string host = driver.describe();
  {
    std::lock_guard lock(cache_mutex);
    auto it = cache().find(host);
    if (it != cache().end()) {
      AccelChoice c = it->second;
      c.cached = true;
      c.probe_seconds = 0;
      return c;
    }
  }
  DomainSpec spec;
  spec.name = domain_name("kvm-probe", 0);
  spec.kernel = probe.kernel;
  spec.initrd = probe.initrd;
  spec.cmdline = probe.cmdline;
  spec.console_log = probe.work_dir / (spec.name + ".console.log");
  spec.accelerator = Accelerator::kvm;
  const std::string marker = probe.marker;
  auto out = driver.run_guest(spec, probe.timeout, [&](std::string_view console) {
    return console.find(marker) != std::string_view::npos;
  });

  AccelChoice choice;
  choice.probe_seconds = out.seconds;
  if (out.end == GuestOutcome::End::finished) {
    choice.accelerator = Accelerator::kvm;
    choice.reason = fmt::format("a KVM probe boot printed its marker in {:.1f} s", out.seconds);
  } else {
    choice.accelerator = Accelerator::tcg;
    std::string why;
    switch (out.end) {
      case GuestOutcome::End::timeout:
        why = fmt::format("the KVM probe guest printed no marker within {:.0f} s (a hang under KVM)",
                          std::chrono::duration<double>(probe.timeout).count());
        break;
      case GuestOutcome::End::infra_error: why = "KVM is not available: " + out.detail; break;
      default: why = fmt::format("the KVM probe guest ended ({}) without its marker", to_string(out.end)); break;
    }
    choice.reason = why;
  }
  std::lock_guard lock(cache_mutex);
  cache()[host] = choice;
  return choice;
}

void forget_accelerator_probes() {
  std::lock_guard lock(cache_mutex);
  cache().clear();
}

std::string accelerator_warning(const AccelChoice& choice) {
  if (choice.accelerator == Accelerator::kvm) return {};
  return fmt::format("guests run under TCG (software emulation) because {}: the numbers describe QEMU's "
                     "emulator as much as the kernels, and are slower and noisier than under KVM",
                     choice.reason);
}

}  // namespace abvm
