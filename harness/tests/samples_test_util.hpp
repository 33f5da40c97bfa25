#pragma once
// Helpers shared by the samples_*_test.cpp files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm::test {

inline std::filesystem::path data(const std::string& relative) {
  return std::filesystem::path(ABVM_TEST_DATA) / relative;
}

inline std::string data_text(const std::string& relative) { return read_file(data(relative)); }

// The message of the abvm::Error that `f` throws ("" and a test failure if it throws none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected abvm::Error";
  return "";
}

// A fresh empty directory under the test temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::path(::testing::TempDir()) / ("abvm-samples-" + name)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace abvm::test
