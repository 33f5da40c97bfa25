#pragma once
// Skipping a test that needs something of the machine (guests, a kernel source, Chromium, the
// Debian mirror) is honest on a developer's machine that lacks it, and says why. CI provides the
// environment (harness/setup.sh, as root): there a skip would hide a test that never ran, so under
// CI=true the same condition fails the test instead.
//
// Only for what the machine lacks. A failure of abvm's own code (a parser, a download that the
// mirror answered, a guest that does not boot) is a failure everywhere, never a skip.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace abvm::test {

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

}  // namespace abvm::test

// Usable in a TEST body or a fixture's SetUp (both return void). `reason` is streamed.
#define ABVM_SKIP_WITHOUT(reason)                                                                  \
  do {                                                                                             \
    if (::abvm::test::running_in_ci()) {                                                           \
      FAIL() << "CI=true, and this machine lacks what the test needs (CI must provide it): "       \
             << reason;                                                                            \
    }                                                                                              \
    GTEST_SKIP() << reason;                                                                        \
  } while (0)
