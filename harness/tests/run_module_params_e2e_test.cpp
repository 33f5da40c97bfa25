// Module parameters on the kernel command line reach the modules the agent loads (issue 14).
// The Debian cloud kernel has virtio_blk as a module, which the agent loads with insmod; insmod,
// unlike modprobe, ignores the command line's "<module>.<param>=<value>" words, so side B's
// `cmdline_append = "virtio_blk.queue_depth=1"` once reached nothing and the run still "measured"
// a difference. The real `abvm run` boots real guests (TCG here): B's guests must report the
// parameters it set, A's the driver's defaults (as A's own guests report them), and the values
// must reach the trial records, the journal and analysis.json per side.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "core/files.hpp"
#include "environment_skip.hpp"
#include "core/process.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// B sets queue_depth in the module's own spelling and num_request_queues with a dash, which
// modprobe (and the kernel) read as the same module.
const char* kExperiment = R"(name = "module-params"
description = "module parameters end-to-end test"

[guest]
kernel = "debian-cloud"
accelerator = "tcg"

[disk]
size = "64M"

[sides.A]
label = "defaults"

[sides.B]
label = "queue-depth-1"
cmdline_append = "virtio_blk.queue_depth=1 virtio-blk.num_request_queues=1"

[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 4
oflag = ["direct"]
repetitions = 1

[schedule]
min_run_time = "0s"
seed = 14
boots_per_side = 2
boot_timeout = "60s"
run_timeout = "60s"
)";

class ModuleParamsE2ETest : public ::testing::Test {
 protected:
  fs::path dir;

  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
    dir = fs::temp_directory_path() / "abvm-module-params-e2e";
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!dir.empty() && !HasFailure()) fs::remove_all(dir);
  }

  // Runs the experiment to its end and returns its results directory.
  fs::path run_experiment() {
    const fs::path config = dir / "experiment.toml";
    write_file_atomic(config, kExperiment);
    const fs::path results = dir / "results";
    const ProcessResult r = run_process({ABVM_BINARY, "run", "--results-dir", results.string(), config.string()},
                                        {.timeout = std::chrono::minutes(9)});
    // A verdict's exit code (0, 1 or 4), never a user (2) or infrastructure (3) error.
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err;
    std::vector<fs::path> found;
    if (fs::exists(results)) {
      for (const auto& e : fs::directory_iterator(results)) found.push_back(e.path());
    }
    EXPECT_EQ(found.size(), 1u) << r.err;
    return found.empty() ? fs::path() : found[0];
  }
};

// side -> parameter -> the values its journal lines carried.
using SideValues = std::map<std::string, std::map<std::string, std::set<std::string>>>;

SideValues journal_values(const fs::path& journal) {
  SideValues out;
  std::istringstream in(read_file(journal));
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    const json params = j.value("guest", json::object()).value("module_params", json::object());
    EXPECT_FALSE(params.empty()) << "a journal line without the guest's module parameters: " << line;
    for (const auto& [name, value] : params.items()) out[j.at("side")][name].insert(value.get<std::string>());
  }
  return out;
}

TEST_F(ModuleParamsE2ETest, SideBsCommandLineReachesTheLoadedVirtioBlkModule) {
  const fs::path d = run_experiment();
  ASSERT_FALSE(d.empty());

  SideValues v = journal_values(d / "journal.jsonl");
  for (const char* p : {"virtio_blk.queue_depth", "virtio_blk.num_request_queues"}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(v["B"][p], std::set<std::string>{"1"});
    // A's default, as A's guests report it: one value on every boot, and not B's.
    ASSERT_EQ(v["A"][p].size(), 1u);
    EXPECT_NE(*v["A"][p].begin(), "1");
  }
  // The other modules that decide how the disk is driven are reported too.
  EXPECT_FALSE(v["A"]["virtio_pci.force_legacy"].empty());
  EXPECT_EQ(v["A"]["virtio_pci.force_legacy"], v["B"]["virtio_pci.force_legacy"]);

  // analysis.json: per side, each value with the number of boots that reported it.
  const json context = json::parse(read_file(d / "analysis.json")).at("context");
  const std::string a_default = *v["A"]["virtio_blk.queue_depth"].begin();
  EXPECT_EQ(context.at("b").at("module_params").at("virtio_blk.queue_depth"), json({{"1", 2}}));
  EXPECT_EQ(context.at("a").at("module_params").at("virtio_blk.queue_depth"), json({{a_default, 2}}));
  // The report says it per side.
  const std::string html = read_file(d / "report.html");
  const std::size_t b_row = html.find("<th>side B module parameters</th>");
  ASSERT_NE(b_row, std::string::npos);
  EXPECT_NE(html.find("virtio_blk.queue_depth=1 (2 boots)", b_row), std::string::npos);
  EXPECT_NE(html.find("virtio_blk.queue_depth=" + a_default + " (2 boots)"), std::string::npos);

  // Each trial's record holds what its guest reported.
  int trials = 0;
  for (const auto& t : fs::directory_iterator(d / "trials")) {
    const json result = json::parse(read_file(t.path() / "result.json"));
    const std::string expected = result.at("side") == "B" ? "1" : a_default;
    EXPECT_EQ(result.at("guest").at("module_params").value("virtio_blk.queue_depth", ""), expected) << t.path();
    EXPECT_TRUE(result.at("guest").at("agent_errors").empty()) << result.at("guest").at("agent_errors").dump();
    ++trials;
  }
  EXPECT_EQ(trials, 4);
}

}  // namespace
}  // namespace abvm
