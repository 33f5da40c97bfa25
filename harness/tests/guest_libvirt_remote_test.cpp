// Real guests on a libvirt daemon reached only through libvirt's remote protocol: qemu+tcp://
// and qemu+ssh:// on 127.0.0.1, a test daemon that cannot see this machine's files
// (libvirt_daemons.hpp). The kernel, initrd and scratch disk reach it as storage volumes
// (guest/volume_staging.hpp), the console comes back over the connection, input goes in through
// it. The guests are guest_libvirt_support.hpp's test init.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <regex>
#include <set>
#include <signal.h>
#include <sys/stat.h>

#include "core/process.hpp"
#include "guest/domain_xml.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/volume_staging.hpp"
#include "guest_libvirt_support.hpp"
#include "libvirt_daemons.hpp"

using namespace abvm;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr auto kBootTimeout = 90s;

struct Remote {
  std::unique_ptr<test::TestLibvirtd> daemon;
  std::string skip;
  std::string error;
};

// One daemon for the binary (TCP and ssh), started at the first test that needs it.
Remote& remote() {
  static Remote r = [] {
    Remote out;
    if (auto why = test::missing_for_test_daemons(true)) {
      out.skip = *why;
      return out;
    }
    out.daemon = std::make_unique<test::TestLibvirtd>(test::TestLibvirtdOptions{
        .dir = fs::temp_directory_path() / fmt::format("abvm-remote-daemon-{}", ::getpid()), .ssh = true});
    if (!out.daemon->start()) out.error = "the test daemon did not start:\n" + out.daemon->log();
    return out;
  }();
  return r;
}

#define ABVM_REQUIRE_DAEMON()                                       \
  do {                                                              \
    ABVM_REQUIRE_LIBVIRT();                                         \
    auto& r_ = remote();                                            \
    if (!r_.skip.empty()) ABVM_SKIP_WITHOUT(r_.skip);               \
    ASSERT_TRUE(r_.error.empty()) << r_.error;                      \
  } while (0)

test::TestLibvirtd& daemon() { return *remote().daemon; }

DomainSpec spec_for(const std::string& label, const std::string& mode, bool with_disk) {
  static long serial = 0;
  const auto& g = test::shared().guest;
  DomainSpec s;
  s.name = domain_name("remote-" + label, ++serial);
  s.kernel = g.kernel;
  s.initrd = g.initrd;
  s.cmdline = "console=ttyS0 panic=-1 abvm_test=" + mode;
  s.console_log = g.work / (s.name + ".console.log");
  if (with_disk) {
    s.disks = {{.path = g.work / (s.name + ".img")}};
    write_file_atomic(s.disks[0].path, "");
    fs::resize_file(s.disks[0].path, 1 << 20);
  }
  return s;
}

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// The names in a pool directory as this machine sees it.
std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename().string());
  return out;
}

std::set<std::string> with_kind(const std::set<std::string>& names, const std::string& kind) {
  std::set<std::string> out;
  for (const auto& n : names) {
    if (const auto v = parse_volume_name(n); v && v->kind == kind) out.insert(n);
  }
  return out;
}

}  // namespace

TEST(GuestLibvirtRemote, ABootOverTcpGetsItsFilesAsVolumesAndItsConsoleOverTheConnection) {
  ABVM_REQUIRE_DAEMON();
  const fs::path pool = daemon().pool_dir();
  auto spec = spec_for("tcp", "poweroff", true);
  std::set<std::string> during;
  {
    LibvirtDriver driver(daemon().tcp_uri());
    EXPECT_EQ(driver.pool_path(), fs::path(kDefaultPoolPath));
    auto out = driver.run_guest(spec, kBootTimeout, [](std::string_view c) { return contains(c, "ABVM-TEST-DONE"); });
    ASSERT_EQ(to_string(out.end), "finished") << out.detail << "\n" << out.console << daemon().log();
    EXPECT_TRUE(contains(out.console, "ABVM-TEST-UP")) << out.console;
    EXPECT_FALSE(contains(out.console, "ABVM-TEST-INSMOD-FAILED")) << out.console;
    // The console came back over the connection and is kept where the spec says.
    EXPECT_EQ(read_file(spec.console_log), out.console);
    // The domain named the host's volumes, none of this machine's files.
    EXPECT_FALSE(contains(out.domain_xml, spec.kernel.native())) << out.domain_xml;
    EXPECT_FALSE(contains(out.domain_xml, spec.initrd.native())) << out.domain_xml;
    EXPECT_FALSE(contains(out.domain_xml, spec.disks[0].path.native())) << out.domain_xml;
    EXPECT_TRUE(contains(out.domain_xml, std::string(kDefaultPoolPath) + "/abvm-content-")) << out.domain_xml;
    // The guest wrote to the host's scratch volume; this machine's image is as it was.
    during = files_in(pool);
    const auto scratch = with_kind(during, "scratch");
    ASSERT_EQ(scratch.size(), 1u) << fmt::format("{}", fmt::join(during, " "));
    EXPECT_TRUE(read_file(pool / *scratch.begin()).starts_with("ABVM-DISK-WRITTEN\n"));
    EXPECT_EQ(read_file(spec.disks[0].path), std::string(1 << 20, '\0'));
    // The trial's own volumes went with the trial.
    EXPECT_TRUE(with_kind(during, "initrd").empty()) << fmt::format("{}", fmt::join(during, " "));
    EXPECT_TRUE(with_kind(during, "console").empty()) << fmt::format("{}", fmt::join(during, " "));
    const auto stats = driver.staging_stats();
    ASSERT_TRUE(stats.has_value());
    EXPECT_EQ(stats->trial_uploads, 1);
    EXPECT_EQ(stats->scratch_created, 1);
    EXPECT_GT(out.stage_seconds, 0.0);
    std::cout << "staged in " << out.stage_seconds << " s (" << stats->bytes_uploaded << " bytes uploaded in "
              << stats->upload_seconds << " s), start " << out.start_seconds << " s, stop " << out.stop_seconds
              << " s\n";
  }
  // The run's end takes its scratch volume; the kernel stays, with its marker.
  const auto after = files_in(pool);
  EXPECT_TRUE(with_kind(after, "scratch").empty()) << fmt::format("{}", fmt::join(after, " "));
  const auto content = with_kind(after, "content");
  EXPECT_EQ(content.size(), 2u) << fmt::format("{}", fmt::join(after, " "));
  // Nothing of abvm's reached the daemon outside its pool.
  for (const char* hidden : {"/tmp", "/var/tmp", "/root/.cache"}) {
    EXPECT_TRUE(files_in(daemon().seen(hidden)).empty()) << hidden;
  }
  for (const auto& n : after) EXPECT_TRUE(parse_volume_name(n).has_value()) << "not abvm's: " << n;
}

// The kernel is a content volume: the first run on a host sends it, a later run finds it there.
TEST(GuestLibvirtRemote, TheKernelIsSentOncePerHostAndFoundAgainByTheNextRun) {
  ABVM_REQUIRE_DAEMON();
  // A pool of this test's own, so that the first run here is the first on that pool.
  const LibvirtDriverOptions options{.staging = {.pool = "abvm-kernel-once", .pool_path = "/var/lib/abvm/kernel-once"}};
  const fs::path dir = daemon().seen("/var/lib/abvm/kernel-once");
  const auto done = [](std::string_view c) { return contains(c, "ABVM-TEST-UP"); };
  struct stat first {};
  {
    LibvirtDriver driver(daemon().tcp_uri(), options);
    for (int trial = 0; trial < 2; ++trial) {
      auto out = driver.run_guest(spec_for("once", "hang", false), kBootTimeout, done);
      ASSERT_EQ(to_string(out.end), "finished") << out.detail;
    }
    const auto stats = *driver.staging_stats();
    EXPECT_EQ(stats.kernel_uploads, 1);  // once for both trials
    EXPECT_EQ(stats.kernels_found, 0);
    EXPECT_EQ(stats.trial_uploads, 2);
    const auto content = with_kind(files_in(dir), "content");
    ASSERT_EQ(content.size(), 2u);
    ASSERT_EQ(::stat((dir / *content.begin()).c_str(), &first), 0);
  }
  LibvirtDriver again(daemon().tcp_uri(), options);
  auto out = again.run_guest(spec_for("again", "hang", false), kBootTimeout, done);
  ASSERT_EQ(to_string(out.end), "finished") << out.detail;
  const auto stats = *again.staging_stats();
  EXPECT_EQ(stats.kernel_uploads, 0);
  EXPECT_EQ(stats.kernels_found, 1);
  const auto content = with_kind(files_in(dir), "content");
  ASSERT_EQ(content.size(), 2u);
  struct stat now {};
  ASSERT_EQ(::stat((dir / *content.begin()).c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, first.st_ino);
  EXPECT_EQ(now.st_mtim.tv_sec, first.st_mtim.tv_sec);
  EXPECT_EQ(now.st_mtim.tv_nsec, first.st_mtim.tv_nsec);
}

TEST(GuestLibvirtRemote, TypedInputReachesARemoteGuestOverTheConnection) {
  ABVM_REQUIRE_DAEMON();
  LibvirtDriver driver(daemon().tcp_uri());
  bool waiting = false;
  int typed = 0;
  ConsoleHooks hooks;
  hooks.done = [&](std::string_view c) {
    waiting = waiting || contains(c, "ABVM-TEST-WAITING");
    return contains(c, "ABVM-ECHO-GOT go from abvm");
  };
  hooks.input = [&]() -> std::string {
    if (!waiting || typed++ > 0) return "";
    return "go from abvm\n";
  };
  auto out = driver.run_guest(spec_for("echo", "echo", false), kBootTimeout, hooks);
  EXPECT_EQ(to_string(out.end), "finished") << out.detail << "\n" << out.console;
}

// QEMU's copy of a remote guest's console (what the driver reads when the stream lost its end,
// see GuestLibvirtDriver.TheLastLineBeforeAnImmediatePowerOffIsNeverLost) is the trial's console
// volume on the host, and comes back through the connection, at most as much as asked.
TEST(GuestLibvirtRemote, QemusCopyOfTheConsoleComesBackFromTheHostsVolume) {
  ABVM_REQUIRE_DAEMON();
  ConnHandle conn(virConnectOpen(daemon().tcp_uri().c_str()));
  ASSERT_TRUE(conn) << libvirt_error();
  VolumeStaging staging(daemon().tcp_uri(), {});
  staging.attach(conn.get());
  auto spec = spec_for("copy", "poweroff", false);
  const HostFiles files = staging.stage(conn.get(), spec);
  EXPECT_TRUE(files.console_log.native().starts_with(std::string(kDefaultPoolPath) + "/abvm-console-"))
      << files.console_log;
  EXPECT_EQ(staging.console_copy(conn.get(), spec, 1 << 20), std::string());  // QEMU has written nothing yet
  // QEMU writes it on the host; here the test does, through the daemon's own view of its pool.
  const std::string text = "ABVM-TEST-UP\r\nABVM-TEST-ALMOST\r\nABVM-TEST-LAST-WORD\r\n[    3.3] reboot: Power down\r\n";
  write_file_atomic(daemon().seen(files.console_log), text);
  EXPECT_EQ(staging.console_copy(conn.get(), spec, 1 << 20), text);
  EXPECT_EQ(staging.console_copy(conn.get(), spec, 12), text.substr(0, 12));
  staging.release(conn.get(), spec);
  EXPECT_FALSE(fs::exists(daemon().seen(files.console_log)));
  EXPECT_FALSE(fs::exists(daemon().seen(files.initrd)));
  EXPECT_EQ(staging.console_copy(conn.get(), spec, 1 << 20), std::nullopt);
  staging.finish(conn.get());
}

TEST(GuestLibvirtRemote, ABootOverSshWorksTheSame) {
  ABVM_REQUIRE_DAEMON();
  LibvirtDriver driver(daemon().ssh_uri());
  auto spec = spec_for("ssh", "poweroff", true);
  auto out = driver.run_guest(spec, kBootTimeout, [](std::string_view c) { return contains(c, "ABVM-TEST-DONE"); });
  EXPECT_EQ(to_string(out.end), "finished") << out.detail << "\n" << out.console << daemon().log();
  EXPECT_TRUE(contains(out.domain_xml, kDefaultPoolPath)) << out.domain_xml;
  EXPECT_EQ(driver.versions().uri, daemon().ssh_uri());
}

TEST(GuestLibvirtRemote, ReportsWhereTheGuestsRunAsLibvirtTellsIt) {
  ABVM_REQUIRE_DAEMON();
  LibvirtDriver driver(daemon().tcp_uri());
  const HostVersions v = driver.versions();
  EXPECT_EQ(v.uri, daemon().tcp_uri());
  EXPECT_TRUE(std::regex_match(v.libvirt, std::regex(R"(\d+\.\d+\.\d+)"))) << v.libvirt;
  // The daemon runs on this machine: libvirt's figures are this machine's.
  EXPECT_EQ(v.hostname, host_name());
  EXPECT_EQ(v.cpu_arch, "x86_64");
  EXPECT_EQ(v.cpus, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_GT(v.memory_kib, 1u << 20);
  EXPECT_FALSE(v.cpu_model.empty());
}

// A host that does not answer is an InfraError at once, naming the URI and what to check.
TEST(GuestLibvirtRemote, AnUnreachableHostIsAnInfraErrorNamingTheUri) {
  ABVM_REQUIRE_DAEMON();
  const std::string uri = fmt::format("qemu+tcp://127.0.0.1:{}/system", test::daemons_detail::free_loopback_port());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    LibvirtDriver driver(uri);
    ADD_FAILURE() << "connected to " << uri;
  } catch (const InfraError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot connect to '" + uri + "'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "that the host is reachable and that libvirtd runs there")) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

// A daemon that accepts the first connection and never answers it (stopped, or deadlocked
// inside) is an InfraError naming the URI at the end of the reconnect window, not a hang:
// virConnectOpen has no timeout of its own. Needs no daemon, only libvirt's client.
TEST(GuestLibvirtRemote, AFirstConnectionThatIsNeverAnsweredEndsAtTheReconnectWindow) {
  test::SilentSocket silent(fs::temp_directory_path() / fmt::format("abvm-silent-{}.sock", ::getpid()));
  const std::string uri = "qemu+unix:///system?socket=" + silent.path().string();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    LibvirtDriver driver(uri, {.reconnect_window = 3s});
    ADD_FAILURE() << "connected to " << uri;
  } catch (const InfraError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot connect to '" + uri + "'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "did not answer within 3 s")) << e.what();
    EXPECT_TRUE(contains(e.what(), "libvirtd is running and answers")) << e.what();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 3s);
  EXPECT_LT(took, 8s);
  EXPECT_GE(silent.accepted(), 1u);  // it was reached, and kept silent
}

// abvm never writes to a volume it did not make in this run: a volume that has the very name
// abvm would give its scratch disk is refused, and left as it was.
TEST(GuestLibvirtRemote, AVolumeThisRunDidNotMakeIsNeverWritten) {
  ABVM_REQUIRE_DAEMON();
  ConnHandle conn(virConnectOpen(daemon().tcp_uri().c_str()));
  ASSERT_TRUE(conn) << libvirt_error();
  VolumeStaging staging(daemon().tcp_uri(), {});
  staging.attach(conn.get());
  const std::string name = fmt::format("abvm-scratch-{}-0", staging.owner());
  ASSERT_TRUE(parse_volume_name(name).has_value());
  PoolHandle pool(virStoragePoolLookupByName(conn.get(), "abvm"));
  ASSERT_TRUE(pool);
  const std::string xml = fmt::format(
      "<volume><name>{}</name><capacity unit='bytes'>4096</capacity><target><format type='raw'/></target></volume>",
      name);
  VolHandle theirs(virStorageVolCreateXML(pool.get(), xml.c_str(), 0));
  ASSERT_TRUE(theirs) << libvirt_error();
  const fs::path file = daemon().pool_dir() / name;
  write_file_atomic(file, "SOMEONE ELSE'S DATA");
  auto spec = spec_for("theirs", "poweroff", true);
  try {
    (void)staging.stage(conn.get(), spec);
    ADD_FAILURE() << "staged onto " << name;
  } catch (const InfraError& e) {
    EXPECT_TRUE(contains(e.what(), name + " already exists")) << e.what();
    EXPECT_TRUE(contains(e.what(), "abvm writes only to volumes it made itself")) << e.what();
  }
  EXPECT_EQ(read_file(file), "SOMEONE ELSE'S DATA");
  staging.release(conn.get(), spec);
  staging.finish(conn.get());
  EXPECT_EQ(read_file(file), "SOMEONE ELSE'S DATA");  // finish deletes only what this run made
  virStorageVolDelete(theirs.get(), 0);
}

// What a killed abvm process of this machine left in the pool goes when the next run connects;
// what other machines' abvm processes have there is never touched.
TEST(GuestLibvirtRemote, VolumesOfDeadAbvmProcessesOfThisMachineAreRemovedOthersKept) {
  ABVM_REQUIRE_DAEMON();
  ConnHandle conn(virConnectOpen(daemon().tcp_uri().c_str()));
  ASSERT_TRUE(conn) << libvirt_error();
  VolumeStaging first(daemon().tcp_uri(), {});
  first.attach(conn.get());
  PoolHandle pool(virStoragePoolLookupByName(conn.get(), "abvm"));
  ASSERT_TRUE(pool);
  const std::string host = parse_volume_name(fmt::format("abvm-x-{}-y", first.owner()))->host;
  const std::string dead = fmt::format("abvm-scratch-{}_99999999_0badf00d-0", host);
  const std::string other = "abvm-scratch-another-machine_1_0badf00d-0";
  const std::string partial = fmt::format("abvm-content-{}_99999999_0badf00d-{}", host, std::string(64, 'a'));
  for (const auto& n : {dead, other, partial}) {
    const std::string xml = fmt::format(
        "<volume><name>{}</name><capacity unit='bytes'>0</capacity><target><format type='raw'/></target></volume>", n);
    VolHandle v(virStorageVolCreateXML(pool.get(), xml.c_str(), 0));
    ASSERT_TRUE(v) << libvirt_error();
  }
  LibvirtDriver driver(daemon().tcp_uri());
  const auto names = files_in(daemon().pool_dir());
  EXPECT_FALSE(names.contains(dead));
  EXPECT_FALSE(names.contains(partial));  // a content volume without its marker: an upload cut short
  EXPECT_TRUE(names.contains(other));
  VolHandle v(virStorageVolLookupByName(pool.get(), other.c_str()));
  if (v) virStorageVolDelete(v.get(), 0);
}

// A guest left running on a remote daemon by an abvm of this machine that died (SIGKILL: nothing
// of it could clean up) is destroyed by the next abvm that connects there; a guest another
// machine runs there under the same prefix (another boot tag) is left alone. Before the boot tag
// in domain names, no leftover on a remote daemon was ever destroyed: the chaos soak found a
// flooding guest of a SIGKILLed run still on its test daemon at the end.
TEST(GuestLibvirtRemote, GuestsOfDeadAbvmProcessesOfThisMachineAreDestroyedOthersKept) {
  ABVM_REQUIRE_DAEMON();
  LibvirtDriver driver(daemon().tcp_uri());
  const std::string other_boot = boot_tag() == "00000000" ? "11111111" : "00000000";
  auto orphan = spec_for("orphan", "hang", false);
  orphan.name = fmt::format("abvm-99999999.{}-remote-orphan-1", boot_tag());  // a pid above pid_max
  auto foreign = spec_for("foreign", "hang", false);
  foreign.name = fmt::format("abvm-99999999.{}-remote-foreign-1", other_boot);
  std::atomic<bool> release{false};
  std::atomic<int> up{0};
  const auto hang = [&](const DomainSpec& spec) {
    return std::async(std::launch::async, [&, spec] {
      bool seen = false;
      return driver.run_guest(spec, kBootTimeout, [&](std::string_view c) {
        if (!seen && contains(c, "ABVM-TEST-UP")) seen = true, ++up;
        return release.load();
      });
    });
  };
  auto orphan_run = hang(orphan);
  auto foreign_run = hang(foreign);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (up < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(up.load(), 2) << "the two guests did not come up";
  const auto active = [&](const std::string& name) {
    const auto names = driver.active_domains();
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  LibvirtDriver next(daemon().tcp_uri());  // the next abvm to connect
  EXPECT_EQ(next.destroy_leftovers(), std::vector<std::string>{orphan.name});
  EXPECT_FALSE(active(orphan.name));
  EXPECT_TRUE(active(foreign.name));
  EXPECT_EQ(to_string(orphan_run.get().end), "powered_off");
  release = true;
  EXPECT_EQ(to_string(foreign_run.get().end), "finished");
  EXPECT_FALSE(active(foreign.name));
}

TEST(GuestLibvirtRemote, APoolElsewhereThanAskedIsAClearErrorAndAnImpossiblePathAnInfraError) {
  ABVM_REQUIRE_DAEMON();
  {
    LibvirtDriver made(daemon().tcp_uri(), {.staging = {.pool = "abvm-t-path", .pool_path = "/var/lib/abvm/t-path"}});
    EXPECT_EQ(made.pool_path(), fs::path("/var/lib/abvm/t-path"));
  }
  EXPECT_TRUE(fs::is_directory(daemon().seen("/var/lib/abvm/t-path")));
  try {
    LibvirtDriver elsewhere(daemon().tcp_uri(), {.staging = {.pool = "abvm-t-path", .pool_path = "/var/lib/abvm/other"}});
    ADD_FAILURE() << "accepted a pool at another path";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "keeps its volumes in /var/lib/abvm/t-path, not in /var/lib/abvm/other")) << e.what();
  }
  try {
    LibvirtDriver impossible(daemon().tcp_uri(), {.staging = {.pool = "abvm-t-proc", .pool_path = "/proc/abvm-pool"}});
    ADD_FAILURE() << "made a pool under /proc";
  } catch (const InfraError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot create the directory /proc/abvm-pool of storage pool 'abvm-t-proc'")) << e.what();
    EXPECT_TRUE(contains(e.what(), daemon().tcp_uri())) << e.what();
  }
}

// A daemon that stops answering but keeps its socket (SIGSTOP: the kernel still accepts the
// connection, as it does for a libvirtd deadlocked inside) is an infrastructure error within the
// reconnect window, never a hang: keepalive ends the open connection, and making it again is
// given up when the daemon does not answer.
TEST(GuestLibvirtRemote, ADaemonThatStopsAnsweringIsAnInfraErrorNotAHang) {
  ABVM_REQUIRE_DAEMON();
  LibvirtDriverOptions options;
  options.reconnect_window = 5s;
  LibvirtDriver driver(daemon().tcp_uri(), options);
  const pid_t pid = daemon().pid();
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  struct Resume {
    pid_t pid;
    ~Resume() { ::kill(pid, SIGCONT); }
  } resume{pid};
  const auto start = std::chrono::steady_clock::now();
  std::string thrown;
  for (int call = 0; call < 3 && thrown.empty(); ++call) {
    try {
      const auto out = driver.run_guest(spec_for("stopped", "poweroff", false), kBootTimeout,
                                        [](std::string_view c) { return contains(c, "ABVM-TEST-DONE"); });
      EXPECT_EQ(to_string(out.end), "infra_error") << out.detail;
    } catch (const InfraError& e) {
      thrown = e.what();
    }
  }
  EXPECT_NE(thrown.find("did not answer within"), std::string::npos) << thrown;
  EXPECT_NE(thrown.find(daemon().tcp_uri()), std::string::npos) << thrown;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 120s);
}
