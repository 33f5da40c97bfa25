// The abvm binary's operator new puts large blocks on huge pages (core/huge_pages.hpp, the advice
// itself in core_huge_pages_test.cpp): seen here in the page faults of an analysis of 2 x 1M values.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "core/files.hpp"
#include "core/huge_pages.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"

namespace fs = std::filesystem;

// Not in a sanitizer build, whose binary keeps the sanitizer's operator new.
#if ABVM_HUGE_PAGE_NEW
// 2 x 1M values fault in about 280 MB of fresh memory. In 4 KiB pages that was 72,800 faults (main
// 5084a44); on huge pages about 15,000. Counted by getrusage over the child (RUSAGE_CHILDREN grows
// by each child waited for; the test runs no other).
TEST(CliAnalyzeMemory, TheBinarysAnalysisOfTwoMillionValuesFaultsInHugePages) {
  if (!abvm::huge_pages_on_request()) ABVM_SKIP_WITHOUT("transparent huge pages are off on this kernel");
  const fs::path dir = fs::temp_directory_path() / ("abvm-huge-pages-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> bandwidth(22.0, 0.3);
  for (const char* side : {"a.txt", "b.txt"}) {
    std::string text;
    for (int i = 0; i < 1'000'000; ++i) text += std::to_string(bandwidth(rng)) + "\n";
    abvm::write_file_atomic(dir / side, text);
  }
  rusage before{}, after{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  const auto r = abvm::run_process({ABVM_BINARY, "analyze", "--a", (dir / "a.txt").string(), "--b",
                                    (dir / "b.txt").string(), "--higher-is-better", "--unit", "B/s"});
  ::getrusage(RUSAGE_CHILDREN, &after);
  fs::remove_all(dir);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.err;
  const long faults = after.ru_minflt - before.ru_minflt;
  EXPECT_LT(faults, 36'000) << "minor page faults of `abvm analyze` at 2 x 1M: 4 KiB pages give about 72,800";
  EXPECT_GT(faults, 0);
}
#endif
