// The positive control of abvm bisect on real guests (label kernel-build: it builds kernels from
// Debian's linux-source-6.1 by the recipes and boots them under QEMU through libvirt's embedded
// driver). configs/bisect-control.toml bisects four patches of which the third bounces every
// virtio-blk request through swiotlb: `abvm bisect` must confirm the series is slower, search,
// name patch 3 and only it, find that patch 4 adds no share of its own, exit 1, and leave every
// step's results directory (journal, plan, analysis.json, report.html) linked from bisect.json
// and bisect.html. A second bisection of the same series builds nothing: every kernel the first
// one tested is already in the content-addressed cache.
//
// Reduced to stay short: 2 dd runs of 64 MiB per boot instead of 3 of 128 MiB (a bounced dd is
// 3-5 times slower, and at 128 MiB the culprit's own steps cost most of the time), at most 15
// blocks per step instead of 20 (Pocock-type looks after 10 and 15), and a lane on each of the two
// host CPUs (two blocks at once). The step's level, 99.29 %,
// needs at least 9 pairs for an exact signed-rank interval to reach it; the bounce costs far more
// than the 25 % margin and the harmless patches nothing, so a step normally decides at its first
// look. 7.6 and 10.9 minutes here under other work's load (load average 6-7 on 2 cores: the
// guests' CPU time is what it costs) once the kernels are cached (CI's first 6.1 build costs about 330 s more, shared with the other
// kernel-build tests, and each of the three patched kernels 15-90 s in the kept tree).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/files.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// configs/bisect-control.toml with each `from` replaced by its `to` (each must be there once).
std::string reduced_control() {
  std::string text = read_file(fs::path(ABVM_SOURCE_DIR) / "configs" / "bisect-control.toml");
  const std::pair<std::string, std::string> edits[] = {
      {"count = 16\n", "count = 8\n"},
      {"repetitions = 3\n", "repetitions = 2\n"},
      {"max_boots_per_side = 20\n", "max_boots_per_side = 15\n"},
  };
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "configs/bisect-control.toml no longer has '" << from << "': update this test";
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

fs::path only_subdirectory(const fs::path& dir) {
  fs::path out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) out = e.path();
  }
  return out;
}

TEST(BisectControlKernelBuildTest, TheSwiotlbBounceIsNamedAndNothingElse) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  if (!fs::exists("/usr/src/linux-source-6.1.tar.xz")) ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed");
  const fs::path dir = fs::temp_directory_path() / "abvm-bisect-control";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomic(dir / "bisect-control.toml", reduced_control());
  const auto started = std::chrono::steady_clock::now();
  const ProcessResult r = run_process(
      {ABVM_BINARY, "bisect", "--results-dir", (dir / "results").string(), (dir / "bisect-control.toml").string()},
      {.timeout = std::chrono::minutes(25)});
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const fs::path bisection = only_subdirectory(dir / "results");
  ASSERT_TRUE(fs::exists(bisection / "bisect.json")) << r.err;
  const json b = json::parse(read_file(bisection / "bisect.json"));
  std::cout << r.out << "wall time " << minutes << " min\n";

  EXPECT_EQ(b["outcome"], "culprits");
  EXPECT_EQ(b["status"], "finished");
  ASSERT_EQ(b["culprits"].size(), 1u) << b["sentence"];
  EXPECT_EQ(b["culprits"][0]["first"], 3) << b["sentence"];
  EXPECT_EQ(b["culprits"][0]["last"], 3) << b["sentence"];
  EXPECT_EQ(b["culprits"][0]["patches"][0], "0003-virtio_blk-bounce-every-request-through-swiotlb.patch");
  EXPECT_EQ(b["rest_unsettled"], false) << "patch 4 adds no share of its own: " << b["sentence"];
  const std::pair<int, int> asked[] = {{4, 0}, {2, 0}, {3, 0}, {4, 3}};
  const char* found[] = {"slower", "not-slower", "slower", "not-slower"};
  ASSERT_EQ(b["steps"].size(), 4u) << b.dump(2);
  for (std::size_t i = 0; i < 4; ++i) {
    const json& s = b["steps"][i];
    EXPECT_EQ(s["kernel"], asked[i].first) << i;
    EXPECT_EQ(s["reference"], asked[i].second) << i;
    EXPECT_EQ(s["finding"], found[i]) << i << ": " << s["reason"];
    const fs::path step = bisection / s["results_dir"].get<std::string>();
    for (const char* f : {"journal.jsonl", "plan.json", "config.toml", "kernels.json", "analysis.json", "report.html"}) {
      EXPECT_TRUE(fs::exists(step / f)) << step / f;
    }
    EXPECT_TRUE(fs::exists(bisection / s["report"].get<std::string>()));
    const json analysis = json::parse(read_file(step / "analysis.json"));
    EXPECT_EQ(analysis["options"]["primary_estimate"], "paired");
    EXPECT_EQ(analysis["source"]["design"], "co-scheduled");
  }
  // The bounce slows dd down far beyond the margin, and the harmless patches do not.
  EXPECT_LT(b["steps"][0]["effects"][0]["high"].get<double>(), 0.8);
  EXPECT_GT(b["steps"][1]["effects"][0]["low"].get<double>(), 0.75);
  const std::string html = read_file(bisection / "bisect.html");
  EXPECT_NE(html.find(b["steps"][2]["report"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);

  // A second bisection of the same series builds nothing: its kernel recipes (the same files in
  // another directory) are the cache entries the first one built.
  fs::create_directories(dir / "second");
  fs::copy(bisection / "kernels", dir / "second" / "kernels", fs::copy_options::recursive);
  for (int k : {0, 2, 3, 4}) {
    const ProcessResult built = run_process(
        {ABVM_BINARY, "kernel", "build", (dir / "second" / "kernels" / ("kernel-" + std::to_string(k) + ".toml")).string()},
        {.timeout = std::chrono::minutes(2)});
    EXPECT_EQ(built.exit_code, 0) << built.err;
    EXPECT_NE(built.out.find("cached   yes"), std::string::npos) << "kernel " << k << ":\n" << built.out << built.err;
  }
  if (r.exit_code == 1 && !::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace abvm
