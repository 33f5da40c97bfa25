// A throttled scratch disk (<iotune>, config/device.hpp) on real guests through the LibvirtDriver
// (TCG here): a direct dd gets the bandwidth QEMU's burst model says, not more and not much less,
// and a disk capped at 0.9 of another gives the model's ratio. See guest_libvirt_support.hpp.
//
// The model (config/device.hpp): a dd of D bytes in requests of s, at most one at a time, on an
// empty bucket of rate r, starts its last request at (D - s - r/10) / r; its time adds L: dd's
// start (busybox is exec'd) and end, and the last request's service time. Here D = 16M in 512K
// blocks (a request each: the guest's limits are printed and checked, a larger block could be
// split), r = 8000K/s: 1.884 s (8.91 MB/s, 9 % above r); at 0.9 r, 2.104 s; ratio 0.8952.
//
// Tolerances, from measurement: under TCG on the 2-core host at load 6-9, L was 18-70 ms over 28
// runs (sd about 15 ms), so a run must take the model's time plus -10..+120 ms (the guest's clock,
// and room for a slower moment); the burst itself is what lets the runs come in under
// (D - s) / r, 0.1 s above the model. The ratio of the caps' mean times moved by -1.2 % and
// +1.4 % from the model with 2 runs each, +0.5 % and +0.2 % with 4: it must be within 0.02 of
// 0.8952, which still tells 0.90 from 0.97 or from no cap at all. (abvm's own dd, timed by
// coreutils, had L of 20-45 ms: harness/bench/throttle_ruler.py.)
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "guest/domain_xml.hpp"
#include "guest_libvirt_support.hpp"

using namespace abvm;
using namespace std::chrono_literals;

namespace {

constexpr auto kTimeout = 90s;
constexpr double kBlock = 512 * 1024;
constexpr int kCount = 32;
constexpr int kRuns = 4;  // per guest, each on an empty bucket (0.5 s apart; it empties in 0.16 s)
constexpr double kBytes = kBlock * kCount;
constexpr std::uint64_t kRate = 8000 * 1024;  // 8000K/s

// QEMU's burst model: seconds from the first request to the start of the last one.
double model_seconds(double rate) { return (kBytes - kBlock - rate / 10) / rate; }

struct DdRun {
  double bytes = 0;
  double seconds = 0;
};

struct Guest {
  std::vector<DdRun> runs;
  int max_segments = 0;
  int max_sectors_kb = 0;
  std::string console;
};

Guest boot_with_cap(const std::string& label, std::uint64_t rate, int runs) {
  static long serial = 0;
  const auto& g = test::shared().guest;
  DomainSpec s;
  s.name = domain_name("iotune-" + label, ++serial);
  s.kernel = g.kernel;
  s.initrd = g.initrd;
  s.cmdline = fmt::format("console=ttyS0 panic=-1 abvm_test=dd abvm_dd_bs=512K abvm_dd_count={} abvm_dd_runs={}",
                          kCount, runs);
  s.console_log = g.work / (s.name + ".console.log");
  s.disks = {{.path = g.work / (s.name + ".img")}};
  // Written out, as abvm's disk.preallocate does: no run pays for the host allocating blocks.
  write_file_atomic(s.disks[0].path, std::string(static_cast<std::size_t>(kBytes) * 2, '\0'));
  s.disks[0].options.iotune.total_bytes_sec = rate;
  auto out = test::shared().driver->run_guest(
      s, kTimeout, [](std::string_view c) { return c.find("ABVM-TEST-DONE") != std::string_view::npos; });
  EXPECT_EQ(to_string(out.end), "finished") << out.detail << "\n" << out.console;
  Guest r{.console = out.console};
  std::smatch m;
  if (std::regex_search(out.console, m, std::regex("ABVM-LIMITS ([0-9]+) ([0-9]+)"))) {
    r.max_segments = std::stoi(m[1]);
    r.max_sectors_kb = std::stoi(m[2]);
  }
  // Run i: its records-out line, and the printk times (microseconds) just before and after it.
  const std::regex dd(R"(ABVM-DD ([0-9]+) ([0-9]+)\+0 records out)");
  const std::regex mark(R"(ABVM-TIME \[ *([0-9]+\.[0-9]+)\] ABVM-T([01]) ([0-9]+))");
  std::map<int, std::array<double, 2>> times;
  for (auto it = std::sregex_iterator(out.console.begin(), out.console.end(), mark); it != std::sregex_iterator(); ++it) {
    times[std::stoi((*it)[3])][std::stoi((*it)[2])] = std::stod((*it)[1]);
  }
  for (auto it = std::sregex_iterator(out.console.begin(), out.console.end(), dd); it != std::sregex_iterator(); ++it) {
    const auto& t = times[std::stoi((*it)[1])];
    r.runs.push_back({std::stod((*it)[2]) * kBlock, t[1] - t[0]});
  }
  std::filesystem::remove(s.disks[0].path);
  return r;
}

double mean_seconds(const Guest& g) {
  double sum = 0;
  for (const auto& r : g.runs) sum += r.seconds;
  return sum / static_cast<double>(g.runs.size());
}

}  // namespace

TEST(GuestLibvirtIotune, ADirectDdGetsTheBurstModelsBandwidthAndACapOfNinetyPercentItsRatio) {
  ABVM_REQUIRE_LIBVIRT();
  const Guest a = boot_with_cap("a", kRate, kRuns);
  const Guest b = boot_with_cap("b", kRate * 9 / 10, kRuns);
  for (const Guest* g : {&a, &b}) {
    ASSERT_EQ(g->runs.size(), static_cast<std::size_t>(kRuns)) << g->console;
    // One request per block: 512K is within the guest's segment and size limits.
    EXPECT_GE(g->max_segments * 4, 512) << g->console;
    EXPECT_GE(g->max_sectors_kb, 512) << g->console;
  }
  for (const auto& [g, rate] : {std::pair{&a, double(kRate)}, std::pair{&b, kRate * 0.9}}) {
    const double model = model_seconds(rate);
    for (const DdRun& r : g->runs) {
      EXPECT_EQ(r.bytes, kBytes);
      // Never faster than the cap allows (the guest's clock to 10 ms); slower by L, which is
      // bounded well below the 0.1 s of the burst.
      EXPECT_GE(r.seconds - model, -0.010) << "rate " << rate << ": model " << model << " s";
      EXPECT_LE(r.seconds - model, 0.120) << "rate " << rate << ": model " << model << " s";
      std::printf("iotune: rate %.0f B/s: %.4f s, model %.4f s, L %+.1f ms\n", rate, r.seconds, model,
                  (r.seconds - model) * 1000);
    }
  }
  const double ratio = mean_seconds(a) / mean_seconds(b);  // bandwidth B / A
  const double expected = model_seconds(kRate) / model_seconds(kRate * 0.9);
  EXPECT_NEAR(expected, 0.8952, 0.0001);
  EXPECT_NEAR(ratio, expected, 0.02) << "A " << mean_seconds(a) << " s, B " << mean_seconds(b) << " s";
  std::printf("iotune: A %.4f s (model %.4f), B %.4f s (model %.4f), bandwidth ratio %.4f (model %.4f)\n",
              mean_seconds(a), model_seconds(kRate), mean_seconds(b), model_seconds(kRate * 0.9), ratio, expected);
}
