// The rehearsal of abvm's nightly job on real guests (label kernel-build: it builds kernels from a
// git tree of Debian's linux-source-6.1 by the tinyconfig recipe and boots them under QEMU through
// libvirt's embedded driver). It runs .ci/nightly-rehearsal.py, where the rehearsal and every
// check of it are spelled (README, "nightly"): three nights of a local tree (the base; a harmless
// commit, no_change; the commit that bounces every virtio-blk request through swiotlb and a
// harmless one after it, a regression whose bisection names the bouncing commit and nothing
// else), the history page with three nights and night 3's KCIDB export valid against the schema.
//
// It replaced cli_bisect_kernel_build_test (abvm bisect's positive control, configs/bisect-control.toml
// reduced the same way: 2 dd runs of 64 MiB per boot, at most 15 blocks per step), and
// the script checks night 3's bisection as that test checked the control's: the culprit alone named,
// the commit after it adding no share of its own (rest_unsettled), each step's finding and size,
// each step's results directory complete and linked from bisect.json and bisect.html, exit 1; and
// every kernel the nights built is a cache hit when its recipe, copied elsewhere, is built again.
// What needs no real guest stays in the unit tests: the four-patch search order and its culprit
// (cli_bisect_test), the one-culprit bisect.html (bisect_report_test), the nights' bookkeeping
// (cli_nightly_test).
//
// The tree is made once in the script's workdir (/var/tmp/abvm-nightly-rehearsal/linux, objects
// stored uncompressed) and kept; on CI's fresh machine it is made every time.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "core/process.hpp"
#include "environment_skip.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

// The script's check lines: "rehearsal: ok  ..." or "rehearsal: FAILED ...", one per check.
int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(NightlyRehearsalKernelBuildTest, ThreeNightsOfALocalTreeAndTheBouncingCommitNamed) {
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 is not installed");
  if (!find_program("git")) ABVM_SKIP_WITHOUT("git is not installed");
  if (!fs::exists("/usr/src/linux-source-6.1.tar.xz")) ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed");
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh --tests)");
  }
  const auto started = std::chrono::steady_clock::now();
  // Under ctest's timeout of the kernel-build label (1800 s), so that a rehearsal out of time shows its output.
  const std::string script = (fs::path(ABVM_SOURCE_DIR) / ".ci" / "nightly-rehearsal.py").string();
  const ProcessResult r = run_process({script, "--abvm", ABVM_BINARY}, {.timeout = std::chrono::minutes(29)});
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  std::cout << r.out << "wall time " << minutes << " min\n";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "rehearsal: FAILED"), 0) << r.err;
  // 3 nights, night 3's report, 4 of night 3's bisection, 1 of the kernels built again, the history
  // page, the KCIDB export.
  EXPECT_EQ(count_of(r.out, "rehearsal: ok "), 11) << "a check of the rehearsal went missing:\n" << r.out;
}

}  // namespace
}  // namespace abvm
