#pragma once
// Helpers shared by the report_*_test.cpp and cli_report_*_test.cpp files: fixtures, a temporary
// directory, golden files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/files.hpp"

namespace abvm::test {

inline std::filesystem::path report_data(const std::string& relative) {
  return std::filesystem::path(ABVM_TEST_DATA) / relative;
}

// A fresh directory named after the running test, removed by the destructor.
class ReportTempDir {
 public:
  ReportTempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("abvm-report-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ReportTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Compares `actual` with the golden file; ABVM_UPDATE_GOLDEN=1 rewrites it instead (review the diff).
inline void expect_golden(const std::string& actual, const std::string& relative) {
  const auto path = report_data(relative);
  if (const char* u = std::getenv("ABVM_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    write_file_atomic(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing; make it with ABVM_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read_file(path)) << "differs from " << path << " (ABVM_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace abvm::test
