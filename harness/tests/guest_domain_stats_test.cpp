// The host's CPU of a local process (guest/domain_stats.hpp local_process_cpu), read on this test's
// own process: its threads' schedstat in ns, the ticks beside them, and a thread that ends leaving
// the list and the sum (which is why run/designs/windows.cpp window_cpu takes each thread's own
// difference, not the sums').
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "guest/domain_stats.hpp"

namespace abvm {
namespace {

// Burns this thread's CPU for about `seconds` (thread CPU time, not wall time: the host is shared).
void burn(double seconds) {
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile unsigned long sink = 0;
  do {
    for (int i = 0; i < 100000; ++i) sink = sink + static_cast<unsigned long>(i);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while (static_cast<double>(now.tv_sec - start.tv_sec) + static_cast<double>(now.tv_nsec - start.tv_nsec) / 1e9 <
           seconds);
}

bool has_thread(const DomainStats& s, long tid) {
  return std::any_of(s.threads.begin(), s.threads.end(), [&](const ThreadCpu& t) { return t.tid == tid; });
}

TEST(GuestDomainStats, ALocalProcessesCpuIsItsThreadsSchedstatInNanoseconds) {
  const auto before = local_process_cpu(getpid());
  ASSERT_TRUE(before);
  ASSERT_EQ(before->cpu_clock, CpuClock::schedstat) << "this kernel has no /proc/<pid>/task/<tid>/schedstat";
  EXPECT_TRUE(std::is_sorted(before->threads.begin(), before->threads.end(),
                             [](const ThreadCpu& x, const ThreadCpu& y) { return x.tid < y.tid; }));
  EXPECT_TRUE(has_thread(*before, static_cast<long>(syscall(SYS_gettid))));
  burn(0.123);
  const auto after = local_process_cpu(getpid());
  ASSERT_TRUE(after);
  // Finer than a tick: the burnt 0.123 s shows to the millisecond, where ticks are 10 ms apart.
  const double spent = after->cpu_seconds - before->cpu_seconds;
  EXPECT_GE(spent, 0.123);
  EXPECT_LT(spent, 0.123 + 0.008);  // gtest's and this reading's own CPU
  // The ticks count the same process: within two ticks (utime and stime are each rounded down).
  EXPECT_NEAR(after->tick_cpu_seconds, after->cpu_seconds, 0.02 + 1e-9);
  EXPECT_EQ(after->vcpu_seconds, 0);  // no thread of a test is a vCPU
  EXPECT_FALSE(local_process_cpu(0));
}

TEST(GuestDomainStats, AThreadThatEndedLeavesTheSumAndItsIdLeavesTheList) {
  std::atomic<long> tid{0};
  std::atomic<bool> burnt{false}, end{false};
  std::thread worker([&] {
    tid = static_cast<long>(syscall(SYS_gettid));
    burn(0.05);
    burnt = true;
    while (!end) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!burnt) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto with_it = local_process_cpu(getpid());
  end = true;
  worker.join();
  const auto without_it = local_process_cpu(getpid());
  ASSERT_TRUE(with_it && without_it);
  EXPECT_TRUE(has_thread(*with_it, tid));
  EXPECT_FALSE(has_thread(*without_it, tid));
  // Its 0.05 s left the threads' sum; the process's ticks keep it.
  EXPECT_LT(without_it->cpu_seconds, with_it->cpu_seconds - 0.04);
  EXPECT_GE(without_it->tick_cpu_seconds, with_it->tick_cpu_seconds);
}

}  // namespace
}  // namespace abvm
