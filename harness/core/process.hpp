#pragma once
// Running other programs: always an argument vector, never a shell string.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace abvm {

struct ProcessResult {
  int exit_code = -1;       // exit status, or -1 when killed by a signal
  int signal = 0;           // the signal that ended it, 0 if it exited
  bool timed_out = false;   // we killed it after the timeout
  std::string out;          // captured standard output
  std::string err;          // captured standard error
};

struct ProcessOptions {
  std::optional<std::filesystem::path> cwd;
  std::optional<std::chrono::milliseconds> timeout;
  std::vector<std::string> extra_env;   // "NAME=value" entries added to the environment
  std::optional<std::string> stdin_data; // fed to standard input, else /dev/null
};

// Runs argv[0] (looked up in PATH) with the arguments, captures its output, waits.
// Throws InfraError when the program cannot be started at all (naming it).
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Like run_process, but throws InfraError with the command and the tail of stderr when
// it does not exit 0. Returns standard output.
std::string run_checked(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// True while run_process is waiting for this child: a reaper elsewhere must leave it alone.
bool is_run_process_child(long pid);

// A file under /proc of a process that may vanish while it is read (read(2) then fails with
// ESRCH): what could be read, maybe "".
std::string read_proc(const std::string& path);

// Whether process `pid` exists and is not a zombie: a killed process its parent has not reaped
// yet is dead, and whatever it left behind is stale.
bool process_alive(long pid);

// Full path of an executable found in PATH, if any.
std::optional<std::filesystem::path> find_program(const std::string& name);

// A command line for messages and logs (quoted where needed); never executed.
std::string describe_command(const std::vector<std::string>& argv);

// This machine's name (gethostname): journal lines and the host calibration carry it.
std::string host_name();

// This boot of this machine, as 8 hex digits of the kernel's random boot id
// (/proc/sys/kernel/random/boot_id; "0" when it cannot be read): a pid means one process only
// together with the boot it was given in. Containers share their host's boot id.
std::string boot_tag();

}  // namespace abvm
