// LibvirtDriver::remove_stale_embedded_state: what a killed abvm run left in the embedded root is
// removed before libvirt reloads it, and nothing of a live run or of another program is touched.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "guest/libvirt_driver.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// A process whose command line names the given domain, as libvirt's QEMU would ("guest=NAME").
pid_t fake_qemu(const std::string& name) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string arg = "guest=" + name + ",debug-threads=on";
    ::execlp("perl", "perl", "-e", "sleep 60", "--", "-name", arg.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until the exec has happened, so the command line is the new one.
  for (int i = 0; i < 200; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
    std::string args((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (args.find("guest=" + name) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pid;
}

bool reaped_by_signal(pid_t pid, int sig) {
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFSIGNALED(status) && WTERMSIG(status) == sig;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void touch(const fs::path& p, const std::string& text = "") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(GuestEmbeddedState, RemovesOnlyTheStateOfDeadAbvmRunsAndKillsTheirQemu) {
  const fs::path root = fs::temp_directory_path() / ("abvm-embedded-state-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path state = root / "run" / "qemu";
  const std::string dead = "abvm-" + std::to_string(dead_pid()) + "-t0001-1";
  const std::string live = "abvm-" + std::to_string(::getpid()) + "-t0002-2";
  // A process named after another domain stands in for an unrelated program: it must survive.
  pid_t stranger = fake_qemu("someone-else");
  pid_t qemu = fake_qemu(dead);

  touch(state / (dead + ".xml"), "<domstatus/>");
  touch(state / (dead + ".xml.new"));
  touch(state / (dead + ".pid"), std::to_string(qemu));
  touch(root / "lib" / "qemu" / ("domain-2-" + dead) / "monitor.sock");
  touch(root / "lib" / "qemu" / "channel" / "target" / ("domain-2-" + dead) / "x");
  touch(state / (live + ".xml"), "<domstatus/>");
  touch(state / (live + ".pid"), std::to_string(stranger));
  touch(root / "lib" / "qemu" / ("domain-3-" + live) / "monitor.sock");
  touch(state / "driver.pid", "1");

  auto removed = LibvirtDriver::remove_stale_embedded_state(root);

  ASSERT_EQ(removed, std::vector<std::string>{dead});
  EXPECT_TRUE(reaped_by_signal(qemu, SIGKILL));
  EXPECT_FALSE(fs::exists(state / (dead + ".xml")));
  EXPECT_FALSE(fs::exists(state / (dead + ".xml.new")));
  EXPECT_FALSE(fs::exists(state / (dead + ".pid")));
  EXPECT_FALSE(fs::exists(root / "lib" / "qemu" / ("domain-2-" + dead)));
  EXPECT_FALSE(fs::exists(root / "lib" / "qemu" / "channel" / "target" / ("domain-2-" + dead)));
  EXPECT_TRUE(fs::exists(state / (live + ".xml")));
  EXPECT_TRUE(fs::exists(root / "lib" / "qemu" / ("domain-3-" + live)));
  EXPECT_TRUE(fs::exists(state / "driver.pid"));
  EXPECT_EQ(::kill(stranger, 0), 0) << "a process not named after the dead domain was killed";

  ::kill(stranger, SIGKILL);
  ::waitpid(stranger, nullptr, 0);
  fs::remove_all(root);
}

TEST(GuestEmbeddedState, MissingRootIsNothingToDo) {
  EXPECT_TRUE(LibvirtDriver::remove_stale_embedded_state("/nonexistent/abvm-root").empty());
}

// The embedded driver's reaper takes the zombie QEMUs libvirt leaves to abvm (domains' QEMUs,
// daemonized into sessions of their own) and never a child libvirt waits for itself: the first
// process of a capability probe's `qemu -daemonize` runs in abvm's own session, and reaping it
// made the probe fail ("Cannot find suitable emulator for x86_64", found by the soak).
TEST(GuestEmbeddedState, TheReaperTakesDaemonizedQemusNeverAProbeLibvirtWaitsFor) {
  const long self = 100, session = 50;
  // A domain's QEMU: reparented to us, in the session libvirt's intermediate child made.
  EXPECT_TRUE(LibvirtDriver::reapable_zombie("300 (qemu-system-x86) Z 100 299 299 0", self, session));
  // The probe's daemon (qemu -daemonize leads its own session).
  EXPECT_TRUE(LibvirtDriver::reapable_zombie("301 (qemu-system-x86) Z 100 301 301 0", self, session));
  // Any other orphan of another session.
  EXPECT_TRUE(LibvirtDriver::reapable_zombie("302 (libvirt_helper) Z 100 7 7 0", self, session));
  // The probe's first process: our own child, in our session, waited for by libvirt.
  EXPECT_FALSE(LibvirtDriver::reapable_zombie("303 (qemu-system-x86) Z 100 50 50 0", self, session));
  // Not a zombie, not our child, or a child of ours leading its own session that is no QEMU.
  EXPECT_FALSE(LibvirtDriver::reapable_zombie("304 (qemu-system-x86) S 100 299 299 0", self, session));
  EXPECT_FALSE(LibvirtDriver::reapable_zombie("305 (qemu-system-x86) Z 1 299 299 0", self, session));
  EXPECT_FALSE(LibvirtDriver::reapable_zombie("306 (sh) Z 100 306 306 0", self, session));
  // A command name with spaces and parentheses, and a truncated line.
  EXPECT_TRUE(LibvirtDriver::reapable_zombie("307 (qemu-system-x86 (a) b) Z 100 299 299 0", self, session));
  EXPECT_FALSE(LibvirtDriver::reapable_zombie("308 (qemu", self, session));
}
