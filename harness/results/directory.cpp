#include "results/directory.hpp"


#include <fcntl.h>
#include <signal.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {
std::tm utc_tm(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}
}  // namespace

std::string utc_compact(std::chrono::system_clock::time_point t) {
  const std::tm tm = utc_tm(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string utc_iso8601(std::chrono::system_clock::time_point t) {
  const std::tm tm = utc_tm(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

fs::path create_results_dir(const fs::path& results_root, std::string_view experiment,
                            std::chrono::system_clock::time_point now) {
  std::error_code ec;
  fs::create_directories(results_root, ec);
  if (ec) throw InfraError(fmt::format("cannot create results directory {}: {}", results_root.string(), ec.message()));
  const std::string base = fmt::format("{}-{}", experiment, utc_compact(now));
  for (int n = 1; n < 1000; ++n) {
    const fs::path dir = results_root / (n == 1 ? base : fmt::format("{}-{}", base, n));
    // create_directory reports whether it made the directory: that makes the name ours.
    if (fs::create_directory(dir, ec)) return dir;
    if (ec) throw InfraError(fmt::format("cannot create results directory {}: {}", dir.string(), ec.message()));
  }
  throw InfraError(fmt::format("cannot find a free results directory name {}-N under {}", base,
                               results_root.string()));
}

ResultsLock::ResultsLock(const fs::path& dir) {
  const fs::path path = dir / ".lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InfraError(fmt::format("cannot open lock file {}: {}", path.string(), std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[32] = {};
    if (::pread(fd_, buf, sizeof buf - 1, 0) > 0) holder = fmt::format(" (pid {})", std::string(buf).substr(0, std::string(buf).find('\n')));
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw Error(fmt::format("{}: another abvm run is using this results directory{}; wait for it to end, or "
                              "stop it (Ctrl-C) and continue with 'abvm run --resume {}'",
                              dir.string(), holder, dir.string()));
    }
    throw InfraError(fmt::format("cannot lock {}: {}", path.string(), std::strerror(err)));
  }
  // The pid is only for the message above; the flock is what excludes.
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // Not fatal: the lock holds without the pid.
  }
}

ResultsLock::~ResultsLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string to_ledger_line(const LedgerEntry& e) {
  nlohmann::json j = {
      {"trial", e.trial},
      {"side", to_string(e.side)},
      {"outcome", to_string(e.outcome)},
      {"attempts", e.attempts},
      {"seconds", e.seconds},
      {"time", e.time},
      {"detail", e.detail},
  };
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<LedgerEntry> read_ledger(const fs::path& path, const std::function<void(const std::string&)>& warn) {
  std::vector<LedgerEntry> out;
  if (!fs::exists(path)) return out;
  const std::string text = read_file(path);
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t nl = text.find('\n', pos);
    const bool terminated = nl != std::string::npos;
    const std::string line = text.substr(pos, terminated ? nl - pos : std::string::npos);
    pos = terminated ? nl + 1 : text.size();
    if (line.empty()) continue;
    try {
      const auto j = nlohmann::json::parse(line);
      LedgerEntry e;
      e.trial = j.at("trial").get<std::string>();
      const auto side = parse_side(j.at("side").get<std::string>());
      if (!side) throw Error(fmt::format("unknown side '{}'", j.at("side").get<std::string>()));
      e.side = *side;
      const auto outcome = parse_outcome(j.at("outcome").get<std::string>());
      if (!outcome) throw Error(fmt::format("unknown outcome '{}'", j.at("outcome").get<std::string>()));
      e.outcome = *outcome;
      e.attempts = j.at("attempts").get<int>();
      e.seconds = j.at("seconds").get<double>();
      e.time = j.at("time").get<std::string>();
      e.detail = j.at("detail").get<std::string>();
      out.push_back(std::move(e));
    } catch (const std::exception& ex) {
      if (!terminated) {
        if (warn) warn(located(path.string(), line_no, "unfinished last line ignored (the writer was stopped)"));
        break;
      }
      throw Error(located(path.string(), line_no,
                          fmt::format("not a trial ledger line ({}); the results directory is damaged", ex.what())));
    }
  }
  return out;
}

std::set<std::string> done_trials(const std::vector<LedgerEntry>& ledger) {
  std::set<std::string> out;
  for (const auto& e : ledger) out.insert(e.trial);
  return out;
}

std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const auto at = name.rfind(".tmp.");
    if (at == std::string::npos || at + 5 >= name.size()) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(digits.c_str(), nullptr, 10);
    if (!process_alive(pid)) removed.push_back(it->path());
  }
  for (const auto& p : removed) std::filesystem::remove(p, ec);
  return removed;
}

}  // namespace abvm
