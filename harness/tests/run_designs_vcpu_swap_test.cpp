// The co-scheduled pair's vCPU swap (run/designs/vcpu_swap.hpp) against recording placers: the two
// guests always sit on different CPUs and trade them, each meets both; a guest that goes is never
// placed again and its partner gets both CPUs back; and it says why it did not swap. The real
// placement is GuestLibvirtDriver.PlacesARunningGuestsVcpuThreadsOnTheGivenCpus (and
// guest_vcpu_threads_test.cpp), the real pair DesignsE2ETest.CoScheduledSidesOfDifferentSpeedOverlapInEveryPair.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "run/designs/vcpu_swap.hpp"

namespace abvm {
namespace {

using namespace std::chrono_literals;

// Every placement of each guest, in order.
struct Placements {
  std::mutex mutex;
  std::vector<std::vector<int>> of[2];
  bool fail = false;
  VcpuPlacer placer(int k) {
    return [this, k](const std::vector<int>& cpus) {
      std::lock_guard lock(mutex);
      of[k].push_back(cpus);
      return !fail;
    };
  }
  std::vector<std::vector<int>> get(int k) {
    std::lock_guard lock(mutex);
    return of[k];
  }
};

TEST(VcpuSwapTest, ThePairTradesTheLanesTwoCpusAndEachMeetsBoth) {
  Placements p;
  VcpuSwap swap({2, 3}, 2, 1ms);
  swap.start(0, p.placer(0));
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(p.get(0).empty()) << "swapped before both guests ran";
  swap.start(1, p.placer(1));
  while (swap.record().swaps < 20) std::this_thread::sleep_for(1ms);
  swap.stop(0);
  const auto a = p.get(0), b = p.get(1);
  const long swaps = swap.record().swaps;
  EXPECT_EQ(swap.record().off, "");
  ASSERT_EQ(a.size(), static_cast<std::size_t>(swaps)) << "the guest that went was placed again";
  ASSERT_EQ(b.size(), static_cast<std::size_t>(swaps) + 1);
  EXPECT_EQ(b.back(), (std::vector<int>{2, 3})) << "the partner did not get both CPUs back";
  for (long i = 0; i < swaps; ++i) {
    ASSERT_EQ(a[i].size(), 1u);
    ASSERT_EQ(b[i].size(), 1u);
    EXPECT_NE(a[i][0], b[i][0]) << "both guests on one CPU at swap " << i;
    if (i > 0) {
      EXPECT_NE(a[i][0], a[i - 1][0]) << "no trade at swap " << i;
    }
  }
}

// Both guests of a block end at about the same moment, each on its watch's thread: the swap stops
// once, and neither stop waits forever or joins the swapping thread a second time.
TEST(VcpuSwapTest, BothGuestsStoppingAtOnceEndTheSwapOnce) {
  for (int round = 0; round < 200; ++round) {
    Placements p;
    VcpuSwap swap({0, 1}, 2, 1ms);
    swap.start(0, p.placer(0));
    swap.start(1, p.placer(1));
    while (swap.record().swaps < 1) std::this_thread::yield();
    std::thread other([&] { swap.stop(1); });
    swap.stop(0);
    other.join();
    const long swaps = swap.record().swaps;
    EXPECT_GE(p.get(0).size() + p.get(1).size(), static_cast<std::size_t>(2 * swaps)) << "round " << round;
    EXPECT_LE(p.get(0).size() + p.get(1).size(), static_cast<std::size_t>(2 * swaps + 1)) << "round " << round;
  }
}

TEST(VcpuSwapTest, SaysWhyItDidNotSwap) {
  Placements p;
  {
    VcpuSwap one_cpu({0}, 2, 10ms);
    one_cpu.start(0, p.placer(0));
    one_cpu.start(1, p.placer(1));
    one_cpu.stop(0);
    EXPECT_EQ(one_cpu.record().swaps, 0);
    EXPECT_NE(one_cpu.record().off.find("1 CPU(s)"), std::string::npos) << one_cpu.record().off;
  }
  {
    VcpuSwap off({0, 1}, 2, 0ms);
    off.stop(0);
    EXPECT_NE(off.record().off.find("vcpu_swap is 0"), std::string::npos) << off.record().off;
  }
  {
    VcpuSwap remote({0, 1}, 2, 10ms);  // one guest's threads are not this machine's: no placer
    remote.start(0, p.placer(0));
    remote.stop(1);
    EXPECT_EQ(remote.record().swaps, 0);
    EXPECT_NE(remote.record().off.find("not found on this machine"), std::string::npos) << remote.record().off;
  }
  EXPECT_TRUE(p.get(1).empty());
  {
    Placements refused;
    refused.fail = true;
    VcpuSwap swap({0, 1}, 2, 1ms);
    swap.start(0, refused.placer(0));
    swap.start(1, refused.placer(1));
    while (swap.record().off.empty()) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(swap.record().swaps, 0);
    EXPECT_NE(swap.record().off.find("failed"), std::string::npos) << swap.record().off;
  }
}

}  // namespace
}  // namespace abvm
