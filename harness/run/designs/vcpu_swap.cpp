#include "run/designs/vcpu_swap.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "config/rules.hpp"

namespace abvm {

VcpuSwap::VcpuSwap(std::vector<int> cpus, std::size_t guests, std::chrono::milliseconds period)
    : cpus_(std::move(cpus)),
      period_(period),
      wanted_(cpus_.size() == 2 && guests == 2 && period.count() > 0),
      placers_(guests),
      gone_(guests, false) {}

VcpuSwap::~VcpuSwap() {
  std::unique_lock lock(mutex_);
  end_swapping(lock);
}

void VcpuSwap::start(std::size_t k, VcpuPlacer placer) {
  std::lock_guard lock(mutex_);
  if (!wanted_ || ended_ || gone_[k]) return;
  placers_[k] = std::move(placer);
  if (std::all_of(placers_.begin(), placers_.end(), [](const VcpuPlacer& p) { return bool(p); })) {
    thread_ = std::thread([this] { swap_until_stopped(); });
  }
}

void VcpuSwap::stop(std::size_t k) {
  std::unique_lock lock(mutex_);
  gone_[k] = true;
  placers_[k] = nullptr;  // its threads may belong to someone else by now: never placed again
  end_swapping(lock);
}

std::string VcpuSwap::why_not_wanted() const {
  return period_.count() <= 0 ? "schedule.vcpu_swap is 0"
                              : fmt::format("the lane has {} CPU(s) and the block {} guest(s), not 2 and 2",
                                            cpus_.size(), placers_.size());
}

std::string VcpuSwap::intent() const {
  if (!wanted_) return "no vCPU swap: " + why_not_wanted();
  return fmt::format("vCPU swap: the pair's vCPU threads trade host CPUs {} and {} every {} ms while both guests run "
                     "(under the embedded driver; recorded per trial as vcpu_swap)",
                     cpus_[0], cpus_[1], period_.count());
}

VcpuSwapRecord VcpuSwap::record() const {
  std::lock_guard lock(mutex_);
  VcpuSwapRecord r{.swaps = swaps_};
  if (swaps_ > 0) return r;
  if (!wanted_) {
    r.off = why_not_wanted();
  } else if (!failed_.empty()) {
    r.off = failed_;
  } else if (ended_) {
    r.off = "a guest's vCPU threads were not found on this machine (a remote host, or not the embedded driver)";
  }
  return r;
}

void VcpuSwap::swap_until_stopped() {
  std::unique_lock lock(mutex_);
  for (std::size_t turn = 0; !ended_; ++turn) {
    const std::size_t first = turn % 2;
    if (!placers_[0]({cpus_[first]}) || !placers_[1]({cpus_[1 - first]})) {
      failed_ = "placing a guest's vCPU threads failed (the guest ended, or the host refused the CPU)";
      return;
    }
    ++swaps_;
    wake_.wait_for(lock, period_, [this] { return ended_; });
  }
}

// Under the lock: ends the thread, then gives the guests still running the lane's CPUs back. The
// two guests' watches may stop it at once: the thread is taken out under the lock, so only one
// joins it, and once `ended_` is set it places nothing more (it places only under the lock).
void VcpuSwap::end_swapping(std::unique_lock<std::mutex>& lock) {
  ended_ = true;
  wake_.notify_all();
  if (std::thread swapper = std::move(thread_); swapper.joinable()) {
    lock.unlock();
    swapper.join();
    lock.lock();
  }
  for (VcpuPlacer& p : placers_) {
    if (p) p(cpus_);
    p = nullptr;
  }
}

std::unique_ptr<VcpuSwap> pair_swap(const ExecutionSpec& spec, const Lane& lane, std::size_t guests, Pacing pacing) {
  if (pacing != Pacing::together) return nullptr;
  std::vector<int> cpus;
  if (rules::valid_cpu_set(lane.host_cpus)) {
    for (std::int64_t cpu : rules::cpu_set_members(lane.host_cpus)) cpus.push_back(static_cast<int>(cpu));
  }
  return std::make_unique<VcpuSwap>(std::move(cpus), guests, spec.vcpu_swap);
}

}  // namespace abvm
