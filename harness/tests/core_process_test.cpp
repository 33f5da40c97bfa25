#include "core/process.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace abvm;

TEST(CoreProcess, CapturesOutputAndExitCode) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(CoreProcess, ArgumentsAreNotInterpretedByAShell) {
  auto r = run_process({"printf", "%s", "$(echo no) ; `x` 'q'"});
  EXPECT_EQ(r.out, "$(echo no) ; `x` 'q'");
}

TEST(CoreProcess, TimeoutKillsTheProcessGroup) {
  auto r = run_process({"sh", "-c", "sleep 30 & sleep 30"}, {.timeout = std::chrono::milliseconds(200)});
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.signal, 0);
}

TEST(CoreProcess, FeedsStandardInput) {
  auto r = run_process({"cat"}, {.stdin_data = std::string("hello")});
  EXPECT_EQ(r.out, "hello");
}

TEST(CoreProcess, MissingProgramIsAnInfraErrorNamingIt) {
  try {
    run_process({"abvm-no-such-program"});
    FAIL();
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("abvm-no-such-program"), std::string::npos);
  }
}

TEST(CoreProcess, RunCheckedThrowsWithStderrTail) {
  try {
    run_checked({"sh", "-c", "echo broken >&2; exit 1"});
    FAIL();
  } catch (const InfraError& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("status 1"), std::string::npos);
  }
}

TEST(CoreProcess, LargeInputToAFilterThatWritesWhileItReadsDoesNotDeadlock) {
  // 8 MiB through gzip: gzip fills its stdout pipe long before it has read all its input.
  std::string input(8 << 20, '\0');
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>((i * 2654435761u) >> 13);
  auto r = run_process({"gzip", "-1", "-c"}, {.timeout = std::chrono::milliseconds(60000), .stdin_data = input});
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  auto back = run_process({"gzip", "-d", "-c"}, {.timeout = std::chrono::milliseconds(60000), .stdin_data = r.out});
  EXPECT_EQ(back.out.size(), input.size());
  EXPECT_TRUE(back.out == input);
}
