#pragma once
// Choosing the accelerator: KVM when a probe boot shows it works, else TCG.
//
// /dev/kvm existing is not enough: on some hosts (this project's CI machine among them) a nested,
// paravirtual KVM accepts a guest and then hangs it right after the kernel decompresses. So the
// choice is made by booting a tiny guest under KVM that must print a marker within a few seconds;
// any other end (timeout, libvirt refusing type 'kvm', a crash) means TCG. The probe goes through
// the GuestDriver, so it tests the very host the experiment will use (local or remote).
//
// The result is cached per host (per driver describe()) for the life of the process, and it is
// recorded with every result. TCG numbers describe the emulator as much as the kernel: callers show
// accelerator_warning() to the user.
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "guest/driver.hpp"

namespace abvm {

// The probe guest: a kernel and an initramfs whose init prints `marker` on the serial console
// (the base guest image's agent does), on a command line that sends the console there.
struct AccelProbe {
  std::filesystem::path kernel;
  std::filesystem::path initrd;
  std::string cmdline = "console=ttyS0 panic=-1";
  std::string marker;
  std::filesystem::path work_dir;                       // for the probe's console log
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
};

struct AccelChoice {
  Accelerator accelerator = Accelerator::tcg;
  std::string reason;        // why: "KVM probe boot printed the marker in 0.8 s", or why not
  double probe_seconds = 0;  // how long the probe took (0 when cached or forced)
  bool cached = false;       // reused from an earlier probe of the same host in this process
};

// Probes (once per host and process) and returns the choice. Throws what run_guest throws for an
// invalid probe (abvm::Error); a failing probe is not an exception but a TCG choice with a reason.
AccelChoice choose_accelerator(GuestDriver& driver, const AccelProbe& probe);

// Forgets cached probe results (tests; a long-running service after a host change).
void forget_accelerator_probes();

// Empty for KVM; for TCG, a one-line warning for the terminal and the report.
std::string accelerator_warning(const AccelChoice& choice);

}  // namespace abvm
