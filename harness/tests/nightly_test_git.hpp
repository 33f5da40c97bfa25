#pragma once
// Small local git repositories for the nightly's tests: a tree with a few files, commits made in
// the test (git is installed wherever abvm is built).
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm::test {

class GitRepo {
 public:
  explicit GitRepo(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    git({"init", "-q", "-b", "master"});
  }
  const std::filesystem::path& dir() const { return dir_; }

  std::string git(std::vector<std::string> args) const {
    args.insert(args.begin(), {"git", "-C", dir_.string(), "-c", "user.name=Night Tester", "-c",
                               "user.email=night@example.org", "-c", "commit.gpgsign=false"});
    return run_checked(args);
  }
  // Writes `files` (path -> text) and commits them; returns the sha.
  std::string commit(const std::string& subject, const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, text] : files) {
      std::filesystem::create_directories((dir_ / path).parent_path());
      write_file_atomic(dir_ / path, text);
      git({"add", path});
    }
    git({"commit", "-q", "--allow-empty", "-m", subject});
    return head();
  }
  std::string head() const { return rev("HEAD"); }
  std::string rev(const std::string& r) const {
    const std::string out = git({"rev-parse", r});
    return out.substr(0, out.find('\n'));
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace abvm::test
