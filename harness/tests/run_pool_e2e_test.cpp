// One real A/B experiment over a pool of three libvirt hosts on this machine, reached only
// through libvirt's remote protocol: two qemu+tcp:// daemons and one qemu+ssh:// (an sshd on
// 127.0.0.1), each in a mount namespace of its own with its own state, so they share nothing but
// the machine (libvirt_daemons.hpp). The hosts are named in the experiment's [hosts] table.
// While a block runs on one of the TCP hosts, its daemon is killed for good: that host leaves the
// pool, its block runs again, whole, on another host, and every block of the plan is in the
// ledger and the journal exactly once with both of its sides on one host. environment.json has
// one entry per host and analysis.json each host's own paired effect.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "core/files.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"
#include "libvirt_daemons.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kBlocks = 6;

std::string experiment(const std::vector<std::string>& uris) {
  std::vector<std::string> quoted;
  for (const auto& u : uris) quoted.push_back("\"" + u + "\"");
  return fmt::format(R"(name = "pool"
[guest]
kernel = "debian-cloud"
accelerator = "tcg"
[disk]
size = "64M"
[sides.A]
label = "direct"
[sides.B]
label = "dma-api"
device.iommu_platform = true
[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 4
oflag = ["direct"]
repetitions = 2
[schedule]
boots_per_side = {}
seed = 21
infra_retries = 1
[hosts]
uris = [{}]
)",
                     kBlocks, fmt::join(quoted, ", "));
}

std::vector<json> jsonl(const fs::path& p) {
  std::vector<json> out;
  std::error_code ec;
  if (!fs::exists(p, ec)) return out;
  std::istringstream in(read_file(p));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

fs::path results_dir(const fs::path& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (fs::exists(e.path() / "run.json")) return e.path();
  }
  return {};
}

TEST(PoolE2ETest, AHostKilledMidBlockLeavesThePoolAndEveryBlockRunsOnceOnOneHost) {
  if (const auto why = test::missing_for_test_daemons(true)) ABVM_SKIP_WITHOUT(*why);
  const fs::path dir = fs::temp_directory_path() / "abvm-pool-e2e";
  fs::remove_all(dir);
  fs::create_directories(dir);
  test::TestLibvirtds daemons(dir / "hosts", 3, /*ssh=*/true);
  std::string why;
  ASSERT_TRUE(daemons.start(&why)) << why;
  const std::vector<std::string> uris = {daemons[0].ssh_uri(), daemons[1].tcp_uri(), daemons[2].tcp_uri()};
  const std::string victim = uris[2];
  write_file_atomic(dir / "pool.toml", experiment(uris));

  auto abvm = std::async(std::launch::async, [&] {
    return run_process({ABVM_BINARY, "run", "--results-dir", (dir / "results").string(), (dir / "pool.toml").string()},
                       {.timeout = 12min});
  });
  // The victim dies while a guest of its block runs.
  bool running = false;
  for (auto end = std::chrono::steady_clock::now() + 400s; !running && std::chrono::steady_clock::now() < end;) {
    running = !daemons[2].qemus().empty();
    if (abvm.wait_for(50ms) == std::future_status::ready) break;
  }
  ASSERT_TRUE(running) << "no guest ever ran on " << victim;
  std::this_thread::sleep_for(1s);
  daemons[2].kill();
  ASSERT_EQ(abvm.wait_for(11min), std::future_status::ready);
  const ProcessResult r = abvm.get();
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
  EXPECT_NE(r.err.find(fmt::format("host {} leaves the pool", victim)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fmt::format("moves to another host ({} failed)", victim)), std::string::npos) << r.err;

  const fs::path d = results_dir(dir / "results");
  ASSERT_FALSE(d.empty());
  const json plan = json::parse(read_file(d / "plan.json"));
  ASSERT_EQ(plan.at("trials").size(), 2u * kBlocks);
  // The ledger: every planned trial once, ok.
  std::map<std::string, int> ledger;
  for (const json& t : jsonl(d / "trials.jsonl")) {
    ++ledger[t.at("trial").get<std::string>()];
    EXPECT_EQ(t.at("outcome"), "ok") << t.dump();
  }
  // Each block: both sides on one host, a host of the pool; each trial's two runs in the journal.
  std::map<std::string, int> journal;
  for (const json& e : jsonl(d / "journal.jsonl")) ++journal[e.at("trial").get<std::string>()];
  std::map<long, std::set<std::string>> block_hosts;
  std::map<std::string, int> blocks_per_host;
  for (const json& t : plan.at("trials")) {
    const std::string id = t.at("id");
    EXPECT_EQ(ledger[id], 1) << id;
    EXPECT_EQ(journal[id], 2) << id;
    const json result = json::parse(read_file(d / "trials" / id / "result.json"));
    const std::string host = result.at("host");
    EXPECT_NE(std::find(uris.begin(), uris.end(), host), uris.end()) << id << " ran on " << host;
    block_hosts[t.at("block").get<long>()].insert(host);
  }
  ASSERT_EQ(block_hosts.size(), static_cast<std::size_t>(kBlocks));
  for (const auto& [block, hosts] : block_hosts) {
    EXPECT_EQ(hosts.size(), 1u) << "block " << block << " was split over hosts";
    ++blocks_per_host[*hosts.begin()];
  }
  // The victim finished no block after it died; the others ran the rest.
  EXPECT_GE(blocks_per_host[uris[0]] + blocks_per_host[uris[1]], kBlocks - blocks_per_host[victim]);
  EXPECT_GT(blocks_per_host[uris[0]], 0) << "the ssh host ran no block";
  EXPECT_GT(blocks_per_host[uris[1]], 0) << "the tcp host ran no block";
  // One environment entry per host, each as libvirt told it over its own connection.
  const json env = json::parse(read_file(d / "environment.json"));
  ASSERT_EQ(env.at("hosts").size(), uris.size());
  for (std::size_t i = 0; i < uris.size(); ++i) EXPECT_EQ(env["hosts"][i].at("libvirt_uri"), uris[i]);
  // Each host's paired effect over its own blocks, next to the pooled verdict.
  const json analysis = json::parse(read_file(d / "analysis.json"));
  const json& per_host = analysis.at("metrics").at(0).at("hosts");
  ASSERT_TRUE(per_host.is_object()) << per_host.dump();
  long counted = 0;
  for (const json& h : per_host.at("hosts")) {
    const std::string host = h.at("host");
    EXPECT_EQ(h.at("blocks").get<int>(), blocks_per_host[host]) << host;
    counted += h.at("blocks").get<long>();
    if (h.at("blocks").get<int>() >= 2) {
      EXPECT_TRUE(h.at("paired_effect").is_object()) << h.dump();
    }
  }
  EXPECT_EQ(counted, kBlocks);
  EXPECT_TRUE(per_host.at("p").is_number()) << per_host.dump();
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace abvm
