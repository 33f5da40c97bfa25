#pragma once
// One trial (one boot of one side) as the orchestrator sees it: what to run, how it ended, and
// what came back. A failed trial is data: it has an outcome and a detail, it is handed to the
// sink like any other, and it never turns into a sample.
// Its outcome is core/vocabulary.hpp's Outcome.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.hpp"
#include "config/workload.hpp"
#include "guest/driver.hpp"
#include "guest/records.hpp"
#include "plan/plan.hpp"
#include "samples/cost.hpp"
#include "samples/sample.hpp"

namespace abvm {

// A workload as one trial measures it: the experiment's workload, the side it measures (the
// trial's, or either when one guest measures both: same-guest), the name the guest's records
// carry and the scratch disk it runs on.
struct TrialWorkload {
  std::string workload;           // the experiment's name
  std::string report_name;        // the records' name: the workload's, or side_workload_name()
  Side side = Side::a;
  std::string disk_serial;
  int repetitions = 1;            // measured runs
};

// "<workload>.<A|B>": the name a workload's runs carry when one guest measures both sides
// (workload names have no '.', config/keys.cpp).
std::string side_workload_name(std::string_view workload, Side side);

// One measured run (warm-up runs are never reported to the sink).
struct RunResult {
  std::string workload;           // the experiment's name
  Side side = Side::a;            // the side it measured
  std::string disk_serial;        // the disk it measured (the side's facts are that disk's)
  std::string report_name;        // the name the guest's records gave it (its output file's)
  int index = 0;                  // measured-run index within the boot, per workload and side
  Outcome outcome = Outcome::ok;  // ok or workload_failed here; the trial's own
                                            // outcome otherwise (the run did not happen)
  int exit_status = -1;
  std::string output;             // the tool's raw stdout+stderr (empty when it did not run)
  std::string detail;
  // When it ran on the host's clock (run/designs/windows.hpp), and how much of it its partner
  // run's guest was under load (samples/sample.hpp: the journal carries both).
  std::optional<RunTiming> timing;
  std::optional<RunOverlap> overlap;
  // What it cost (samples/cost.hpp): the guest's CPU ticks over the run (guest/records.hpp), and the
  // host's view of its window (paced designs: run/designs/paced.hpp), or why the host has none.
  std::optional<GuestCpuTicks> guest_cpu;
  std::optional<HostWindowCost> host_cost;
  std::string host_cost_missing;
  // The tool's runs the window held at least: the measured one and the filler's finished ones (1
  // where the window ends at the run's DONE, run/designs/windows.hpp cost_windows).
  std::uint64_t window_runs = 1;
};

// What the host saw of one boot's console, on its own clock (Unix epoch seconds): when each record
// line of the boot's nonce first arrived, and when each word (go, stop, abort) was typed into it.
// With the guest times the records carry, it maps the guest's clock to the host's.
// What a co-scheduled pair's vCPU swap did while a guest ran (run/designs/vcpu_swap.hpp): the
// swaps made (each placed both guests) and, when none could be, why.
struct VcpuSwapRecord {
  long swaps = 0;
  std::string off;
};

struct HostClockLog {
  std::map<std::uint64_t, double> received;   // record sequence number -> arrival
  struct Word {
    std::string word;                          // "go 3", "stop 3", "abort"
    double at = 0;
    // The guest's statistics read just before a go or a stop was typed (issue 27: the host's view
    // of a window's cost); nullopt for other words and where the driver gave no reader.
    std::optional<DomainStatsReading> stats;
  };
  std::vector<Word> typed;
  // The guest's statistics read as an unpaced run's RUN and RUNEND record lines arrived (sequential
  // blocks, same-guest), and as a paced step's DONE arrived (its window's end), by the record's
  // sequence number.
  std::map<std::uint64_t, DomainStatsReading> read_at;
  // The pair's vCPU swap; nullopt where the design runs no pair together.
  std::optional<VcpuSwapRecord> vcpu_swap;
};

struct TrialResult {
  Trial trial;                              // of the plan; its id is also the boot id
  Outcome outcome = Outcome::ok;
  std::string detail;                       // why, for anything but ok
  int attempts = 1;                         // boots tried (infra errors are retried)
  std::vector<std::string> retried;         // detail of each retried infra error
  double seconds = 0;                       // wall time of the last attempt
  std::string host;                         // the host it ran on (HostDriver::name), "" unknown
  std::string lane;                         // the lane it ran on (Lane::name)
  std::string time;                         // UTC, ISO 8601, when the trial ended
  Accelerator accelerator = Accelerator::tcg;
  std::vector<RunResult> runs;              // every expected measured run, in job order
  GuestReport report;                       // parsed records of the last attempt
  HostClockLog clock;                       // what the host saw of the last attempt's console
};

// Receives each finished trial, in order, before the next one starts. The journal writer
// (cli/) implements it: run/ cannot know the samples stage, which parses the tools' output.
class TrialSink {
 public:
  virtual ~TrialSink() = default;
  virtual void on_trial_finished(const TrialResult& result) = 0;
};

// What a side's guest must report of itself, from the prepared kernel and the experiment; an
// empty field (or nullopt) is not checked.
struct SideExpectation {
  std::string release;                 // uname -r of the side's kernel
  std::string version;                 // the kernel's identity "version": "<release> (<builder>) <uname -v>"
  std::string cmdline;                 // the whole kernel command line the side boots with
  std::optional<bool> access_platform; // VIRTIO_F_ACCESS_PLATFORM negotiated (device.iommu_platform)
  // The seed's patched kernel prints "virtio_ring: abvm: DMA API in use" once per device: a side
  // whose kernel carries that patch must report it, a side whose kernel does not must not.
  std::optional<bool> dma_api_reported;
};

// The dmesg line the seed's reporting patch prints (kernels/patches/virtio-dma-api/0002-*).
inline constexpr std::string_view kDmaApiInUse = "abvm: DMA API in use";

// The facts the guest reported about itself that the side is checked against, by name:
// kernel_release, kernel_version, cmdline, virtio_f_access_platform ("negotiated" / "not
// negotiated" on the disk with serial `disk`, or on the first disk reported when `disk` is empty
// or unreported; absent without a disk), dma_api_in_use ("reported" / "not reported").
std::map<std::string, std::string> guest_facts(const GuestReport& report, const std::string& disk = "");

// How the report differs from what the side must be (its disk: `disk`), one sentence each
// ("kernel build is '#1 SMP abvm-cbe39c3dbdef', not the side's '#1 SMP abvm-41398041b319'");
// empty when it matches.
std::vector<std::string> side_mismatches(const GuestReport& report, const SideExpectation& expect,
                                         const std::string& disk = "");

// A trial that ran (ok or workload-failed) but whose guest is not what one of the sides it
// measured must be becomes a mismatch: no run of it is a sample. `expect(side)` is that side's.
void check_sides(const std::function<const SideExpectation&(Side)>& expect, const std::vector<TrialWorkload>& workloads,
                 TrialResult& result);

// The outcome of one boot, from the driver's ending and the parsed records. Pure.
// `workloads` is what the job asked for: every measured run must be reported, else the
// records are not trusted (invalid-output). Fills outcome, detail and runs of `result`.
void classify_trial(const GuestOutcome& guest, const GuestReport& report, const std::vector<TrialWorkload>& workloads,
                    TrialResult& result);

}  // namespace abvm
