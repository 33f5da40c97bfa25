// No silent skips: a test that lacks what the machine must give it skips with the reason on a
// developer's machine and fails under CI=true (environment_skip.hpp), and every skip in the tests
// goes through that one macro, so none can pass CI by skipping.
#include "environment_skip.hpp"
#include "scoped_env.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

void lacking_a_widget() { ABVM_SKIP_WITHOUT("the widget is not installed (harness/setup.sh installs it)"); }

// Runs `lacking_a_widget`, its results caught in `results` before they reach this test's own.
void run_lacking_a_widget(::testing::TestPartResultArray& results) {
  const ::testing::ScopedFakeTestPartResultReporter reporter(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
  lacking_a_widget();
}

TEST(CoreEnvironmentSkip, UnderCiTrueASkipIsAFailureThatSaysWhy) {
  const abvm::test::ScopedEnv ci("CI", "true");
  ::testing::TestPartResultArray results;
  run_lacking_a_widget(results);
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).fatally_failed());
  EXPECT_STREQ(results.GetTestPartResult(0).message(),
               "Failed\nCI=true, and this machine lacks what the test needs (CI must provide it): the widget is not "
               "installed (harness/setup.sh installs it)");
}

TEST(CoreEnvironmentSkip, ElsewhereItIsASkipThatSaysWhy) {
  const std::optional<std::string> unset;
  for (const auto& value : {unset, std::optional<std::string>("false"), std::optional<std::string>("1")}) {
    const abvm::test::ScopedEnv ci("CI", value);
    ::testing::TestPartResultArray results;
    run_lacking_a_widget(results);
    ASSERT_EQ(results.size(), 1);
    EXPECT_TRUE(results.GetTestPartResult(0).skipped()) << value.value_or("(unset)");
    EXPECT_STREQ(results.GetTestPartResult(0).message(), "the widget is not installed (harness/setup.sh installs it)");
  }
}

// A bare gtest skip anywhere else would skip under CI too, and pass it.
TEST(CoreEnvironmentSkip, EverySkipInTheTestsGoesThroughTheMacro) {
  const fs::path tests = fs::path(ABVM_SOURCE_DIR) / "harness" / "tests";
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tests)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    if (entry.path().filename() == "environment_skip.hpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    // Spelled in two pieces, so that this file does not find itself.
    EXPECT_EQ(text.str().find(std::string("GTEST_") + "SKIP"), std::string::npos)
        << entry.path() << ": skip with ABVM_SKIP_WITHOUT (environment_skip.hpp), which fails under CI=true";
  }
  EXPECT_GT(files, 50);
}

}  // namespace
