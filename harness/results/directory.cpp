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
#include "core/json_read.hpp"
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

fs::path TrialFiles::attempt_console_log(int attempt) const {
  return dir / fmt::format("console.attempt{}.log", attempt);
}

fs::path TrialFiles::run_output(std::string_view workload, bool warmup, int index) const {
  return dir / fmt::format("{}-{}{}.out", workload, warmup ? "warmup" : "run", index);
}

fs::path ResultsDir::trial_relative(std::string_view id) { return fs::path("trials") / std::string(id); }

ResultsDir ResultsDir::open_run(const fs::path& dir) {
  const ResultsDir d(dir);
  if (!fs::exists(d.manifest()) || !fs::exists(d.plan())) {
    throw Error(fmt::format("{}: not an abvm results directory (no run.json/plan.json); give the directory "
                            "'abvm run' printed",
                            dir.string()));
  }
  return d;
}

bool ResultsDir::holds_journal(const fs::path& dir) { return fs::exists(ResultsDir(dir).journal()); }

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::complete: return "complete";
    case RunStatus::stopped: return "stopped";
    case RunStatus::failed: return "failed";
  }
  return "?";
}

void read_json(const JsonField& f, RunStatus& status) {
  const auto parse = [](std::string_view word) -> std::optional<RunStatus> {
    for (const RunStatus s : {RunStatus::running, RunStatus::complete, RunStatus::stopped, RunStatus::failed}) {
      if (word == to_string(s)) return s;
    }
    return std::nullopt;
  };
  status = f.word<RunStatus>(parse, "\"running\", \"complete\", \"stopped\" or \"failed\"");
}

void read_json(const JsonField& f, RunManifest& m) {
  m.abvm_version = f.required<std::string>("abvm_version");
  m.config = f.required<std::string>("config");
  m.config_dir = f.required<std::string>("config_dir");
  m.uri = f.required<std::string>("uri");
  m.started = f.required<std::string>("started");
  m.status = f.required<RunStatus>("status");
  m.uris = f.value_or<std::vector<std::string>>("uris", {});
  m.stop_reason = f.value_or<std::string>("stop_reason", "");
  m.failure = f.value_or<std::string>("failure", "");
  m.final_confidence = f.optional<double>("final_confidence");
}

RunManifest read_manifest(const ResultsDir& dir) {
  return JsonDocument::read(dir.manifest(), kDamagedResultsDir).root().as<RunManifest>();
}

void write_manifest(const ResultsDir& dir, const RunManifest& m) {
  nlohmann::json j = {{"abvm_version", m.abvm_version}, {"config", m.config.string()},
                      {"config_dir", m.config_dir.string()}, {"uri", m.uri},
                      {"started", m.started}, {"status", to_string(m.status)}};
  if (!m.uris.empty()) j["uris"] = m.uris;
  if (!m.stop_reason.empty()) j["stop_reason"] = m.stop_reason;
  if (!m.failure.empty()) j["failure"] = m.failure;
  if (m.final_confidence) j["final_confidence"] = *m.final_confidence;
  write_file_atomic(dir.manifest(), j.dump(2) + "\n");
}

Experiment load_saved_experiment(const ResultsDir& dir, const RunManifest& manifest) {
  return load_experiment_text(read_file(dir.config()), manifest.config.string(), manifest.config_dir);
}

Plan read_plan(const ResultsDir& dir) {
  return JsonDocument::read(dir.plan(), kDamagedResultsDir).root().as<Plan>();
}

void write_plan(const ResultsDir& dir, const Plan& plan) {
  write_file_atomic(dir.plan(), plan_to_json(plan).dump(2) + "\n");
}

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
  const fs::path path = ResultsDir(dir).lock_file();
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

void read_json(const JsonField& f, LedgerEntry& e) {
  e.trial = f.required<std::string>("trial");
  e.side = f.required<Side>("side");
  e.outcome = f.required<Outcome>("outcome");
  e.attempts = f.required<int>("attempts");
  e.seconds = f.required<double>("seconds");
  e.time = f.required<std::string>("time");
  e.detail = f.required<std::string>("detail");
}

std::vector<LedgerEntry> read_ledger(const fs::path& path, const JsonlWarning& warn) {
  std::vector<LedgerEntry> out;
  const auto parse = [&](std::string_view line, std::size_t line_no) {
    const JsonDocument doc(line, JsonSource{.file = path.string(), .line = line_no, .remedy = kDamagedResultsDir});
    out.push_back(doc.root().as<LedgerEntry>());
  };
  read_jsonl(path, parse, warn, true);
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
