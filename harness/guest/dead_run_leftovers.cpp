#include "guest/dead_run_leftovers.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>

#include "core/process.hpp"
#include "guest/domain_xml.hpp"
#include "guest/embedded_root.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm {
namespace {

// Every process of this machine with its command line, arguments joined by spaces.
struct ProcessArgs {
  pid_t pid;
  std::filesystem::path proc;  // /proc/<pid>
  std::string args;
};
std::vector<ProcessArgs> processes_with_args() {
  std::vector<ProcessArgs> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string args = read_proc(entry.path() / "cmdline");
    std::replace(args.begin(), args.end(), '\0', ' ');
    out.push_back({static_cast<pid_t>(std::strtol(pid.c_str(), nullptr, 10)), entry.path(), std::move(args)});
  }
  return out;
}

// The abvm pid in a domain name "abvm-<pid>[.<boot>]-...", or 0.
long abvm_pid_of(std::string_view name) {
  const auto owner = domain_owner(name);
  return owner ? owner->pid : 0;
}

}  // namespace

std::vector<pid_t> local_qemus_of(const std::string& name) {
  std::vector<pid_t> out;
  for (const auto& p : processes_with_args()) {
    if (p.args.find("qemu-system") != std::string::npos && p.args.find("guest=" + name + ",") != std::string::npos) {
      out.push_back(p.pid);
    }
  }
  return out;
}

// libvirt probes QEMU with a daemonized `qemu-system-* -machine none ... -qmp unix:<root>/lib/qemu/
// qmp-XXXXXX/qmp.monitor` and kills it when the probe is done; a process killed mid-probe leaves
// that QEMU running forever, reparented to init (found three times here). Called for a root no live
// process uses (this one's claim on the shared root, or a dead process's private root): every such
// QEMU naming it is a leftover. `prefix` (from the root up to "qmp-") may stop earlier: every QEMU
// whose socket path starts with it. Returns how many were killed.
int kill_leftover_probes(const std::string& prefix) {
  int killed = 0;
  for (const auto& p : processes_with_args()) {
    if (p.args.find("qemu-system") == std::string::npos || p.args.find("-machine none") == std::string::npos) continue;
    if (p.args.find("unix:" + prefix) == std::string::npos) continue;
    // Not a probe this process runs now (its QEMUs are its children: it is their subreaper).
    const std::string stat = read_proc(p.proc / "stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos && close + 4 < stat.size() &&
        std::strtol(stat.c_str() + close + 4, nullptr, 10) == ::getpid()) {
      continue;
    }
    killed += ::kill(p.pid, SIGKILL) == 0;
  }
  return killed;
}

void kill_probes_of_dead_private_roots() {
  const std::string dir = private_roots_dir().string() + "/";
  for (const auto& p : processes_with_args()) {
    const auto at = p.args.find("unix:" + dir);
    if (at == std::string::npos) continue;
    const long owner = std::strtol(p.args.c_str() + at + 5 + dir.size(), nullptr, 10);
    if (owner > 0 && !process_alive(owner)) kill_leftover_probes(dir + std::to_string(owner) + "/lib/qemu/qmp-");
  }
}

// libvirt keeps each domain's QEMU log (log/qemu/<name>.log) after the domain is gone: one or two
// files per trial, 800 in a day here. What a trial needs of it is in its results (the console,
// libvirt's reason for a failure); a run that is over no longer needs the rest.
void remove_logs_of_dead_runs(const std::filesystem::path& root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "log" / "qemu", ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".log")) continue;
    const long pid = abvm_pid_of(file);
    if (pid > 0 && !process_alive(pid)) std::filesystem::remove(entry.path(), ec);
  }
}

std::vector<std::string> LibvirtDriver::remove_stale_embedded_state(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  const fs::path state = root / "run" / "qemu";
  std::error_code ec;
  if (!fs::is_directory(state, ec)) return removed;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(state, ec)) {
    std::string file = entry.path().filename().string();
    for (const char* ext : {".xml.new", ".xml", ".pid"}) {
      if (file.ends_with(ext)) {
        std::string name = file.substr(0, file.size() - std::strlen(ext));
        long pid = abvm_pid_of(name);
        if (pid > 0 && !process_alive(pid)) names.insert(name);
        break;
      }
    }
  }
  for (const std::string& name : names) {
    // A QEMU still running for the dead run's domain: it is ours (its command line names the
    // domain), and nothing else will ever stop it.
    std::ifstream pidfile(state / (name + ".pid"));
    long qemu_pid = 0;
    if (pidfile >> qemu_pid && process_alive(qemu_pid)) {
      const std::string args = read_proc("/proc/" + std::to_string(qemu_pid) + "/cmdline");
      if (args.find("guest=" + name) != std::string::npos) ::kill(static_cast<pid_t>(qemu_pid), SIGKILL);
    }
    for (const char* ext : {".xml.new", ".xml", ".pid"}) fs::remove(state / (name + ext), ec);
    for (const fs::path& dir : {root / "lib" / "qemu", root / "lib" / "qemu" / "channel" / "target"}) {
      if (!fs::is_directory(dir, ec)) continue;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        // libvirt names them "domain-<id>-<name>".
        std::string file = entry.path().filename().string();
        if (file.starts_with("domain-") && file.ends_with("-" + name)) fs::remove_all(entry.path(), ec);
      }
    }
    removed.push_back(name);
  }
  return removed;
}

}  // namespace abvm
