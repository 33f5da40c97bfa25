// ABVM_BOOT_KEEP=<dir> keeps a copy of the unpatched kernel, the initrd, the nonce, the record
// prefix and the console log of the dd+fio boot in <dir>, for
// `harness/bench/boot_time.sh <build> N source`.
//
// Real boots of the kernels abvm builds from source: kernels/linux-6.1-virtio (side A of the
// DMA-API experiment) and kernels/linux-6.1-virtio-dma-api (side B, the patch series), booting
// the guest image under QEMU/TCG with a virtio-blk scratch disk. The records are parsed from
// the serial console as abvm does it.
//
// Label "kernel-build" (the file name contains `_kernel_build_`, see tests/CMakeLists.txt):
// SetUpTestSuite builds both kernels, or finds them in the user's kernel cache (~6.5 min
// for the first build here, instant afterwards), so CI runs this with the kernel build tests.
//
// What each group of tests proves:
//   - a source-built kernel (virtio built in: no modules archive) runs dd and fio on the
//     scratch disk and the records carry its release, features and the tools' output;
//   - the patch takes effect: with iommu_platform off (VIRTIO_F_ACCESS_PLATFORM, bit 33, not
//     offered) the patched kernel says in dmesg that the scratch disk uses the DMA API and the
//     unpatched one does not; with iommu_platform on, bit 33 is negotiated (the DMA API by the
//     feature, the control);
//   - a kernel that does not boot ends the QEMU process promptly (panic=-1 + -no-reboot) or
//     at the host's timeout, and the console tail says what happened; through abvm's libvirt
//     driver, a panic is the outcome "crashed" with the whole console.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <unistd.h>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/cpio.hpp"
#include "guest/domain_xml.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "kernels/kernel.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/records.hpp"

namespace fs = std::filesystem;
using namespace abvm;
using namespace std::chrono_literals;

namespace {

// The scratch disk sits at a fixed PCI slot, so the patch's dmesg line can be tied to it:
// "virtio_ring: abvm: DMA API in use for virtio0 (0000:00:05.0)".
constexpr const char* kScratchDevice = "virtio-blk-pci,drive=d0,serial=abvm-scratch,addr=0x5";
constexpr const char* kScratchPciAddress = "0000:00:05.0";
constexpr const char* kDmaApiLine = "virtio_ring: abvm: DMA API in use for ";

struct Boot {
  ProcessResult qemu;
  std::string console;
  GuestReport report;
  double host_seconds = 0;
};

struct BootArgs {
  fs::path kernel;
  fs::path initrd;
  std::string nonce;
  std::string cmdline = std::string(kGuestKernelCmdline);
  std::string device_extra;                  // appended to kScratchDevice, e.g. ",iommu_platform=on"
  std::chrono::milliseconds timeout = 5min;  // a healthy boot takes 2-10 s under TCG
};

// One QEMU boot, as guest_boot_qemu_test.cpp does it (same machine and flags as
// harness/bench/boot_time.sh), with the scratch disk at kScratchPciAddress.
Boot boot(const fs::path& dir, const BootArgs& a) {
  const fs::path scratch = dir / "scratch.raw";
  { std::ofstream(scratch, std::ios::binary | std::ios::trunc); }
  fs::resize_file(scratch, 64ull << 20);
  const fs::path console = dir / "console.log";
  fs::remove(console);
  std::vector<std::string> argv = {
      "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "512", "-nographic", "-no-reboot",
      "-nodefaults", "-kernel", a.kernel.string(), "-append", a.cmdline,
      "-drive", "file=" + scratch.string() + ",if=none,id=d0,format=raw",
      "-device", std::string(kScratchDevice) + a.device_extra, "-serial", "file:" + console.string(),
      "-monitor", "none"};
  if (!a.initrd.empty()) argv.insert(argv.end(), {"-initrd", a.initrd.string()});
  Boot b;
  const auto t0 = std::chrono::steady_clock::now();
  b.qemu = run_process(argv, {.timeout = a.timeout});
  b.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  b.console = fs::exists(console) ? read_file(console) : "";
  b.report = parse_guest_console(b.console, a.nonce);
  return b;
}

std::string console_tail(const std::string& console, std::size_t n = 3000) {
  return console.size() > n ? console.substr(console.size() - n) : console;
}

bool feature(const GuestReport& r, int bit) { return r.blk_features && ((*r.blk_features >> bit) & 1u); }

std::vector<std::string> dmesg_matching(const GuestReport& r, const std::string& what) {
  std::vector<std::string> out;
  for (const auto& l : r.dmesg) {
    if (l.find(what) != std::string::npos) out.push_back(l);
  }
  return out;
}

bool have_linux_source() { return fs::exists("/usr/src/linux-source-6.1.tar.xz"); }

// A small dd (16 x 1 MiB, oflag=direct) job, optionally followed by a small fio job.
// Its `hold` of 1 s: the guests here power off a second after their END record, not waiting for a
// host to end them.
GuestJob dd_fio_job(const std::string& trial, bool with_fio) {
  GuestJob job{.trial_id = trial, .nonce = make_nonce(), .hold_seconds = 1};
  job.workloads.push_back(
      {.workload = Workload{.name = "dd-write", .spec = DdWorkload{.block_size = "1M", .count = 16}, .repetitions = 1}});
  if (with_fio) {
    FioWorkload fio;
    fio.options = {{"rw", "write"}, {"bs", "64k"}, {"size", "8M"}, {"direct", "1"},
                   {"ioengine", "psync"}, {"filename", "@scratch"}};
    job.workloads.push_back({.workload = Workload{.name = "fio-write", .spec = fio, .repetitions = 1}});
  }
  return job;
}

// dd's own summary line: "<bytes> bytes (...) copied, <seconds> s, <rate>".
void expect_dd_16MiB(const GuestRun& run) {
  EXPECT_EQ(run.workload, "dd-write");
  EXPECT_FALSE(run.warmup);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_GE(run.t_end, run.t_start);
  static const std::regex dd_line(R"((\d+) bytes .* copied, ([0-9.e-]+) s)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.output, m, dd_line)) << run.output;
  EXPECT_EQ(std::stoull(m[1]), 16ull << 20);
  EXPECT_GT(std::stod(m[2]), 0.0);
}

void expect_clean_report(const Boot& b, const std::string& trial) {
  ASSERT_FALSE(b.qemu.timed_out);
  EXPECT_EQ(b.qemu.exit_code, 0) << b.qemu.err;
  EXPECT_TRUE(b.report.begun);
  EXPECT_TRUE(b.report.ended);
  EXPECT_TRUE(b.report.problems.empty()) << ::testing::PrintToString(b.report.problems);
  EXPECT_TRUE(b.report.agent_errors.empty()) << ::testing::PrintToString(b.report.agent_errors);
  EXPECT_EQ(b.report.trial_id, trial);
}

class SourceKernelBoot : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!find_program("qemu-system-x86_64") || !have_linux_source()) return;
    suite_dir_ = new fs::path(fs::temp_directory_path() / ("abvm-kboot-" + make_nonce().substr(0, 8)));
    fs::create_directories(*suite_dir_);
    image_ = new GuestImage(build_guest_image());
    plain_image_ = new fs::path(*suite_dir_ / "bzImage-linux-6.1-virtio");
    patched_image_ = new fs::path(*suite_dir_ / "bzImage-linux-6.1-virtio-dma-api");
    plain_ = new KernelArtifact(build_private_copy("linux-6.1-virtio", *plain_image_));
    patched_ = new KernelArtifact(build_private_copy("linux-6.1-virtio-dma-api", *patched_image_));
  }
  // Builds (or finds) a recipe's kernel and copies its image to `to`. The tests boot private
  // copies: guest_kernel_build_test deletes and rebuilds the patched kernel's cache entry, and
  // ctest -j may run it alongside this binary (hence one more try when the entry vanishes).
  static KernelArtifact build_private_copy(const std::string& recipe, const fs::path& to) {
    for (int attempt = 1;; ++attempt) {
      KernelArtifact a = build_kernel(load_kernel_recipe(recipe));
      std::error_code ec;
      fs::copy_file(a.image, to, fs::copy_options::overwrite_existing, ec);
      if (!ec) return a;
      if (attempt == 3) throw fs::filesystem_error("copying the kernel " + recipe, a.image, to, ec);
    }
  }
  static void TearDownTestSuite() {
    if (suite_dir_ != nullptr) fs::remove_all(*suite_dir_);
    delete suite_dir_;
    delete image_;
    delete plain_;
    delete patched_;
    delete plain_image_;
    delete patched_image_;
    suite_dir_ = plain_image_ = patched_image_ = nullptr;
    image_ = nullptr;
    plain_ = patched_ = nullptr;
  }
  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed (package qemu-system-x86)");
    if (!have_linux_source()) ABVM_SKIP_WITHOUT("linux-source-6.1 is not installed (harness/setup.sh installs it)");
    ASSERT_NE(image_, nullptr);
    ASSERT_NE(plain_, nullptr);
    ASSERT_NE(patched_, nullptr);
    dir_ = *suite_dir_ / make_nonce().substr(0, 8);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure() && !dir_.empty()) {
      // Keep the console log and initrd of a failing test where the message says.
      const fs::path keep = fs::temp_directory_path() / ("abvm-kboot-failed-" + dir_.filename().string());
      std::error_code ec;
      fs::rename(dir_, keep, ec);
      if (!ec) std::printf("kept %s\n", keep.c_str());
    }
  }
  // Source-built kernels have virtio built in: the modules archive is empty.
  fs::path initrd_for(const GuestJob& job) {
    const fs::path initrd = dir_ / "initrd";
    write_guest_initrd(initrd, *image_, "", build_job_archive(job));
    return initrd;
  }
  // Boots `kernel` with a one-dd job and the scratch disk's extra device options.
  Boot dma_boot(const fs::path& kernel, const std::string& trial, const std::string& device_extra) {
    GuestJob job = dd_fio_job(trial, false);
    return boot(dir_, {.kernel = kernel, .initrd = initrd_for(job), .nonce = job.nonce, .device_extra = device_extra});
  }

  static fs::path* suite_dir_;
  static GuestImage* image_;
  static KernelArtifact* plain_;
  static KernelArtifact* patched_;
  static fs::path* plain_image_;
  static fs::path* patched_image_;
  fs::path dir_;
};
fs::path* SourceKernelBoot::suite_dir_ = nullptr;
GuestImage* SourceKernelBoot::image_ = nullptr;
KernelArtifact* SourceKernelBoot::plain_ = nullptr;
KernelArtifact* SourceKernelBoot::patched_ = nullptr;
fs::path* SourceKernelBoot::plain_image_ = nullptr;
fs::path* SourceKernelBoot::patched_image_ = nullptr;

// ---- 1. A source-built kernel runs the workloads -------------------------------------------

TEST_F(SourceKernelBoot, UnpatchedKernelRunsDdAndFioOnTheScratchDisk) {
  EXPECT_FALSE(plain_->modules_dir.has_value()) << "virtio must be built in (kernels/fragments/virtio-guest.config)";
  EXPECT_EQ(plain_->release.rfind("6.1.", 0), 0u) << plain_->release;
  EXPECT_EQ(plain_->identity["release"], plain_->release);

  const GuestJob job = dd_fio_job("src-dd-fio", true);
  const fs::path initrd = initrd_for(job);
  const char* keep = std::getenv("ABVM_BOOT_KEEP");
  if (keep != nullptr) {
    fs::create_directories(keep);
    fs::copy_file(initrd, fs::path(keep) / "initrd", fs::copy_options::overwrite_existing);
    fs::copy_file(*plain_image_, fs::path(keep) / "bzImage", fs::copy_options::overwrite_existing);
    write_file_atomic(fs::path(keep) / "kernel", (fs::path(keep) / "bzImage").string() + "\n");
    write_file_atomic(fs::path(keep) / "nonce", job.nonce + "\n");
    write_file_atomic(fs::path(keep) / "record_prefix", record_prefix(job.nonce) + "\n");
  }
  const Boot b = boot(dir_, {.kernel = *plain_image_, .initrd = initrd, .nonce = job.nonce});
  if (keep != nullptr) write_file_atomic(fs::path(keep) / "console.log", b.console);
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  expect_clean_report(b, "src-dd-fio");
  const GuestReport& r = b.report;
  EXPECT_EQ(r.kernel_release, plain_->release);
  EXPECT_NE(r.cmdline.find("panic=-1"), std::string::npos) << r.cmdline;
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_TRUE(feature(r, 32));  // VIRTIO_F_VERSION_1: a modern virtio-pci device
  EXPECT_FALSE(feature(r, kVirtioFAccessPlatform));
  EXPECT_FALSE(r.access_platform);

  ASSERT_EQ(r.runs.size(), 2u);
  expect_dd_16MiB(r.runs[0]);
  const GuestRun& f = r.runs[1];
  EXPECT_EQ(f.workload, "fio-write");
  // fio's helper thread needs timerfd_create(2): a kernel without CONFIG_TIMERFD aborts fio
  // with "helper_thread.c:301: ... Assertion `timerfd >= 0' failed" (exit 134).
  EXPECT_EQ(f.exit_status, 0) << f.output;
  const auto brace = f.output.find('{');
  ASSERT_NE(brace, std::string::npos) << f.output;
  const auto json = nlohmann::json::parse(f.output.substr(brace));
  EXPECT_EQ(json["jobs"][0]["jobname"], "fio-write");
  EXPECT_EQ(json["jobs"][0]["write"]["io_bytes"].get<std::uint64_t>(), 8ull << 20);
  EXPECT_GT(json["jobs"][0]["write"]["bw"].get<double>(), 0.0);
  std::printf("linux-6.1-virtio %s: guest uptime at first workload %.2f s, host wall time %.1f s\n",
              plain_->release.c_str(), r.runs[0].t_start, b.host_seconds);
}

// ---- 2. The DMA-API patch takes effect ------------------------------------------------------

TEST_F(SourceKernelBoot, PatchedKernelUsesTheDmaApiWithoutAccessPlatform) {
  const Boot b = dma_boot(*patched_image_, "dma-patched", "");
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  expect_clean_report(b, "dma-patched");
  const GuestReport& r = b.report;
  EXPECT_EQ(r.kernel_release, patched_->release);
  // QEMU's default: iommu_platform off, so the device does not offer ACCESS_PLATFORM and an
  // unpatched kernel would take the direct path (vring_use_dma_api() returns false) ...
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_TRUE(feature(r, 32));
  EXPECT_FALSE(feature(r, kVirtioFAccessPlatform));
  EXPECT_FALSE(r.access_platform);
  // ... but the patched kernel uses the DMA API, and says so for the scratch disk: virtio0 is
  // the device at the scratch disk's PCI address, and the disk driver names it vda.
  const auto dma = dmesg_matching(r, kDmaApiLine);
  ASSERT_EQ(dma.size(), 1u) << ::testing::PrintToString(r.dmesg);
  EXPECT_NE(dma[0].find(std::string(kDmaApiLine) + "virtio0 (" + kScratchPciAddress + ")"), std::string::npos)
      << dma[0];
  EXPECT_EQ(dmesg_matching(r, "virtio_blk virtio0: [vda]").size(), 1u) << ::testing::PrintToString(r.dmesg);
  // And I/O through the DMA API path works.
  ASSERT_EQ(r.runs.size(), 1u);
  expect_dd_16MiB(r.runs[0]);
}

TEST_F(SourceKernelBoot, UnpatchedKernelUsesTheDirectPath) {
  const Boot b = dma_boot(*plain_image_, "dma-plain", "");
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  expect_clean_report(b, "dma-plain");
  const GuestReport& r = b.report;
  EXPECT_EQ(r.kernel_release, plain_->release);
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_TRUE(feature(r, 32));
  EXPECT_FALSE(feature(r, kVirtioFAccessPlatform));
  // The dmesg records arrive (the disk driver's line is there), and the DMA-API line is not.
  EXPECT_EQ(dmesg_matching(r, "virtio_blk virtio0: [vda]").size(), 1u) << ::testing::PrintToString(r.dmesg);
  EXPECT_TRUE(dmesg_matching(r, kDmaApiLine).empty()) << ::testing::PrintToString(r.dmesg);
  ASSERT_EQ(r.runs.size(), 1u);
  expect_dd_16MiB(r.runs[0]);
}

TEST_F(SourceKernelBoot, AccessPlatformIsNegotiatedWithIommuPlatformOn) {
  // The control: the same unpatched kernel takes the DMA API because the device asks for it
  // (iommu_platform=on needs a modern-only device).
  const Boot b = dma_boot(*plain_image_, "dma-control", ",iommu_platform=on,disable-legacy=on");
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  expect_clean_report(b, "dma-control");
  const GuestReport& r = b.report;
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_TRUE(feature(r, 32));
  EXPECT_TRUE(feature(r, kVirtioFAccessPlatform));
  EXPECT_TRUE(r.access_platform);
  // The unpatched kernel has no report line of its own, whichever path it takes.
  EXPECT_TRUE(dmesg_matching(r, kDmaApiLine).empty()) << ::testing::PrintToString(r.dmesg);
  ASSERT_EQ(r.runs.size(), 1u);
  expect_dd_16MiB(r.runs[0]);

  // The patched kernel with the feature on: the DMA API either way, and it says so.
  const Boot p = dma_boot(*patched_image_, "dma-control-patched", ",iommu_platform=on,disable-legacy=on");
  SCOPED_TRACE("patched console tail:\n" + console_tail(p.console));
  expect_clean_report(p, "dma-control-patched");
  EXPECT_TRUE(p.report.access_platform);
  EXPECT_EQ(dmesg_matching(p.report, std::string(kDmaApiLine) + "virtio0 (" + kScratchPciAddress + ")").size(), 1u)
      << ::testing::PrintToString(p.report.dmesg);
}

// ---- 3. Kernels that do not boot -----------------------------------------------------------

TEST_F(SourceKernelBoot, AnInitThatCannotRunPanicsAndQemuExitsAtOnce) {
  // No /nonexistent in the initramfs: the kernel falls back to mounting a root file system,
  // there is none, it panics, panic=-1 reboots and -no-reboot turns that into QEMU's exit.
  const GuestJob job = dd_fio_job("no-init", false);
  BootArgs args{.kernel = *plain_image_, .initrd = initrd_for(job), .nonce = job.nonce,
                .cmdline = "console=ttyS0 panic=-1 quiet rdinit=/nonexistent", .timeout = 60s};
  const Boot b = boot(dir_, args);
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  ASSERT_FALSE(b.qemu.timed_out);
  EXPECT_EQ(b.qemu.exit_code, 0) << b.qemu.err;
  EXPECT_LT(b.host_seconds, 30.0);
  // The tail of the console is the message a user needs (what classify_trial turns into the
  // trial's "panic" detail): the panic line, even with `quiet`.
  const std::string tail = console_tail(b.console, 500);
  EXPECT_NE(tail.find("Kernel panic - not syncing: VFS: Unable to mount root fs"), std::string::npos) << tail;
  EXPECT_FALSE(b.report.begun);
  EXPECT_TRUE(b.report.runs.empty());
  std::printf("panic detected after %.1f s host wall time\n", b.host_seconds);
}

TEST_F(SourceKernelBoot, ATruncatedBzImageEndsWithoutAnyKernelOutput) {
  // Cut off the compressed kernel: QEMU still loads it (the setup header is intact), the
  // decompressor fails and the machine resets, which -no-reboot turns into an exit.
  const fs::path cut = dir_ / "bzImage-truncated";
  const std::string whole = read_file(*plain_image_);
  write_file_atomic(cut, whole.substr(0, whole.size() / 2));
  const GuestJob job = dd_fio_job("truncated", false);
  const Boot b = boot(dir_, {.kernel = cut, .initrd = initrd_for(job), .nonce = job.nonce, .timeout = 60s});
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  ASSERT_FALSE(b.qemu.timed_out);
  EXPECT_LT(b.host_seconds, 30.0);
  // The console holds the firmware's last words and no kernel banner, no records: the host
  // sees "ended without a begin record", never samples.
  EXPECT_NE(b.console.find("Booting from ROM"), std::string::npos);
  EXPECT_EQ(b.console.find("Linux version"), std::string::npos);
  EXPECT_EQ(b.console.find("ABVM2:"), std::string::npos);
  EXPECT_FALSE(b.report.begun);

  // A bzImage cut inside its setup header is refused by QEMU before the guest starts.
  write_file_atomic(cut, whole.substr(0, 1000));
  const Boot h = boot(dir_, {.kernel = cut, .initrd = dir_ / "initrd", .nonce = job.nonce, .timeout = 60s});
  EXPECT_FALSE(h.qemu.timed_out);
  EXPECT_NE(h.qemu.exit_code, 0);
  EXPECT_NE(h.qemu.err.find("invalid kernel header"), std::string::npos) << h.qemu.err;
}

TEST_F(SourceKernelBoot, AGuestThatHangsIsEndedAtTheTimeoutWithItsConsole) {
  // rdinit=/bin/sh: busybox's shell waits for console input that never comes. Nothing in
  // the guest ends it; the host's timeout must, and the console shows how far it got.
  const GuestJob job = dd_fio_job("hang", false);
  BootArgs args{.kernel = *plain_image_, .initrd = initrd_for(job), .nonce = job.nonce,
                .cmdline = "console=ttyS0 panic=-1 rdinit=/bin/sh", .timeout = 15s};
  const Boot b = boot(dir_, args);
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  EXPECT_TRUE(b.qemu.timed_out);
  EXPECT_GE(b.host_seconds, 15.0);
  EXPECT_LT(b.host_seconds, 25.0);
  // Without `quiet` the boot log is there, up to the moment the kernel ran the shell.
  // The banner is the built kernel's: uname -v ends in "abvm-<first 12 of the cache key>".
  EXPECT_NE(b.console.find("Linux version " + plain_->release + " (abvm@abvm)"), std::string::npos);
  EXPECT_NE(b.console.find("#1 SMP abvm-" + plain_->identity["cache_key"].get<std::string>().substr(0, 12)),
            std::string::npos);
  EXPECT_NE(b.console.find("Run /bin/sh as init process"), std::string::npos);
  EXPECT_FALSE(b.report.begun);
}

TEST_F(SourceKernelBoot, TheLibvirtDriverSeesAFailedBootAsACrashWithItsConsole) {
  if (::geteuid() != 0) ABVM_SKIP_WITHOUT("libvirt's embedded driver here needs root (QEMU runs as root)");
  // The same failing boot as above, through the driver abvm runs trials with: panic=-1 and
  // on_reboot=destroy end the domain, and the driver reads the panic from the console.
  LibvirtDriver driver(LibvirtDriver::embedded_uri());
  const GuestJob job = dd_fio_job("no-init-libvirt", false);
  DomainSpec spec;
  spec.name = domain_name("kboot-noinit", ::getpid());
  spec.kernel = *plain_image_;
  spec.initrd = initrd_for(job);
  spec.cmdline = "console=ttyS0 panic=-1 quiet rdinit=/nonexistent";
  spec.disks = {{.path = dir_ / "scratch.raw"}};
  { std::ofstream(spec.disks[0].path, std::ios::binary); }
  fs::resize_file(spec.disks[0].path, 16ull << 20);
  spec.console_log = dir_ / "libvirt-console.log";
  const GuestOutcome out = driver.run_guest(spec, 60s, [](std::string_view) { return false; });
  SCOPED_TRACE("console tail:\n" + console_tail(out.console));
  EXPECT_EQ(to_string(out.end), "crashed") << out.detail;
  EXPECT_LT(out.seconds, 30.0);
  EXPECT_NE(out.console.find("Kernel panic - not syncing: VFS: Unable to mount root fs"), std::string::npos);
  EXPECT_EQ(read_file(spec.console_log), out.console);

  // A truncated bzImage dies in the decompressor without a word: to the driver that is a
  // guest that ended on its own before its work was seen, with no kernel banner.
  const fs::path cut = dir_ / "bzImage-truncated";
  const std::string whole = read_file(*plain_image_);
  write_file_atomic(cut, whole.substr(0, whole.size() / 2));
  spec.name = domain_name("kboot-truncated", ::getpid());
  spec.kernel = cut;
  spec.cmdline = std::string(kGuestKernelCmdline);
  const GuestOutcome t = driver.run_guest(spec, 60s, [](std::string_view) { return false; });
  EXPECT_EQ(to_string(t.end), "powered_off") << t.detail << "\n" << t.console;
  EXPECT_LT(t.seconds, 30.0);
  EXPECT_EQ(t.console.find("Linux version"), std::string::npos) << t.console;
  EXPECT_FALSE(parse_guest_console(t.console, job.nonce).begun);
}

}  // namespace
