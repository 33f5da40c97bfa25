#pragma once
// Test libvirt daemons: real libvirtd processes on this machine that share nothing with it but
// the kernel, each reached only through libvirt's remote protocol, for the tests of abvm on
// remote hosts (and of a pool of hosts). Needs root.
//
// Each daemon lives in a mount namespace of its own, held by a `sleep infinity` process (the
// "holder"), with private mounts:
//   /run                 a tmpfs: /run/libvirt (its sockets, bound from DIR/run), /run/lock
//                        (libvirt's console lock files), /run/sshd and /run/abvm-sshd (DIR/sshd)
//   /etc/libvirt         DIR/etc: libvirtd.conf (TCP on 127.0.0.1:PORT, auth none; TLS on
//                        127.0.0.1:PORT with pki/, if asked; the UNIX socket), qemu.conf
//                        (QEMU as root, no security driver, as abvm's embedded root has it)
//   /var/lib             a tmpfs with /var/lib/libvirt (DIR/lib) and /var/lib/abvm (DIR/abvm:
//                        abvm's default pool path /var/lib/abvm/pool is DIR/abvm/pool)
//   /var/cache/libvirt   CACHE, kept across tests and test runs: QEMU's capabilities, which a
//                        fresh daemon probes for about 45 s, are probed once per CACHE
//   /var/log             a tmpfs with /var/log/libvirt (DIR/log: QEMU's logs)
//   /tmp /var/tmp /work /root/.cache
//                        empty tmpfs: abvm's results, its cache (kernels, guest images) and the
//                        test's own files are out of the daemon's sight, so whatever reaches a
//                        guest went through the connection
// libvirtd listens on 127.0.0.1 only (tcp_uri() and tls_uri(), if asked) and on its UNIX socket
// (unix_uri(), from this machine's side). With `ssh`, an sshd in the same namespace listens on
// 127.0.0.1:PORT for root with a key made by the test (DIR/ssh: client key, known_hosts, an ssh_config and the
// `ssh` wrapper that ssh_uri() gives libvirt as its ssh command), so qemu+ssh:// reaches that
// daemon through virt-ssh-helper, which Debian's libvirt-daemon package installs on the remote
// side (libvirt 9.0 runs it when it is there, nc otherwise). Nothing of root's own ~/.ssh is
// read or written. With `tls`, libvirtd listens for TLS on 127.0.0.1:PORT too, with certificates
// the test makes with openssl (make_tls_files): a CA, a server certificate for localhost and
// 127.0.0.1 (inside: /etc/libvirt/pki), a client certificate in DIR/tls-client (the layout of
// libvirt's pkipath=DIR: cacert.pem, clientcert.pem, clientkey.pem) and, in DIR/tls-wrong, a
// client certificate signed by another CA, which the daemon must refuse (tls_uri(dir)). Nothing
// of this machine's /etc/pki is read or written.
//
// kill() SIGKILLs the daemon alone, as a crash would: its QEMUs run on in the namespace, and a
// start() after it finds them again. The test process reaps the QEMUs that exit (see
// reap_orphaned_qemus). The destructor kills everything in the namespace (daemon,
// sshd, QEMUs) and the holder. Processes are started with fork and argument vectors; between
// fork and exec only system calls run (the test process has threads).
//
// SilentSocket stands in for a daemon that accepts connections and never answers them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/libvirt_driver.hpp"

namespace abvm::test {

namespace daemons_detail {

inline std::string slurp_if_there(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec) ? read_file(p) : std::string();
}

// A TCP port on 127.0.0.1 that nothing listens on right now.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

inline bool loopback_port_answers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

// The mount namespace inode of process `pid` ("" when it is gone).
inline std::string mount_ns(pid_t pid) {
  std::error_code ec;
  const auto target = std::filesystem::read_symlink(fmt::format("/proc/{}/ns/mnt", pid), ec);
  return ec ? std::string() : target.string();
}

// QEMU daemonizes, so a test daemon's QEMUs are orphans, and this machine's init reaps orphans
// only every ~1.5 s; libvirt waits for a stopped QEMU to vanish, so every guest a daemon stops
// would take that long here (not on a host whose init reaps at once, as systemd does). So the
// test process becomes the subreaper of its daemons' orphans and a thread reaps their QEMUs the
// moment they exit (as guest/qemu_reaper.cpp does for the embedded driver's). Other orphans
// (none are expected) wait for the end of the test process.
inline void reap_orphaned_qemus() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    std::thread([] {
      const std::string self = std::to_string(::getpid());
      for (;;) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
          const std::string stat = read_proc((e.path() / "stat").string());
          const auto close = stat.rfind(')');
          if (close == std::string::npos || close + 4 >= stat.size() || stat[close + 2] != 'Z') continue;
          if (stat.find("(qemu-system") == std::string::npos) continue;
          if (stat.compare(close + 4, self.size() + 1, self + " ") != 0) continue;
          ::waitpid(static_cast<pid_t>(std::stol(e.path().filename().string())), nullptr, WNOHANG);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }).detach();
  });
}

}  // namespace daemons_detail

// Why test daemons cannot run here, or nothing.
inline std::optional<std::string> missing_for_test_daemons(bool ssh, bool tls = false) {
  if (::geteuid() != 0) return "test libvirt daemons need root (mount namespaces, QEMU as root)";
  if (!std::filesystem::exists("/usr/sbin/libvirtd")) return "libvirtd is not installed (harness/setup.sh: libvirt-daemon)";
  if (!find_program("qemu-system-x86_64")) return "qemu-system-x86_64 is not installed (harness/setup.sh)";
  if (ssh && (!std::filesystem::exists("/usr/sbin/sshd") || !find_program("ssh") || !find_program("ssh-keygen"))) {
    return "sshd, ssh or ssh-keygen is missing (harness/setup.sh: openssh-server, openssh-client)";
  }
  if (tls && !find_program("openssl")) return "openssl is missing (harness/setup.sh: openssl)";
  return std::nullopt;
}

// The default CACHE of daemon `index` (0 for a test's only daemon). Daemons that run at once in
// one test get an index each, so none rewrites another's cache under it; a new cache starts as a
// copy of cache 0, which libvirt accepts when it still matches this machine's QEMU and libvirt
// (it probes again otherwise), so the ~45 s probe is paid once per machine. Test binaries that
// run at once may share cache 0: libvirt replaces a cache file by renaming a new one over it.
inline std::filesystem::path default_daemon_cache(int index) {
  return fmt::format("/var/tmp/abvm-test-libvirtd-cache/{}", index);
}

struct TestLibvirtdOptions {
  std::filesystem::path dir;    // its own state; created (emptied first), removed by the destructor
  std::filesystem::path cache = default_daemon_cache(0);  // its /var/cache/libvirt
  bool tcp = true;              // listen on 127.0.0.1:tcp_port()
  bool ssh = false;             // an sshd in its namespace on 127.0.0.1:ssh_port()
  bool tls = false;             // listen for TLS on 127.0.0.1:tls_port() (make_tls_files)
};

class TestLibvirtd {
 public:
  explicit TestLibvirtd(TestLibvirtdOptions o) : o_(std::move(o)) {
    namespace fs = std::filesystem;
    fs::remove_all(o_.dir);
    for (const char* d : {"etc", "run", "lib", "log", "abvm", "sshd", "ssh", "etc/pki", "tls-client", "tls-wrong"}) {
      fs::create_directories(o_.dir / d);
    }
    std::error_code ec;
    if (!fs::exists(o_.cache / "qemu", ec) && fs::exists(default_daemon_cache(0) / "qemu", ec)) {
      fs::copy(default_daemon_cache(0), o_.cache, fs::copy_options::recursive, ec);
    }
    fs::create_directories(o_.cache);
    if (o_.tcp) tcp_port_ = daemons_detail::free_loopback_port();
    if (o_.tls) tls_port_ = daemons_detail::free_loopback_port();
    std::string conf = "unix_sock_dir = \"/run/libvirt\"\nauth_unix_ro = \"none\"\nauth_unix_rw = \"none\"\n";
    if (o_.tcp || o_.tls) conf += "listen_addr = \"127.0.0.1\"\n";
    conf += o_.tcp ? fmt::format("listen_tcp = 1\ntcp_port = \"{}\"\nauth_tcp = \"none\"\n", tcp_port_) : "listen_tcp = 0\n";
    // The client's certificate is checked against the CA (tls_no_verify_certificate = 0, the
    // default); any certificate of that CA is let in (no tls_allowed_dn_list).
    conf += o_.tls ? fmt::format("listen_tls = 1\ntls_port = \"{}\"\nauth_tls = \"none\"\n"
                                 "key_file = \"/etc/libvirt/pki/serverkey.pem\"\n"
                                 "cert_file = \"/etc/libvirt/pki/servercert.pem\"\n"
                                 "ca_file = \"/etc/libvirt/pki/cacert.pem\"\n",
                                 tls_port_)
                   : "listen_tls = 0\n";
    write_file_atomic(o_.dir / "etc" / "libvirtd.conf", conf);
    write_file_atomic(o_.dir / "etc" / "qemu.conf", std::string(LibvirtDriver::embedded_qemu_conf_text()));
    if (o_.ssh) make_ssh_files();
    if (o_.tls) make_tls_files();
  }
  ~TestLibvirtd() {
    stop_all();
    std::error_code ec;
    std::filesystem::remove_all(o_.dir, ec);
  }
  TestLibvirtd(const TestLibvirtd&) = delete;
  TestLibvirtd& operator=(const TestLibvirtd&) = delete;

  // Starts the daemon (and, the first time, its namespace and sshd); waits until it answers on
  // every address it has. False (see log()) when it does not within 60 s.
  bool start() {
    daemons_detail::reap_orphaned_qemus();
    if (holder_ <= 0 && !start_holder()) return false;
    std::error_code ec;
    std::filesystem::remove(o_.dir / "run" / "libvirt-sock", ec);
    std::vector<std::string> argv{"/usr/sbin/libvirtd", "--pid-file", "/run/libvirt/libvirtd.pid"};
    if (o_.tcp || o_.tls) argv.push_back("--listen");
    daemon_ = spawn_in_namespace(argv, o_.dir / "daemon.log");
    if (o_.ssh && sshd_ <= 0) {
      sshd_ = spawn_in_namespace({"/usr/sbin/sshd", "-D", "-e", "-f", "/run/abvm-sshd/sshd_config"}, o_.dir / "sshd.log");
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      const bool up = std::filesystem::exists(o_.dir / "run" / "libvirt-sock", ec) &&
                      (!o_.tcp || daemons_detail::loopback_port_answers(tcp_port_)) &&
                      (!o_.tls || daemons_detail::loopback_port_answers(tls_port_)) &&
                      (!o_.ssh || daemons_detail::loopback_port_answers(ssh_port_));
      if (up) return true;
      if (::waitpid(daemon_, nullptr, WNOHANG) == daemon_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // SIGKILLs libvirtd alone (a crash): its QEMUs and the sshd run on.
  void kill() {
    if (daemon_ <= 0) return;
    ::kill(daemon_, SIGKILL);
    ::waitpid(daemon_, nullptr, 0);
    daemon_ = -1;
  }

  // Kills every process of the namespace (daemon, sshd, QEMUs) and its holder.
  void stop_all() {
    if (holder_ <= 0) return;
    kill();
    const std::string ns = daemons_detail::mount_ns(holder_);
    for (int round = 0; round < 50 && !ns.empty(); ++round) {
      const auto pids = processes_in_namespace(ns);
      if (pids.empty()) break;
      for (pid_t p : pids) ::kill(p, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Only our own children, by pid: waitpid(-1) would reap any child of the test process.
    if (sshd_ > 0) ::waitpid(sshd_, nullptr, 0);
    ::waitpid(holder_, nullptr, 0);
    holder_ = sshd_ = -1;
  }

  std::string unix_uri() const { return "qemu:///system?socket=" + (o_.dir / "run" / "libvirt-sock").string(); }
  std::string tcp_uri() const { return fmt::format("qemu+tcp://127.0.0.1:{}/system", tcp_port_); }
  std::string ssh_uri() const {
    return fmt::format("qemu+ssh://root@127.0.0.1:{}/system?command={}", ssh_port_, (o_.dir / "ssh" / "ssh").string());
  }
  // qemu+tls:// to localhost with the client files of `pki` (tls_client_dir(), tls_wrong_dir()).
  std::string tls_uri(const std::filesystem::path& pki) const {
    return fmt::format("qemu+tls://localhost:{}/system?pkipath={}", tls_port_, pki.string());
  }
  // A client certificate of the daemon's CA, and the CA's certificate.
  std::filesystem::path tls_client_dir() const { return o_.dir / "tls-client"; }
  // A client certificate of another CA (cacert.pem holds both CAs, so this side trusts the
  // daemon's certificate and its own), which the daemon refuses.
  std::filesystem::path tls_wrong_dir() const { return o_.dir / "tls-wrong"; }
  int tcp_port() const { return tcp_port_; }
  int tls_port() const { return tls_port_; }
  int ssh_port() const { return ssh_port_; }
  pid_t pid() const { return daemon_; }

  // A path as the daemon sees it, reached from this machine (through the holder's /proc root).
  std::filesystem::path seen(const std::filesystem::path& inside) const {
    return fmt::format("/proc/{}/root{}", holder_, inside.string());
  }
  // abvm's default pool directory on this host (/var/lib/abvm/pool inside), from this machine.
  std::filesystem::path pool_dir() const { return o_.dir / "abvm" / "pool"; }
  // QEMU processes in the daemon's namespace.
  std::vector<pid_t> qemus() const {
    std::vector<pid_t> out;
    for (pid_t p : processes_in_namespace(daemons_detail::mount_ns(holder_))) {
      if (read_proc(fmt::format("/proc/{}/cmdline", p)).find("qemu-system") != std::string::npos) out.push_back(p);
    }
    return out;
  }
  std::string log() const {
    return daemons_detail::slurp_if_there(o_.dir / "daemon.log") + daemons_detail::slurp_if_there(o_.dir / "sshd.log");
  }

 private:
  // The namespace and its mounts, then `sleep infinity` to hold it.
  bool start_holder() {
    namespace fs = std::filesystem;
    const std::string d = o_.dir.string(), cache = o_.cache.string();
    const std::vector<std::string> hide = {"/tmp", "/var/tmp", "/work", "/root/.cache"};
    std::vector<std::string> hidden;
    std::error_code ec;
    for (const auto& h : hide) {
      if (fs::is_directory(h, ec)) hidden.push_back(h);
    }
    const std::string log = d + "/holder.log";
    holder_ = ::fork();
    if (holder_ == 0) {
      // Gone with the test process, whatever way it ends.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) ::dup2(fd, 2);
      if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(120);
      const auto tmpfs = [](const char* where) { return ::mount("tmpfs", where, "tmpfs", 0, "mode=0755") == 0; };
      const auto bind = [](const std::string& from, const char* to) {
        return ::mkdir(to, 0755) == 0 && ::mount(from.c_str(), to, nullptr, MS_BIND, nullptr) == 0;
      };
      bool ok = tmpfs("/run") && ::mkdir("/run/lock", 01777) == 0 && ::mkdir("/run/sshd", 0755) == 0 &&
                bind(d + "/run", "/run/libvirt") && bind(d + "/sshd", "/run/abvm-sshd") &&
                ::mount((d + "/etc").c_str(), "/etc/libvirt", nullptr, MS_BIND, nullptr) == 0 && tmpfs("/var/lib") &&
                bind(d + "/lib", "/var/lib/libvirt") && bind(d + "/abvm", "/var/lib/abvm") && tmpfs("/var/cache") &&
                bind(cache, "/var/cache/libvirt") && tmpfs("/var/log") && bind(d + "/log", "/var/log/libvirt");
      for (const auto& h : hidden) ok = ok && tmpfs(h.c_str());
      if (!ok) ::_exit(121);
      char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("infinity"), nullptr};
      ::execve("/usr/bin/sleep", argv, clean_environment());
      ::_exit(127);
    }
    // The holder is ready once its namespace differs from ours and it sleeps.
    const std::string own = daemons_detail::mount_ns(::getpid());
    for (int i = 0; i < 200; ++i) {
      if (read_proc(fmt::format("/proc/{}/cmdline", holder_)).starts_with("sleep")) {
        return daemons_detail::mount_ns(holder_) != own;
      }
      if (::waitpid(holder_, nullptr, WNOHANG) == holder_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    holder_ = -1;
    return false;
  }

  // The daemons' environment: nothing of the test's (LIBVIRT_* settings of a test that uses
  // libvirt itself would point the daemon's log at a directory it cannot see).
  static char* const* clean_environment() {
    static char path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    static char home[] = "HOME=/root";
    static char lang[] = "LANG=C.UTF-8";
    static char* const env[] = {path, home, lang, nullptr};
    return env;
  }

  // Runs `argv` inside the holder's namespace with stdout and stderr appended to `log`. It dies
  // with the test process (PR_SET_PDEATHSIG; call from the test's main thread, which outlives it).
  pid_t spawn_in_namespace(const std::vector<std::string>& argv, const std::filesystem::path& log) const {
    const std::string ns = fmt::format("/proc/{}/ns/mnt", holder_);
    std::vector<char*> args;
    std::vector<std::string> copy = argv;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      const int nsfd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
      if (out < 0 || nsfd < 0 || ::setns(nsfd, CLONE_NEWNS) != 0 || ::chdir("/") != 0) ::_exit(120);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execve(args[0], args.data(), clean_environment());
      ::_exit(127);
    }
    return pid;
  }

  static std::vector<pid_t> processes_in_namespace(const std::string& ns) {
    std::vector<pid_t> out;
    if (ns.empty()) return out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::stol(name));
      if (daemons_detail::mount_ns(pid) == ns) out.push_back(pid);
    }
    return out;
  }

  // sshd's files (inside: /run/abvm-sshd) and the client's (DIR/ssh), all made for this test.
  void make_ssh_files() {
    const auto s = o_.dir / "sshd", c = o_.dir / "ssh";
    ssh_port_ = daemons_detail::free_loopback_port();
    for (const auto& key : {s / "host_key", c / "client_key"}) {
      std::error_code ec;
      std::filesystem::remove(key, ec);
      std::filesystem::remove(key.string() + ".pub", ec);
      run_checked({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "abvm-test", "-f", key.string()});
    }
    write_file_atomic(s / "authorized_keys", read_file(c / "client_key.pub"));
    write_file_atomic(s / "sshd_config",
                      fmt::format("Port {}\nListenAddress 127.0.0.1\nHostKey /run/abvm-sshd/host_key\n"
                                  "AuthorizedKeysFile /run/abvm-sshd/authorized_keys\nPermitRootLogin prohibit-password\n"
                                  "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                                  "StrictModes no\nPidFile /run/abvm-sshd/sshd.pid\n",
                                  ssh_port_));
    write_file_atomic(c / "known_hosts", fmt::format("[127.0.0.1]:{} {}", ssh_port_, read_file(s / "host_key.pub")));
    write_file_atomic(c / "ssh_config",
                      fmt::format("Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n"
                                  "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
                                  "  PasswordAuthentication no\n",
                                  (c / "client_key").string(), (c / "known_hosts").string()));
    // libvirt runs its ssh command with the URI's arguments; the wrapper adds the test's config.
    write_file_atomic(c / "ssh", fmt::format("#!/bin/sh\nexec /usr/bin/ssh -F {} \"$@\"\n", (c / "ssh_config").string()));
    std::filesystem::permissions(c / "ssh", std::filesystem::perms(0755));
  }

  // The CAs and certificates of tls_client_dir() and tls_wrong_dir(), and the daemon's (DIR/etc/pki,
  // /etc/libvirt/pki inside), made with openssl with the extensions libvirt checks (GnuTLS): a CA
  // with basicConstraints CA:TRUE and keyCertSign, a server certificate for TLS Web Server with
  // localhost and 127.0.0.1 as names, client certificates for TLS Web Client. Valid for 2 days.
  void make_tls_files() {
    namespace fs = std::filesystem;
    const fs::path w = o_.dir / "tls-work", server = o_.dir / "etc" / "pki";
    fs::create_directories(w);
    const auto ca = [&](const std::string& name) {
      run_checked({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                   "/O=abvm test/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                   "keyUsage=critical,keyCertSign,cRLSign", "-keyout", (w / (name + ".key")).string(), "-out",
                   (w / (name + ".pem")).string()});
    };
    // A key at `key` and a certificate at `cert` signed by CA `by`, with the extensions `ext`.
    const auto issue = [&](const std::string& by, const std::string& cn, const std::string& ext, const fs::path& key,
                           const fs::path& cert) {
      const fs::path csr = w / (cn + ".csr"), extfile = w / (cn + ".ext");
      write_file_atomic(extfile, "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n" + ext);
      run_checked({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/O=abvm test/CN=" + cn, "-keyout",
                   key.string(), "-out", csr.string()});
      run_checked({"openssl", "x509", "-req", "-days", "2", "-in", csr.string(), "-CA", (w / (by + ".pem")).string(),
                   "-CAkey", (w / (by + ".key")).string(), "-CAcreateserial", "-CAserial", (w / (by + ".srl")).string(),
                   "-extfile", extfile.string(), "-out", cert.string()});
    };
    ca("abvm-test-ca");
    ca("abvm-other-ca");
    issue("abvm-test-ca", "localhost", "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
          server / "serverkey.pem", server / "servercert.pem");
    fs::copy_file(w / "abvm-test-ca.pem", server / "cacert.pem", fs::copy_options::overwrite_existing);
    issue("abvm-test-ca", "abvm-client", "extendedKeyUsage=clientAuth\n", tls_client_dir() / "clientkey.pem",
          tls_client_dir() / "clientcert.pem");
    fs::copy_file(w / "abvm-test-ca.pem", tls_client_dir() / "cacert.pem", fs::copy_options::overwrite_existing);
    issue("abvm-other-ca", "abvm-stranger", "extendedKeyUsage=clientAuth\n", tls_wrong_dir() / "clientkey.pem",
          tls_wrong_dir() / "clientcert.pem");
    write_file_atomic(tls_wrong_dir() / "cacert.pem", read_file(w / "abvm-test-ca.pem") + read_file(w / "abvm-other-ca.pem"));
  }

  TestLibvirtdOptions o_;
  int tcp_port_ = 0;
  int tls_port_ = 0;
  int ssh_port_ = 0;
  pid_t holder_ = -1;
  pid_t daemon_ = -1;
  pid_t sshd_ = -1;
};

// A UNIX socket that accepts connections and never reads or answers them: a libvirt daemon that
// is stopped or deadlocked inside, as its clients see it (the kernel keeps accepting for it). For
// the tests of the bounds on abvm's first connection. Listens from construction; the destructor
// wakes and joins its thread, closes what it accepted and removes the socket file.
class SilentSocket {
 public:
  explicit SilentSocket(std::filesystem::path path) : path_(std::move(path)) {
    std::filesystem::remove(path_);
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string p = path_.string();
    if (listener_ < 0 || p.size() >= sizeof a.sun_path) throw std::runtime_error("cannot make a socket at " + p);
    p.copy(a.sun_path, p.size());
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 16) != 0) {
      ::close(listener_);
      throw std::runtime_error("cannot listen at " + p + ": " + std::strerror(errno));
    }
    thread_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR) continue;
        if (fd < 0) return;  // shut down by the destructor
        std::lock_guard lock(mutex_);
        accepted_.push_back(fd);
      }
    });
  }
  ~SilentSocket() {
    ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(listener_);
    for (int fd : accepted_) ::close(fd);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  SilentSocket(const SilentSocket&) = delete;
  SilentSocket& operator=(const SilentSocket&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::size_t accepted() {
    std::lock_guard lock(mutex_);
    return accepted_.size();
  }

 private:
  std::filesystem::path path_;
  int listener_ = -1;
  std::mutex mutex_;
  std::vector<int> accepted_;
  std::thread thread_;
};

// `count` test daemons under `dir` (dir/0, dir/1, ...), each with its own CACHE
// (default_daemon_cache), listening on TCP; `ssh` gives daemon 0 an sshd too.
class TestLibvirtds {
 public:
  TestLibvirtds(const std::filesystem::path& dir, int count, bool ssh = false) {
    for (int i = 0; i < count; ++i) {
      daemons_.push_back(std::make_unique<TestLibvirtd>(TestLibvirtdOptions{
          .dir = dir / std::to_string(i), .cache = default_daemon_cache(i), .tcp = true, .ssh = ssh && i == 0}));
    }
  }
  // Starts them all; false (with the failing one's log in `why`) when one does not answer.
  bool start(std::string* why = nullptr) {
    for (auto& d : daemons_) {
      if (d->start()) continue;
      if (why) *why = d->log();
      return false;
    }
    return true;
  }
  TestLibvirtd& operator[](std::size_t i) { return *daemons_.at(i); }
  std::size_t size() const { return daemons_.size(); }

 private:
  std::vector<std::unique_ptr<TestLibvirtd>> daemons_;
};

}  // namespace abvm::test
