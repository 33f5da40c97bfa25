// The resource locator's rules (core/resources.hpp) as seen from a test binary, which lies in the
// build tree: the source tree by default, ABVM_DATA_DIR when set, errors that name what is wrong.
// The installed case (<prefix>/share/abvm) is cli_install_test.cpp's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/resources.hpp"
#include "scoped_env.hpp"

using namespace abvm;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// ABVM_DATA_DIR set (or unset, with nullopt) for one test, and restored afterwards.
class DataDirVariable : public test::ScopedEnv {
 public:
  explicit DataDirVariable(const std::optional<std::string>& value) : ScopedEnv("ABVM_DATA_DIR", value) {}
};

fs::path fresh_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("abvm-resources-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The smallest directory the locator accepts as abvm's data.
void make_minimal_data_dir(const fs::path& d) {
  fs::create_directories(d / "report");
  fs::create_directories(d / "guests");
  fs::create_directories(d / "kernels");
  std::ofstream(d / "report/template.html") << "{{title}}{{body}}";
  std::ofstream(d / "guests/base.toml") << "";
}

}  // namespace

TEST(CoreResources, InTheBuildTreeTheDataIsTheSourceTree) {
  DataDirVariable unset(std::nullopt);
  EXPECT_EQ(data_dir(), fs::path(ABVM_SOURCE_DIR).lexically_normal());
  EXPECT_EQ(resource("report/plot.py"), fs::path(ABVM_SOURCE_DIR).lexically_normal() / "report/plot.py");
  EXPECT_TRUE(fs::is_regular_file(resource("guests/agent/init.sh")));
  EXPECT_TRUE(fs::is_directory(resource("kernels/patches/virtio-dma-api")));
}

TEST(CoreResources, TheVariableOverridesTheBuildTree) {
  const fs::path d = fresh_dir("override");
  make_minimal_data_dir(d);
  {
    DataDirVariable set(d.string());
    EXPECT_EQ(data_dir(), d);
    EXPECT_EQ(resource("report/template.html"), d / "report/template.html");
  }
  fs::remove_all(d);
}

TEST(CoreResources, AVariableNotHoldingTheDataIsAnErrorNamingIt) {
  const fs::path d = fresh_dir("bogus");
  DataDirVariable set(d.string());
  try {
    data_dir();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "ABVM_DATA_DIR=" + d.string() +
                                         " does not hold abvm's data (no report/template.html there): point it at "
                                         "an installed share/abvm directory or at abvm's source tree, or unset it");
  }
  fs::remove_all(d);
}

TEST(CoreResources, AnEmptyVariableCountsAsUnset) {
  DataDirVariable set(std::string{});
  EXPECT_EQ(data_dir(), fs::path(ABVM_SOURCE_DIR).lexically_normal());
}

TEST(CoreResources, AMissingResourceNamesTheFileTheDirectoryAndWhy) {
  const fs::path d = fresh_dir("missing");
  make_minimal_data_dir(d);
  {
    DataDirVariable set(d.string());
    try {
      resource("report/plot.py");
      FAIL() << "expected an InfraError";
    } catch (const InfraError& e) {
      EXPECT_EQ(std::string(e.what()), "abvm's report/plot.py is missing: " + (d / "report/plot.py").string() +
                                           " does not exist (data directory " + d.string() +
                                           ", from ABVM_DATA_DIR); reinstall abvm, or set ABVM_DATA_DIR to a "
                                           "complete data directory");
    }
  }
  fs::remove_all(d);
}

TEST(CoreResources, ResultsLandUnderTheWorkingDirectory) {
  EXPECT_EQ(default_results_root(), fs::current_path() / "results");
}
