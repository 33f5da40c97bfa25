#pragma once
// The guest driver: abvm's one seam between "what to boot" and "how a hypervisor boots it".
//
// One real implementation (guest/libvirt_driver.hpp, exercised in tests with real guests) and
// scripted fakes in unit tests of scheduling, retries and failure handling. Everything that
// depends on where the guest runs stays behind this interface: the connection, and the staging
// of the kernel, initramfs and scratch-disk files (a local driver uses the paths as they are; a
// remote one uploads them to the host as storage volumes first, guest/volume_staging.hpp), and
// the console, which comes back over the connection either way (guest/console_stream.hpp).
//
// Contract of run_guest: one call is one boot (one trial). Calls may come from several threads at
// once (co-scheduled blocks boot their A and B guests together). It returns when the caller's `done`
// predicate accepts the console text, or the guest ends on its own, or the timeout passes; in
// every case the guest is gone (destroyed) before it returns. A guest that fails is data (an
// outcome), not an exception. Exceptions: abvm::Error when the DomainSpec is invalid (the user
// can fix it), abvm::InfraError when the driver itself is unusable (lost connection).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/device.hpp"
#include "core/vocabulary.hpp"

namespace abvm {

// One virtio-blk scratch disk of a guest: a raw image abvm created (or the user's, checked by the
// experiment loader), the side's device options, and the serial the guest agent finds it by.
struct ScratchDisk {
  std::filesystem::path path;
  VirtioBlkOptions options;
  std::string serial = "abvm-scratch";  // QEMU keeps 20 bytes
  bool operator==(const ScratchDisk&) const = default;
};

// Scratch disks a guest may have: one per side at most (vda, vdb).
inline constexpr std::size_t kMaxScratchDisks = 2;

// Everything needed to boot one guest. Paths are on the machine that runs abvm.
struct DomainSpec {
  std::string name;                          // unique per trial; see guest/domain_xml.hpp domain_name()
  std::filesystem::path kernel;              // bzImage / vmlinuz for direct kernel boot
  std::filesystem::path initrd;              // initramfs (with the trial's job appended), may be empty
  std::string cmdline;                       // kernel command line
  MachineOptions machine;
  // Host CPUs (libvirt cpuset syntax) the whole guest runs on, its vCPUs and QEMU's own threads:
  // co-scheduled guests share them. Empty: unpinned.
  std::string host_cpus;
  // The guest's scratch disks, vda, vdb, ... in this order: one, or one per side when one guest
  // measures both (the same-guest design); none for a guest that only boots.
  std::vector<ScratchDisk> disks;
  std::filesystem::path console_log;         // where the serial console is captured (truncated first)
  // At most this many console bytes are kept (guest/console_cap.hpp); a guest that prints more is
  // destroyed at once. The schedule.console_limit key.
  std::uint64_t console_limit = std::uint64_t{64} << 20;
  Accelerator accelerator = Accelerator::tcg;  // see guest/accel.hpp
};

// How a boot ended. `console` is the whole serial console text, whatever the end, unless the
// guest printed more than the spec's console_limit: then `console_cut` is set, the guest was
// destroyed when that was seen (`end` is `finished`), and `console` holds the first and the
// last bytes with a line between them that says how much is left out (ConsoleCap::text).
struct GuestOutcome {
  enum class End {
    finished,     // the caller's predicate accepted the console; the guest was then destroyed
    powered_off,  // the guest ended on its own (power off) before the predicate matched
    crashed,      // the guest ended after a kernel panic (panic=-1 reboots, on_reboot destroys)
    timeout,      // neither within the timeout; the guest was destroyed
    infra_error,  // the hypervisor could not start or watch the guest; `detail` says why
  };
  End end = End::infra_error;
  std::string console;
  double seconds = 0;   // from the start request to the end being seen (host wall clock)
  std::string detail;   // human-readable reason, e.g. libvirt's error message
  // The driver's own cost around the guest (abvm's per-trial overhead, recorded and benchmarked):
  double start_seconds = 0;  // starting the guest (create request until it runs)
  double stop_seconds = 0;   // after the end was seen: destroy and collect the console
  double stage_seconds = 0;  // a remote host's volumes: sending the guest's files, deleting them after
  bool console_cut = false;        // the guest printed more than console_limit
  std::uint64_t console_bytes = 0; // console bytes the guest printed in all
  // The domain XML the driver booted, with the host's paths ("" when it did not get that far).
  std::string domain_xml;
};

std::string_view to_string(GuestOutcome::End end);

// The versions a result must record about the hypervisor side, and where the guests run as
// libvirt tells over the connection (empty or 0 when the host did not say).
struct HostVersions {
  std::string uri;       // connection URI as given
  std::string libvirt;   // e.g. "9.0.0"
  std::string qemu;      // hypervisor version as libvirt reports it, e.g. "7.2.22"
  std::string hostname;  // the host's name (virConnectGetHostname)
  std::string cpu_model; // the host CPU as libvirt names it in its capabilities, e.g. "EPYC-Rome"
  std::string cpu_arch;  // e.g. "x86_64" (virNodeGetInfo)
  int cpus = 0;          // active host CPUs
  int cpu_mhz = 0;
  std::uint64_t memory_kib = 0;
};

// Wakes a driver's watch loop before its next poll: console data arrived, or the caller has
// something to type (a paced block's go for both guests at once must not wait for a poll).
class Doorbell {
 public:
  void ring() {
    {
      std::lock_guard lock(mutex_);
      rung_ = true;
    }
    cv_.notify_all();
  }
  // Returns once rung since the last wait, or after `limit`.
  void wait(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, limit, [this] { return rung_; });
    rung_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool rung_ = false;
};

// The host's count of one running guest at one moment (libvirt's domain statistics): the CPU its
// QEMU spent and what its disks received so far. Differences of two readings are a window's cost
// (samples/cost.hpp HostWindowCost).
// One live thread of a local QEMU and the CPU it has spent, in ns (its schedstat).
struct ThreadCpu {
  long tid = 0;
  std::uint64_t ns = 0;
  bool operator==(const ThreadCpu&) const = default;
};

struct DomainStats {
  double cpu_seconds = 0;        // every thread of the guest's QEMU, counted on cpu_clock
  CpuClock cpu_clock = CpuClock::libvirt;
  // cpu_clock schedstat: each live thread's CPU, by id ascending (cpu_seconds is their sum), so that a
  // window takes each thread's own difference and a thread that ended in it takes none of its earlier
  // CPU out of the window; and the whole process's ticks beside them (the clock when schedstat fails).
  std::vector<ThreadCpu> threads;
  double tick_cpu_seconds = 0;
  double user_seconds = 0;       // cpu.user (the process's ticks, split, for a local QEMU)
  double system_seconds = 0;     // cpu.system
  double vcpu_seconds = 0;       // sum of vcpu.<n>.time (their threads' schedstat for a local QEMU)
  std::uint64_t disk_bytes = 0;     // sum over its disks of block.<n>.rd.bytes + wr.bytes
  std::uint64_t disk_requests = 0;  // and of rd.reqs + wr.reqs
  bool operator==(const DomainStats&) const = default;
};

// A reading, or why there is none (the statistics call failed: the run goes on without it).
struct DomainStatsReading {
  std::optional<DomainStats> stats;
  std::string error;
};

// Reads the running guest's statistics now. Valid while its run_guest call watches the guest, and
// called only from that call's hooks (its thread).
using DomainStatsReader = std::function<DomainStatsReading()>;

// Places the running guest's vCPU threads on the given host CPUs only (each must be in the
// guest's DomainSpec::host_cpus); false when they are gone or the host refused. Valid while its
// run_guest call watches the guest; safe to call from any thread meanwhile.
using VcpuPlacer = std::function<bool(const std::vector<int>& host_cpus)>;

// What the caller watches and says while one guest runs.
struct ConsoleHooks {
  // Called with the whole console text so far, after each new piece arrives: true ends the guest.
  std::function<bool(std::string_view console)> done;
  // Called after each new piece and at least every 25 ms while the guest runs: bytes to type
  // into the guest's console now, "" for none (paced designs: the host's go and stop around each
  // run). Unset: nothing is ever written to the guest.
  std::function<std::string()> input;
  // Polled with `input`: a reason to end the guest now as a timeout (a paced partner's deadline:
  // the block's other guest waits for this one), nullopt to go on.
  std::function<std::optional<std::string>()> give_up;
  // When set, the watch loop waits on it between polls, and it is rung when console data arrives.
  std::shared_ptr<Doorbell> bell;
  // When set, called once the guest runs (before the first `input`) with the reader of its
  // statistics, which the caller reads when it decides (a paced block: just before a window's go
  // and just before its stop, from `input`).
  std::function<void(DomainStatsReader)> on_running;
  // When set, called once the guest runs, right after on_running, with the placer of its vCPU
  // threads: only where they are threads of this machine (the embedded driver's QEMU); never
  // called for a remote host's guest (a co-scheduled pair's vCPU swap, run/designs/vcpu_swap.hpp).
  std::function<void(VcpuPlacer)> on_vcpus;
};

class GuestDriver {
 public:
  virtual ~GuestDriver() = default;

  // Boots `spec`, watches its console until `hooks.done(console)` is true, it ends, or `timeout`,
  // typing what `hooks.input` returns into its console as it runs.
  virtual GuestOutcome run_guest(const DomainSpec& spec, std::chrono::milliseconds timeout,
                                 const ConsoleHooks& hooks) = 0;

  // The same with nothing to type.
  GuestOutcome run_guest(const DomainSpec& spec, std::chrono::milliseconds timeout,
                         const std::function<bool(std::string_view console)>& done) {
    return run_guest(spec, timeout, ConsoleHooks{.done = done});
  }

  // One line for logs and reports: the connection and the versions.
  virtual std::string describe() const = 0;

  virtual HostVersions versions() = 0;
};

}  // namespace abvm
