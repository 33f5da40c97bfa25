// `abvm run --connect` against a libvirt host reached only through libvirt's remote protocol:
// a test daemon in a mount namespace of its own that cannot see abvm's results, its cache
// (kernels, guest image) or this test's files (libvirt_daemons.hpp), over qemu+tcp:// and over
// qemu+ssh:// on 127.0.0.1. A short real A/B experiment (Debian cloud kernel, 2 boots per side,
// dd) completes over each with valid samples and console logs that came back over the
// connection; the kernel volume is sent to the host once and found by the next run; the host
// keeps nothing but that kernel; a daemon killed for good mid-run ends the run with exit 3
// naming the URI. Over qemu+tls:// (certificates the test makes: a CA, a server and a client
// certificate) the same run completes, and a client certificate of another CA is refused at
// once with exit 3 naming the URI and libvirt's reason.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "core/files.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"
#include "guest/volume_staging.hpp"
#include "libvirt_daemons.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kExperiment = R"(name = "remote"
[guest]
kernel = "debian-cloud"
accelerator = "tcg"
[disk]
size = "64M"
[sides.A]
label = "direct"
[sides.B]
label = "dma-api"
device.iommu_platform = true
[[workload]]
name = "dd-write"
type = "dd"
bs = "1M"
count = 4
oflag = ["direct"]
repetitions = 2
[schedule]
min_run_time = "0s"
boots_per_side = 2
seed = 12
infra_retries = 1
)";

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(p, ec)) return out;
  std::istringstream in(read_file(p));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

class RemoteE2ETest : public ::testing::Test {
 protected:
  fs::path dir;
  std::unique_ptr<test::TestLibvirtd> daemon;

  void SetUp() override { set_up(/*ssh=*/true, /*tls=*/false); }
  void set_up(bool ssh, bool tls) {
    if (const auto why = test::missing_for_test_daemons(ssh, tls)) ABVM_SKIP_WITHOUT(*why);
    dir = fs::temp_directory_path() /
          ("abvm-remote-e2e-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_file_atomic(dir / "remote.toml", kExperiment);
    daemon = std::make_unique<test::TestLibvirtd>(
        test::TestLibvirtdOptions{.dir = dir / "daemon", .ssh = ssh, .tls = tls});
    ASSERT_TRUE(daemon->start()) << daemon->log();
  }
  void TearDown() override {
    daemon.reset();  // the daemon, its sshd and any QEMU it left
    if (!dir.empty() && !HasFailure()) fs::remove_all(dir);
  }

  ProcessResult run(const std::string& uri, const fs::path& results) const {
    return run_process({ABVM_BINARY, "run", "--connect", uri, "--results-dir", results.string(),
                        (dir / "remote.toml").string()},
                       {.timeout = 9min});
  }

  static fs::path results_dir(const fs::path& root) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (fs::exists(e.path() / "run.json")) return e.path();
    }
    return {};
  }

  // Every trial ok, every planned run in the journal once, its console back over the
  // connection, its domain booted from the host's volumes, the host the guests ran on recorded.
  void expect_complete(const fs::path& d, const std::string& uri) {
    const json plan = json::parse(read_file(d / "plan.json"));
    ASSERT_EQ(plan.at("trials").size(), 4u);
    EXPECT_EQ(lines_of(d / "journal.jsonl").size(), 4u * 2);
    for (const auto& line : lines_of(d / "journal.jsonl")) {
      const json entry = json::parse(line);
      EXPECT_EQ(entry.at("outcome"), "ok") << line;
      // The host's cost of each run over the connection (issue 27): libvirt's domain statistics, its
      // cpu.time (no QEMU on this machine to count by schedstat), and the disk's bytes the run moved.
      ASSERT_TRUE(entry.contains("cost") && entry["cost"].contains("host")) << "no host cost: " << line;
      const json& host = entry["cost"]["host"];
      EXPECT_EQ(host.value("cpu_clock", ""), "libvirt") << line;
      EXPECT_GT(host.at("cpu").get<double>(), 0) << line;
      EXPECT_GE(host.at("disk_bytes").get<double>(), 0.95 * entry["cost"].at("tool_bytes").get<double>() *
                                                         entry["cost"].at("tool_runs").get<double>())
          << line;
    }
    for (const auto& t : plan.at("trials")) {
      const fs::path trial = d / "trials" / t.at("id").get<std::string>();
      const std::string console = read_file(trial / "console.log");
      EXPECT_NE(console.find("ABVM2:"), std::string::npos) << trial;
      const std::string xml = read_file(trial / "domain.xml");
      EXPECT_NE(xml.find(std::string(kDefaultPoolPath) + "/abvm-content-"), std::string::npos) << xml;
      EXPECT_EQ(xml.find(d.string()), std::string::npos) << "a local path reached the host: " << xml;
    }
    const json env = json::parse(read_file(d / "environment.json"));
    EXPECT_EQ(env.at("libvirt_uri"), uri);
    EXPECT_EQ(env.at("libvirt_host").at("hostname"), host_name());
    EXPECT_TRUE(fs::exists(d / "analysis.json"));
  }

  // What abvm keeps on the host: the kernel's content volume and its marker, nothing else, and
  // nothing of abvm's where the daemon's namespace hides this machine's directories.
  std::string expect_only_the_kernel_left() {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(daemon->pool_dir(), ec)) names.insert(e.path().filename().string());
    std::string kernel;
    for (const auto& n : names) {
      const auto v = parse_volume_name(n);
      EXPECT_TRUE(v && v->kind == "content") << "left on the host: " << n;
      if (v && !n.ends_with(".complete")) kernel = n;
    }
    EXPECT_EQ(names.size(), 2u) << fmt::format("{}", fmt::join(names, " "));
    EXPECT_TRUE(names.contains(complete_marker(kernel)));
    for (const char* hidden : {"/tmp", "/var/tmp", "/work", "/root/.cache"}) {
      EXPECT_TRUE(fs::is_empty(daemon->seen(hidden), ec)) << hidden << " in the daemon's namespace";
    }
    return kernel;
  }
};

TEST_F(RemoteE2ETest, RunsOverTcpThenOverSshAndTheHostGetsTheKernelOnce) {
  const auto tcp = run(daemon->tcp_uri(), dir / "results-tcp");
  ASSERT_TRUE(tcp.exit_code == 0 || tcp.exit_code == 1 || tcp.exit_code == 4) << tcp.exit_code << "\n" << tcp.err;
  const fs::path d1 = results_dir(dir / "results-tcp");
  ASSERT_FALSE(d1.empty());
  expect_complete(d1, daemon->tcp_uri());
  const std::string kernel = expect_only_the_kernel_left();
  struct stat first {};
  ASSERT_EQ(::stat((daemon->pool_dir() / kernel).c_str(), &first), 0);

  const auto ssh = run(daemon->ssh_uri(), dir / "results-ssh");
  ASSERT_TRUE(ssh.exit_code == 0 || ssh.exit_code == 1 || ssh.exit_code == 4) << ssh.exit_code << "\n" << ssh.err
                                                                              << daemon->log();
  const fs::path d2 = results_dir(dir / "results-ssh");
  ASSERT_FALSE(d2.empty());
  expect_complete(d2, daemon->ssh_uri());
  // The same kernel volume, not sent again: the same file, untouched.
  EXPECT_EQ(expect_only_the_kernel_left(), kernel);
  struct stat now {};
  ASSERT_EQ(::stat((daemon->pool_dir() / kernel).c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, first.st_ino);
  EXPECT_EQ(now.st_mtim.tv_sec, first.st_mtim.tv_sec);
  EXPECT_EQ(now.st_mtim.tv_nsec, first.st_mtim.tv_nsec);
}

// The host's daemon dies for good while a guest runs: abvm tries to connect again for 30 s, then
// stops with an infra error (exit 3) that names the URI, says which guest the host may still run
// and how to resume, and keeps the trial that finished.
TEST_F(RemoteE2ETest, ADaemonKilledForGoodMidRunEndsWithExit3NamingTheUri) {
  const std::string uri = daemon->tcp_uri();
  auto abvm = std::async(std::launch::async, [&] { return run(uri, dir / "results"); });
  bool running = false;
  for (auto end = std::chrono::steady_clock::now() + 300s; !running && std::chrono::steady_clock::now() < end;) {
    const fs::path d = results_dir(dir / "results");
    running = !d.empty() && !daemon->qemus().empty() && lines_of(d / "trials" / "t0001" / "console.log").size() >= 5;
    if (abvm.wait_for(50ms) == std::future_status::ready) break;
  }
  ASSERT_TRUE(running) << "trial t0001 was never seen running";
  daemon->kill();
  ASSERT_EQ(abvm.wait_for(150s), std::future_status::ready);
  const ProcessResult r = abvm.get();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(fmt::format("the connection to '{}' was lost and could not be made again within 30 s", uri)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(fmt::format("virsh -c '{}' destroy abvm-", uri)), std::string::npos) << r.err;
  EXPECT_NE((r.out + r.err).find("continue with: abvm run --resume"), std::string::npos) << r.out << r.err;
  const fs::path d = results_dir(dir / "results");
  EXPECT_EQ(lines_of(d / "trials.jsonl").size(), 1u);  // t0000 finished before the daemon died
}

class RemoteTlsE2ETest : public RemoteE2ETest {
 protected:
  void SetUp() override { set_up(/*ssh=*/false, /*tls=*/true); }
};

// qemu+tls:// with pkipath=DIR (the test's CA, and a client certificate of it): the real run
// completes as over TCP, and leaves the host only the kernel.
TEST_F(RemoteTlsE2ETest, RunsOverTlsWithTheTestsCertificates) {
  const std::string uri = daemon->tls_uri(daemon->tls_client_dir());
  const auto r = run(uri, dir / "results");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.exit_code << "\n" << r.err << daemon->log();
  const fs::path d = results_dir(dir / "results");
  ASSERT_FALSE(d.empty());
  expect_complete(d, uri);
  expect_only_the_kernel_left();
}

// A client certificate signed by a CA the daemon does not trust (GnuTLS does not even send it:
// the daemon asks for one of its own CA's): the daemon ends the session after the handshake, abvm
// stops before any trial with exit 3, within seconds, naming the URI, libvirt's reason, that the
// host refused the certificate and where the certificates are; the host gets nothing. A daemon
// certificate this side does not trust (only the other CA in cacert.pem) is refused by libvirt's
// client itself, with its own reason.
TEST_F(RemoteTlsE2ETest, AClientCertificateOfAnotherCaIsRefusedWithExit3NamingTheUri) {
  const std::string uri = daemon->tls_uri(daemon->tls_wrong_dir());
  const auto start = std::chrono::steady_clock::now();
  const auto r = run(uri, dir / "results");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_LT(took, 10.0) << r.err;
  EXPECT_NE(r.err.find(fmt::format("libvirt: cannot connect to '{}': Unable to read TLS confirmation", uri)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the host refused this machine's client certificate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pkipath=DIR"), std::string::npos) << r.err;
  EXPECT_NE(daemon->log().find("Failed to verify peer's certificate"), std::string::npos) << daemon->log();
  const fs::path d = results_dir(dir / "results");
  EXPECT_FALSE(fs::exists(d / "journal.jsonl")) << d;
  EXPECT_FALSE(fs::exists(d / "trials")) << d;
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(daemon->pool_dir(), ec) || !fs::exists(daemon->pool_dir(), ec));

  // This side does not trust the daemon's certificate: the other CA alone, and its client certificate.
  const fs::path distrust = dir / "tls-distrust";
  fs::create_directories(distrust);
  for (const char* f : {"clientcert.pem", "clientkey.pem"}) fs::copy_file(daemon->tls_wrong_dir() / f, distrust / f);
  write_file_atomic(distrust / "cacert.pem", read_file(daemon->tls_wrong_dir() / "cacert.pem").substr(
                                                 read_file(daemon->tls_client_dir() / "cacert.pem").size()));
  const std::string uri2 = daemon->tls_uri(distrust);
  const auto r2 = run(uri2, dir / "results2");
  EXPECT_EQ(r2.exit_code, 3) << r2.err;
  EXPECT_NE(r2.err.find(fmt::format("libvirt: cannot connect to '{}': authentication failed: Failed to verify peer's "
                                    "certificate",
                                    uri2)),
            std::string::npos)
      << r2.err;
  EXPECT_NE(r2.err.find("pkipath=DIR"), std::string::npos) << r2.err;
}

}  // namespace
}  // namespace abvm
