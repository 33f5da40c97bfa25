#include "guest/qemu_reaper.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/process.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm {
namespace {

// QEMU daemonizes, so its parent is init, and libvirt waits for it to vanish (polling every
// 200 ms, up to 15 s). An init that reaps orphans slowly (this machine's reaps every ~1.5 s)
// makes every stop of a guest that slow. So abvm makes itself the subreaper of its embedded QEMUs
// (see LibvirtDriver's constructor) and a thread reaps zombie QEMU children as soon as
// they exit, whoever stopped them (also a QEMU that fails inside virDomainCreateXML); a child
// that run_process waits for is left alone, so no other exit status is ever taken.
//
// A QEMU that cannot start (a missing kernel file, say) fails before exec, in libvirt's
// daemonized grandchild, which still carries our name: it is recognised by being an orphan of
// another session (libvirt's intermediate child calls setsid() and exits). Left unreaped, the
// zombie looks alive to libvirt, which then waits the whole monitor timeout (about 40 s).

// Zombie children of this process that LibvirtDriver::reapable_zombie gives to the reaper, and
// that run_process is not waiting for.
std::vector<pid_t> zombie_qemu_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  const pid_t own_session = ::getsid(0);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    if (LibvirtDriver::reapable_zombie(read_proc(entry.path() / "stat"), self, own_session) &&
        !is_run_process_child(static_cast<pid_t>(pid))) {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  return out;
}

void reaper_loop() {
  for (;;) {
    try {
      for (pid_t pid : zombie_qemu_children()) ::waitpid(pid, nullptr, WNOHANG);
    } catch (const std::exception&) {
      // /proc changes under us; the next round sees it settled. This thread must never end.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

void start_reaper() {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(reaper_loop).detach(); });
}

bool LibvirtDriver::reapable_zombie(std::string_view stat, long self, long own_session) {
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so split at
  // the last ')'.
  const auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close + 4 >= stat.size()) return false;
  const std::string_view comm = stat.substr(open + 1, close - open - 1);
  const std::string text(stat.substr(close + 4));
  char* rest = nullptr;
  const long ppid = std::strtol(text.c_str(), &rest, 10);
  std::strtol(rest, &rest, 10);  // the process group
  const long session = std::strtol(rest, nullptr, 10);
  const long pid = std::strtol(std::string(stat.substr(0, open)).c_str(), nullptr, 10);
  if (stat[close + 2] != 'Z' || ppid != self || session == own_session) return false;
  // In another session: a QEMU daemonized by libvirt (a domain's, or the daemon of a probe,
  // which leads its own session), or any child of another session reparented to us, which nobody
  // else will ever wait for. A child that leads its own session and is no QEMU is one we started
  // (setsid) and wait for ourselves.
  return comm.starts_with("qemu-system") || session != pid;
}

}  // namespace abvm
