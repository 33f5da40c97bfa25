// Which of a local QEMU's threads run vCPUs (guest/vcpu_threads.hpp): libvirt starts QEMU with
// debug-threads=on, so a vCPU thread is "CPU <n>/TCG" or "CPU <n>/KVM"; nothing else is moved.
#include <gtest/gtest.h>

#include "guest/vcpu_threads.hpp"

namespace abvm {
namespace {

TEST(GuestVcpuThreads, KnowsAVcpuThreadByItsName) {
  EXPECT_TRUE(is_vcpu_thread_name("CPU 0/TCG\n"));
  EXPECT_TRUE(is_vcpu_thread_name("CPU 12/KVM\n"));
  EXPECT_FALSE(is_vcpu_thread_name("CPU /TCG\n"));
  EXPECT_FALSE(is_vcpu_thread_name("qemu-system-x86\n"));
  EXPECT_FALSE(is_vcpu_thread_name("IO mon_iothread\n"));
  EXPECT_FALSE(is_vcpu_thread_name("CPU 0\n"));
}

TEST(GuestVcpuThreads, AProcessThatIsGoneHasNoneAndPlacingNothingFails) {
  EXPECT_TRUE(vcpu_threads(0).empty());
  EXPECT_TRUE(vcpu_threads(-1).empty());
  EXPECT_FALSE(place_threads({}, {0}));
}

}  // namespace
}  // namespace abvm
