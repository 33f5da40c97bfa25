#pragma once
// The vCPU swap of a co-scheduled pair: the block's two guests, alive at once on a lane of two
// host CPUs, trade CPUs every period (one guest's vCPU thread on one CPU, its partner's on the
// other), so that each guest spends the same time on each CPU. Why: this host's two CPUs are not
// alike, and not alike over time (README, Truth at the margin: one guest ran dd at 1.5-1.75 GB/s
// on one CPU and 0.8-0.95 on the other); left to the scheduler, the two runs of a pair met
// different CPUs for stretches of a run, the demo's largest noise. QEMU's other threads (its main
// loop, its I/O) stay on both CPUs. Only where the vCPU threads are this machine's (the embedded
// driver's QEMU, ConsoleHooks::on_vcpus); elsewhere nothing is swapped, and the trial says why.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/design.hpp"
#include "guest/driver.hpp"
#include "run/execution.hpp"
#include "run/trial.hpp"

namespace abvm {

class VcpuSwap {
 public:
  // Swaps nothing unless `cpus` names two CPUs, `guests` is 2 and `period` is positive.
  VcpuSwap(std::vector<int> cpus, std::size_t guests, std::chrono::milliseconds period);
  // Stops swapping; the guests still running get both CPUs back.
  ~VcpuSwap();
  VcpuSwap(const VcpuSwap&) = delete;
  VcpuSwap& operator=(const VcpuSwap&) = delete;

  // Guest k runs and its vCPUs can be placed; the swapping starts once every guest's can.
  void start(std::size_t k, VcpuPlacer placer);
  // Guest k is gone: the swapping ends and the other guest gets both CPUs back.
  void stop(std::size_t k);

  // What the pair got so far (`off` is "" while the swapping may still start).
  VcpuSwapRecord record() const;
  // What it will do, before any guest runs (`abvm run --dry-run`).
  std::string intent() const;

 private:
  std::string why_not_wanted() const;
  void swap_until_stopped();
  void end_swapping(std::unique_lock<std::mutex>& lock);

  const std::vector<int> cpus_;
  const std::chrono::milliseconds period_;
  const bool wanted_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<VcpuPlacer> placers_;  // per guest: empty until it runs, and again once it is gone
  std::vector<bool> gone_;
  bool ended_ = false;
  long swaps_ = 0;
  std::string failed_;  // why a placement failed
  std::thread thread_;
};

// The vCPU swap of a block of `guests` paced `pacing` on `lane`: a pair that runs together gets
// one (which swaps only on a lane of two CPUs, with schedule.vcpu_swap above 0); taking turns or
// running free needs none: one guest measures at a time.
std::unique_ptr<VcpuSwap> pair_swap(const ExecutionSpec& spec, const Lane& lane, std::size_t guests, Pacing pacing);

}  // namespace abvm
