#include "core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <fmt/format.h>

#include "core/error.hpp"

extern char** environ;

namespace abvm {
namespace {

std::mutex g_children_mutex;
std::set<long> g_children;  // children run_process is waiting for

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw InfraError(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() { close_end(0); close_end(1); }
};

}  // namespace

bool is_run_process_child(long pid) {
  std::lock_guard lock(g_children_mutex);
  return g_children.contains(pid);
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (!candidate.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::string describe_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

namespace {

// The child's three pipes, parent ends as run_process uses them.
struct ChildPipes {
  Pipe out, err, in;
};

// Starts argv in its own process group with stdin from the pipe (or /dev/null), stdout and
// stderr into the pipes, and records it as a run_process child.
pid_t spawn_child(const std::filesystem::path& exe, const std::vector<std::string>& argv,
                  const ProcessOptions& options, ChildPipes& pipes) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.stdin_data) {
    posix_spawn_file_actions_adddup2(&actions, pipes.in.fd[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, pipes.out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipes.err.fd[1], 2);
  if (options.cwd) posix_spawn_file_actions_addchdir_np(&actions, options.cwd->c_str());

  // The child gets its own process group so that a timeout kills everything it started.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  for (const auto& e : options.extra_env) env_store.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args_store = argv;
  std::vector<char*> args;
  for (auto& a : args_store) args.push_back(a.data());
  args.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw InfraError(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc)));
  {
    std::lock_guard lock(g_children_mutex);
    g_children.insert(pid);
  }
  return pid;
}

// Feeds stdin_data and collects stdout and stderr until both close, or kills the child's
// process group at the timeout.
void exchange_with_child(pid_t pid, ChildPipes& pipes, const ProcessOptions& options, ProcessResult& result) {
  Pipe& in = pipes.in;
  Pipe& out = pipes.out;
  Pipe& err = pipes.err;
  out.close_end(1);
  err.close_end(1);
  in.close_end(0);
  std::string input = options.stdin_data.value_or("");
  std::size_t input_pos = 0;
  if (!options.stdin_data) {
    in.close_end(1);
  } else {
    // Non-blocking, so that a child which writes while it reads (gzip) cannot deadlock with us
    // on a full pipe: we keep draining its output between partial writes.
    ::fcntl(in.fd[1], F_SETFL, ::fcntl(in.fd[1], F_GETFL) | O_NONBLOCK);
    if (input.empty()) in.close_end(1);
  }

  auto deadline = options.timeout ? std::optional(std::chrono::steady_clock::now() + *options.timeout)
                                  : std::nullopt;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd fds[3];
    int nfds = 0;
    int idx_out = -1, idx_err = -1, idx_in = -1;
    if (out.fd[0] >= 0) { idx_out = nfds; fds[nfds++] = {out.fd[0], POLLIN, 0}; }
    if (err.fd[0] >= 0) { idx_err = nfds; fds[nfds++] = {err.fd[0], POLLIN, 0}; }
    if (in.fd[1] >= 0) { idx_in = nfds; fds[nfds++] = {in.fd[1], POLLOUT, 0}; }
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    int n = ::poll(fds, static_cast<nfds_t>(nfds), wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    auto drain = [&](int idx, Pipe& p, std::string& dest) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t r = ::read(p.fd[0], buf, sizeof buf);
      if (r > 0) dest.append(buf, static_cast<std::size_t>(r));
      else if (r == 0 || errno != EINTR) p.close_end(0);
    };
    drain(idx_out, out, result.out);
    drain(idx_err, err, result.err);
    if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(in.fd[1], input.data() + input_pos, input.size() - input_pos);
      if (w > 0) input_pos += static_cast<std::size_t>(w);
      bool retry = w < 0 && (errno == EAGAIN || errno == EINTR);
      if ((w < 0 && !retry) || input_pos >= input.size()) in.close_end(1);
    }
  }
  in.close_end(1);
}

// Waits for the child and records how it ended.
void reap_child(pid_t pid, ProcessResult& result) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(g_children_mutex);
    g_children.erase(pid);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw InfraError("run_process: empty command");
  auto exe = find_program(argv[0]);
  if (!exe) throw InfraError(fmt::format("cannot run '{}': program not found in PATH", argv[0]));

  ChildPipes pipes;
  const pid_t pid = spawn_child(*exe, argv, options, pipes);
  ProcessResult result;
  exchange_with_child(pid, pipes, options, result);
  reap_child(pid, result);
  return result;
}

std::string run_checked(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult r = run_process(argv, options);
  if (r.exit_code == 0 && !r.timed_out) return std::move(r.out);
  std::string tail = r.err.size() > 2000 ? r.err.substr(r.err.size() - 2000) : r.err;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  std::string how = r.timed_out ? "timed out"
                    : r.signal ? fmt::format("was killed by signal {}", r.signal)
                               : fmt::format("exited with status {}", r.exit_code);
  throw InfraError(fmt::format("command {} {}{}{}", describe_command(argv), how,
                               tail.empty() ? "" : ":\n", tail));
}

// A file under /proc of a process that may vanish while we read it: read(2) then fails with
// ESRCH, which std::ifstream turns into an exception. Returns what could be read, maybe "".
std::string read_proc(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fd);
  return out;
}

bool process_alive(long pid) {
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM)) return false;
  const std::string stat = read_proc("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return !(close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z');
}

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string boot_tag() {
  static const std::string tag = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id, hex;
    std::getline(in, id);
    for (char c : id) {
      if (std::isxdigit(static_cast<unsigned char>(c)) && hex.size() < 8) hex += static_cast<char>(std::tolower(c));
    }
    return hex.size() == 8 ? hex : std::string("0");
  }();
  return tag;
}

}  // namespace abvm
