// The pool scheduler at a scale this machine cannot boot (issue 12 item 7): the real Orchestrator
// with the tests' scripted fake driver (harness/tests/fake_driver.hpp, emulating the agent, no
// QEMU) on HOSTS simulated hosts and BLOCKS A/B blocks, some hosts becoming unreachable at random
// moments and some guests failing for infrastructure reasons. It prints what a pool must get
// right: blocks lost (must be 0), trials counted twice (0), blocks split over two hosts (0), the
// balance of blocks per host, and the scheduler's overhead per block.
//
// usage: abvm_pool_simulation_tool [HOSTS=100] [BLOCKS=10000] [SEED=1] [DIR=/dev/shm]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../tests/fake_driver.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "results/directory.hpp"
#include "run/orchestrator.hpp"

namespace {
namespace fs = std::filesystem;
using namespace abvm;

// A simulated host: unreachable from boot `dies_at` on (never when 0), and each boot ends in an
// infrastructure error with probability `infra_rate`.
struct SimHost : test::FakeDriver {
  SimHost(std::string name, int dies_at, double infra_rate, std::uint64_t seed)
      : FakeDriver(std::move(name)), dies_at_(dies_at), infra_rate_(infra_rate), rng_(seed) {}
  using GuestDriver::run_guest;
  GuestOutcome run_guest(const DomainSpec& s, std::chrono::milliseconds t, const ConsoleHooks& h) override {
    const int n = ++calls_;
    if (dies_at_ > 0 && n >= dies_at_) throw InfraError(fmt::format("libvirt: the connection to '{}' was lost", describe()));
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < infra_rate_) {
      return {.end = GuestOutcome::End::infra_error, .detail = "could not start"};
    }
    return FakeDriver::run_guest(s, t, h);
  }

 private:
  int dies_at_;
  double infra_rate_;
  std::mt19937_64 rng_;
  std::atomic<int> calls_ = 0;
};

struct CountingSink : TrialSink {
  std::map<std::string, int> seen;            // trial -> times handed over
  std::map<int, std::set<std::string>> hosts; // block -> hosts its trials ran on
  std::map<std::string, int> per_host;        // host -> trials
  void on_trial_finished(const TrialResult& r) override {
    ++seen[r.trial.id];
    hosts[r.trial.block].insert(r.host);
    ++per_host[r.host];
  }
};

std::vector<Trial> plan(int blocks, std::uint64_t seed) {
  std::vector<Trial> out;
  std::mt19937_64 rng(seed);
  for (int b = 0; b < blocks; ++b) {
    const bool a_first = rng() & 1;
    for (Side s : {a_first ? Side::a : Side::b, a_first ? Side::b : Side::a}) {
      const int pos = static_cast<int>(out.size());
      out.push_back({.id = fmt::format("t{:05d}", pos), .side = s, .block = b, .position = pos});
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 100;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 10000;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  const fs::path dir = fs::path(argc > 4 ? argv[4] : "/dev/shm") / fmt::format("abvm-pool-sim-{}", ::getpid());
  fs::create_directories(dir);
  write_file_atomic(dir / "base.cpio.gz", std::string(1000, 'x'));

  // A third of the hosts die at a random boot; every boot fails for infrastructure reasons 1 % of the time.
  std::mt19937_64 rng(seed);
  const int expected_boots = 2 * blocks / std::max(1, hosts);
  std::vector<std::unique_ptr<SimHost>> sims;
  std::vector<HostDriver> drivers;
  ExecutionSpec spec;
  spec.results_dir = dir;
  spec.base_image = dir / "base.cpio.gz";
  spec.a = {.label = "a", .kernel = "/k/a", .cmdline = "console=ttyS0"};
  spec.b = {.label = "b", .kernel = "/k/b", .cmdline = "console=ttyS0"};
  spec.workloads = {Workload{.name = "dd-write", .spec = DdWorkload{}, .repetitions = 1}};
  spec.infra_retries = 0;
  spec.lanes.clear();
  int doomed = 0;
  for (int h = 0; h < hosts; ++h) {
    const bool dies = std::uniform_real_distribution<double>(0, 1)(rng) < 1.0 / 3;
    const int at = dies ? 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(std::max(1, 2 * expected_boots))) : 0;
    doomed += dies;
    sims.push_back(std::make_unique<SimHost>(fmt::format("sim://host{:03d}", h), at, 0.01, seed * 1000 + h));
    sims.back()->emulate_agent = true;
    sims.back()->agent_output = "16777216 bytes (17 MB, 16 MiB) copied, 0.01 s, 1.7 GB/s\n";
    drivers.push_back({.name = sims.back()->describe(), .driver = sims.back().get()});
    spec.lanes.push_back({.name = sims.back()->describe(), .host = static_cast<std::size_t>(h)});
  }
  CountingSink sink;
  int moves = 0, departures = 0;
  Orchestrator o(drivers, spec, sink);
  const std::vector<Trial> trials = plan(blocks, seed);
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    o.run(trials, {}, {.note = [&](const std::string& n) {
             moves += n.find("moves to another host") != std::string::npos;
             departures += n.find("leaves the pool") != std::string::npos;
           }});
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::size_t lost = 0, twice = 0, split = 0;
  for (const Trial& t : trials) {
    const auto it = sink.seen.find(t.id);
    if (it == sink.seen.end()) ++lost;
    else if (it->second > 1) ++twice;
  }
  for (const auto& [block, on] : sink.hosts) split += on.size() > 1;
  const std::size_t ledger = read_ledger(dir / "trials.jsonl").size();
  std::vector<int> per_host;
  for (const auto& d : drivers) per_host.push_back(sink.per_host[d.name] / 2);
  std::sort(per_host.begin(), per_host.end());
  std::vector<int> alive;
  for (std::size_t h = 0; h < per_host.size(); ++h) {
    if (per_host[h] > 0) alive.push_back(per_host[h]);
  }
  std::printf("abvm pool simulation: %d hosts (%d die at a random boot), %d blocks, 1 %% infra errors, seed %llu\n",
              hosts, doomed, blocks, static_cast<unsigned long long>(seed));
  if (!error.empty()) std::printf("run ended with: %s\n", error.c_str());
  std::printf("trials handed over   %zu of %zu (ledger lines %zu)\n", sink.seen.size(), trials.size(), ledger);
  std::printf("blocks lost          %zu\n", lost / 2 + lost % 2);
  std::printf("trials counted twice %zu\n", twice);
  std::printf("blocks split over two hosts %zu\n", split);
  std::printf("hosts that left the pool %d, blocks moved to another host %d\n", departures, moves);
  std::printf("blocks per host      min %d, median %d, max %d (hosts that ran any: %zu)\n",
              alive.empty() ? 0 : alive.front(), alive.empty() ? 0 : alive[alive.size() / 2],
              alive.empty() ? 0 : alive.back(), alive.size());
  std::printf("scheduler overhead   %.3f ms per block (%.1f s wall for %d blocks, guests take no time)\n",
              1000 * seconds / blocks, seconds, blocks);
  fs::remove_all(dir);
  return lost == 0 && twice == 0 && split == 0 && error.empty() ? 0 : 1;
}
