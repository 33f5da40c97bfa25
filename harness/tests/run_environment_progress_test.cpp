// The host environment recorded with a run, and the progress line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "run/environment.hpp"
#include "run/progress.hpp"

namespace abvm {
namespace {

TEST(RunEnvironment, RecordsHostAndHypervisor) {
  const auto env = run_environment({"qemu:///embed?root=/x", "9.0.0", "7.2.0"}, Accelerator::tcg, "kvm probe failed");
  EXPECT_FALSE(env.at("hostname").get<std::string>().empty());
  EXPECT_FALSE(env.at("host_kernel").at("release").get<std::string>().empty());
  EXPECT_EQ(env.at("load_average").size(), 3u);
  EXPECT_TRUE(env.contains("cpufreq_governor"));
  EXPECT_EQ(env.at("qemu_version"), "7.2.0");
  EXPECT_EQ(env.at("accelerator"), "tcg");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n"), "AMD EPYC 7B13");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor : 0\n"), "");
}

TEST(RunEnvironment, RecordsTheHostTheGuestsRanOnAsLibvirtTellsIt) {
  const HostVersions v{.uri = "qemu+tcp://lab-7:16509/system", .libvirt = "9.0.0", .qemu = "7.2.0", .hostname = "lab-7",
                       .cpu_model = "EPYC-Rome", .cpu_arch = "x86_64", .cpus = 64, .cpu_mhz = 2450,
                       .memory_kib = 263741212};
  const auto env = run_environment(v, Accelerator::kvm, "probe");
  EXPECT_EQ(env.at("libvirt_uri"), "qemu+tcp://lab-7:16509/system");
  const auto& h = env.at("libvirt_host");
  EXPECT_EQ(h.at("hostname"), "lab-7");
  EXPECT_EQ(h.at("cpu_model"), "EPYC-Rome");
  EXPECT_EQ(h.at("cpu_arch"), "x86_64");
  EXPECT_EQ(h.at("cpus"), 64);
  EXPECT_EQ(h.at("cpu_mhz"), 2450);
  EXPECT_EQ(h.at("memory_kib"), 263741212u);
}

TEST(Progress, LineShowsCountsSideTimesAndEffect) {
  EXPECT_EQ(format_clock(59.6), "1:00");
  EXPECT_EQ(format_clock(3725), "1:02:05");
  ProgressState st{.done = 7, .total = 20, .running = {"t0007 B (dma-api)"}, .elapsed_seconds = 52,
                   .remaining_seconds = 96, .effect = "dd-write.bandwidth B/A 0.953"};
  EXPECT_EQ(format_progress(st),
            "[7/20] running t0007 B (dma-api) | 0:52 elapsed, ~1:36 left | dd-write.bandwidth B/A 0.953");
  st.remaining_seconds.reset();
  st.effect.clear();
  st.running.clear();
  st.last = "t0006 A panic";
  EXPECT_EQ(format_progress(st), "[7/20] | last t0006 A panic | 0:52 elapsed");
}

TEST(Progress, LineNamesEveryTrialRunningAndOnlyThose) {
  ProgressState st{.done = 6, .total = 20, .running = {"t0006 A (direct)", "t0007 B (dma-api)"}, .elapsed_seconds = 52};
  EXPECT_EQ(format_progress(st), "[6/20] running t0006 A (direct), t0007 B (dma-api) | 0:52 elapsed");
  st.running = {"t0007 B (dma-api)"};
  EXPECT_EQ(format_progress(st), "[6/20] running t0007 B (dma-api) | 0:52 elapsed");
}

TEST(Progress, TimeLeftComesFromMeasuredBlockTimes) {
  EXPECT_FALSE(estimate_remaining({}, 5, {}, 1).has_value()) << "no block measured yet";
  // One lane: 3 blocks waiting at the mean of 100 and 140 s, and the running one 50 s into it.
  EXPECT_DOUBLE_EQ(*estimate_remaining({100, 140}, 3, {50}, 1), 3 * 120.0 + 70);
  // A running block past the mean adds nothing; nothing waiting or running: nothing left.
  EXPECT_DOUBLE_EQ(*estimate_remaining({100}, 2, {130}, 1), 200.0);
  EXPECT_DOUBLE_EQ(*estimate_remaining({100}, 0, {}, 1), 0.0);
  // Two lanes share the blocks, but one block is not shared between them.
  EXPECT_DOUBLE_EQ(*estimate_remaining({100}, 4, {}, 2), 200.0);
  EXPECT_DOUBLE_EQ(*estimate_remaining({100}, 1, {}, 2), 100.0);
  EXPECT_DOUBLE_EQ(*estimate_remaining({100}, 0, {20, 90}, 2), 80.0);
  EXPECT_FALSE(estimate_remaining({100}, 1, {}, 0).has_value()) << "no lane left";
}

TEST(Progress, PlainLinesWhenNotATerminalAndInPlaceOnOne) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    ProgressPrinter plain(f, false);
    plain.update({.done = 1, .total = 2});
    plain.message("t0001 B panic");
  }
  std::fflush(f);
  EXPECT_EQ(std::string(buf, len), "abvm: [1/2] | 0:00 elapsed\nabvm: t0001 B panic\n");
  std::fclose(f);
  std::free(buf);
  buf = nullptr;
  f = open_memstream(&buf, &len);
  {
    ProgressPrinter tty(f, true);
    tty.update({.done = 10, .total = 20});
    tty.update({.done = 2, .total = 2});
    tty.finish();
  }
  std::fflush(f);
  EXPECT_EQ(std::string(buf, len), "\r[10/20] | 0:00 elapsed\r[2/2] | 0:00 elapsed  \n");
  std::fclose(f);
  std::free(buf);
}

}  // namespace
}  // namespace abvm
