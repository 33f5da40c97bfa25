// Several abvm processes at once: libvirt's embedded driver locks its root, so a process that
// finds the shared root busy must fall back to a private root of its own (seeded with the shared
// capability cache) instead of failing to connect, and remove it again at exit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>
#include <thread>

#include "environment_skip.hpp"
#include "scoped_env.hpp"
#include "core/cache.hpp"
#include "core/process.hpp"
#include "guest/libvirt_driver.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

bool wait_for(const std::function<bool()>& cond, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return cond();
}

// With ABVM_TEST_HOLD_ROOT=FLAG this binary only connects to the embedded driver, writes its pid
// to FLAG.ready and holds the connection until FLAG is removed: a second "abvm process".
const bool kHolderMode = [] {
  const char* flag = std::getenv("ABVM_TEST_HOLD_ROOT");
  if (!flag) return false;
  {
    LibvirtDriver driver(LibvirtDriver::embedded_uri());
    std::ofstream(std::string(flag) + ".ready") << ::getpid();
    wait_for([&] { return !fs::exists(flag); }, std::chrono::seconds(240));
  }
  std::exit(0);  // runs the atexit handlers, as a real abvm process would
}();

struct Holder {
  fs::path flag;
  std::thread thread;
  long pid = 0;
  explicit Holder(const std::string& tag) {
    flag = fs::temp_directory_path() / ("abvm-hold-root-" + std::to_string(::getpid()) + "-" + tag);
    std::ofstream(flag) << "hold";
    std::string exe = fs::read_symlink("/proc/self/exe").string();
    thread = std::thread([this, exe] {
      run_process({exe}, {.timeout = std::chrono::seconds(300), .extra_env = {"ABVM_TEST_HOLD_ROOT=" + flag.string()}});
    });
  }
  bool wait_ready() {
    // Long enough for libvirt's QEMU probe (about 45 s alone) in several processes at once: a
    // capability cache made by another binary (abvm itself) is not valid for this one.
    if (!wait_for([&] { return fs::exists(flag.string() + ".ready"); }, std::chrono::seconds(240))) return false;
    wait_for([&] {
      std::ifstream in(flag.string() + ".ready");
      return static_cast<bool>(in >> pid);
    }, std::chrono::seconds(5));
    return pid > 0;
  }
  void stop() {
    fs::remove(flag);
    if (thread.joinable()) thread.join();
    fs::remove(flag.string() + ".ready");
  }
  ~Holder() { stop(); }
};

// A probe QEMU started as libvirt 9.0 starts one (qemu_capabilities.c virQEMUCapsInitQMPCommandNew),
// daemonized, with its QMP socket in `qmp_dir`; its pid, or 0.
long start_probe_qemu(const fs::path& qemu, const fs::path& qmp_dir, const fs::path& pidfile) {
  const auto r = run_process({qemu.string(), "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
                              "none,accel=tcg", "-qmp", "unix:" + (qmp_dir / "qmp.monitor").string() + ",server=on,wait=off",
                              "-pidfile", pidfile.string(), "-daemonize"});
  long pid = 0;
  if (r.exit_code == 0) std::ifstream(pidfile) >> pid;
  return pid;
}

}  // namespace

TEST(GuestLibvirtConcurrent, BusySharedRootGivesAPrivateRootThatWorksAndIsRemovedAtExit) {
  (void)kHolderMode;
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("the embedded QEMU driver needs root here");
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed");
  const fs::path private_dir = abvm_cache_dir() / "libvirt-private";

  Holder first("1");
  ASSERT_TRUE(first.wait_ready()) << "the first process could not connect";
  // The shared root is now held (by `first`, or by another abvm run on this machine).
  Holder second("2");
  ASSERT_TRUE(second.wait_ready()) << "a second process could not connect while the shared root was busy";
  EXPECT_TRUE(fs::exists(private_dir / std::to_string(second.pid)));

  // This process too gets a root of its own, and it works without a second ~45 s probe.
  const std::string uri = LibvirtDriver::embedded_uri();
  EXPECT_NE(uri.find("libvirt-private"), std::string::npos) << uri;
  auto t0 = std::chrono::steady_clock::now();
  {
    LibvirtDriver driver(uri);
    EXPECT_TRUE(driver.active_domains().empty());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));

  second.stop();
  EXPECT_FALSE(fs::exists(private_dir / std::to_string(second.pid))) << "the private root outlived its process";
  first.stop();
}

// libvirt locks the shared root only once a connection opens: processes that started together could
// all find it free, and all but one then failed to probe QEMU ("Cannot find suitable emulator").
// abvm's own lock makes the choice atomic: each gets a root that works, and at most one the shared.
TEST(GuestLibvirtConcurrent, ProcessesStartingTogetherEachGetARootThatWorks) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("the embedded QEMU driver needs root here");
  if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed");
  const fs::path private_dir = abvm_cache_dir() / "libvirt-private";
  std::vector<std::unique_ptr<Holder>> holders;
  for (const char* tag : {"a", "b", "c"}) holders.push_back(std::make_unique<Holder>(tag));
  int shared = 0;
  for (auto& h : holders) {
    ASSERT_TRUE(h->wait_ready()) << "a process starting with others could not connect";
    shared += !fs::exists(private_dir / std::to_string(h->pid));
  }
  EXPECT_LE(shared, 1) << "two processes opened the shared root at once";
  for (auto& h : holders) h->stop();
}

// A root whose QEMU probe fails when the connection opens has no emulator ("Cannot find suitable
// emulator for x86_64", met once in CI): the driver connects again with a fresh probe. Here the
// first probe fails for certain: the qemu-system-x86_64 libvirt finds first on PATH exits at once
// the first time it is run, and starts the real one after that.
TEST(GuestLibvirtConcurrent, AFailedQemuProbeIsMadeAgain) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("the embedded QEMU driver needs root here");
  const auto qemu = find_program("qemu-system-x86_64");
  if (!qemu) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed");
  const fs::path dir = fs::temp_directory_path() / ("abvm-probe-again-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  const fs::path wrapper = dir / "bin" / "qemu-system-x86_64";
  std::ofstream(wrapper) << "#!/bin/sh\nif [ ! -e " << (dir / "failed-once").string() << " ]; then touch "
                         << (dir / "failed-once").string() << "; exit 1; fi\nexec " << qemu->string() << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  test::ScopedEnv path("PATH", (dir / "bin").string() + ":" + std::getenv("PATH"));
  test::ScopedEnv xdg("XDG_CACHE_HOME", (dir / "cache").string());
  const std::string uri = LibvirtDriver::embedded_uri();
  const fs::path root = dir / "cache" / "abvm" / "libvirt";
  ASSERT_NE(uri.find(root.string()), std::string::npos) << uri;
  {
    LibvirtDriver driver(uri);
    EXPECT_FALSE(driver.versions().qemu.empty());
    EXPECT_TRUE(driver.active_domains().empty());
  }
  EXPECT_TRUE(fs::exists(dir / "failed-once")) << "the first probe did not run the wrapper: the test proves nothing";
  fs::remove_all(dir);
}

// A process killed while libvirt probed QEMU leaves the daemonized probe QEMU running forever
// (found three times here, reparented to init). The next process to take the root kills it.
TEST(GuestLibvirtConcurrent, AProbeQemuLeftByAKilledProcessIsKilledByTheNextOne) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("the embedded QEMU driver needs root here");
  const auto qemu = find_program("qemu-system-x86_64");
  if (!qemu) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed");
  const fs::path dir = fs::temp_directory_path() / ("abvm-left-probe-" + std::to_string(::getpid()));
  test::ScopedEnv xdg("XDG_CACHE_HOME", (dir / "cache").string());
  const fs::path qmp = dir / "cache" / "abvm" / "libvirt" / "lib" / "qemu" / "qmp-TEST12";
  fs::create_directories(qmp);
  const long pid = start_probe_qemu(*qemu, qmp, qmp / "qmp.pid");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(process_alive(pid));
  // One of a private root whose process is gone, and its directory with it (atexit removed it).
  const fs::path private_qmp = dir / "cache" / "abvm" / "libvirt-private" / "4194303" / "lib" / "qemu" / "qmp-TEST34";
  fs::create_directories(private_qmp);
  const long private_pid = start_probe_qemu(*qemu, private_qmp, dir / "private.pid");
  ASSERT_GT(private_pid, 0);
  fs::remove_all(dir / "cache" / "abvm" / "libvirt-private");
  ASSERT_TRUE(process_alive(private_pid));
  (void)LibvirtDriver::embedded_uri();
  EXPECT_TRUE(wait_for([&] { return !process_alive(pid); }, std::chrono::seconds(5))) << "the leftover probe still runs";
  EXPECT_TRUE(wait_for([&] { return !process_alive(private_pid); }, std::chrono::seconds(5)))
      << "the probe of a gone private root still runs";
  fs::remove_all(dir);
}

// libvirt keeps every domain's QEMU log; those of runs that are over go when the root is taken.
TEST(GuestLibvirtConcurrent, TheQemuLogsOfRunsThatAreOverAreRemoved) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("the embedded QEMU driver needs root here");
  const fs::path dir = fs::temp_directory_path() / ("abvm-old-logs-" + std::to_string(::getpid()));
  test::ScopedEnv xdg("XDG_CACHE_HOME", (dir / "cache").string());
  const fs::path logs = dir / "cache" / "abvm" / "libvirt" / "log" / "qemu";
  fs::create_directories(logs);
  const long dead = 4194303;  // the highest pid Linux gives, and only with pid_max at its limit
  ASSERT_FALSE(process_alive(dead));
  const std::string mine = "abvm-" + std::to_string(::getpid()) + "-t0000-0.log";
  const std::string gone = "abvm-" + std::to_string(dead) + "-t0000-0.log";
  for (const std::string& name : {mine, gone, std::string("other.log")}) std::ofstream(logs / name) << "log\n";
  (void)LibvirtDriver::embedded_uri();
  EXPECT_FALSE(fs::exists(logs / gone));
  EXPECT_TRUE(fs::exists(logs / mine)) << "a live process's log was removed";
  EXPECT_TRUE(fs::exists(logs / "other.log")) << "a log abvm did not make was removed";
  fs::remove_all(dir);
}
