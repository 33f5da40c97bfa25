// Real boots: the base image built from Debian packages, the Debian cloud kernel (virtio as
// modules, so the modules archive is exercised), a per-trial job archive, QEMU under TCG, and
// the records parsed from the serial console. Label "guest" (its own binary, see CMakeLists).
//
// ABVM_BOOT_KEEP=<dir> keeps the kernel path, initrd, nonce, record prefix and console log of the
// dd+fio boot in <dir>, for harness/bench/boot_time.sh and for refreshing tests/data/guest/.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "environment_skip.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/cpio.hpp"
#include "guest/image.hpp"
#include "guest/job.hpp"
#include "kernels/kernel.hpp"
#include "guest/modules.hpp"
#include "guest/records.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

struct Boot {
  ProcessResult qemu;
  std::string console;
  GuestReport report;
  double host_seconds = 0;
};

// QEMU is run here without libvirt and nobody types into the console: the jobs' `hold` of 1 s lets
// the agent power off a second after its END record instead of waiting for a host to end it.
Boot boot(const fs::path& dir, const fs::path& kernel, const fs::path& initrd, const std::string& nonce) {
  const fs::path scratch = dir / "scratch.raw";
  { std::ofstream(scratch, std::ios::binary); }
  fs::resize_file(scratch, 64ull << 20);
  const fs::path console = dir / "console.log";
  fs::remove(console);
  const std::vector<std::string> argv = {
      "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "512", "-nographic", "-no-reboot",
      "-nodefaults", "-kernel", kernel.string(), "-initrd", initrd.string(), "-append",
      std::string(kGuestKernelCmdline), "-drive", "file=" + scratch.string() + ",if=none,id=d0,format=raw",
      "-device", "virtio-blk-pci,drive=d0,serial=abvm-scratch", "-serial", "file:" + console.string(),
      "-monitor", "none"};
  Boot b;
  const auto t0 = std::chrono::steady_clock::now();
  b.qemu = run_process(argv, {.timeout = std::chrono::minutes(5)});
  b.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  b.console = fs::exists(console) ? read_file(console) : "";
  b.report = parse_guest_console(b.console, nonce);
  return b;
}

std::string console_tail(const std::string& console) {
  return console.size() > 3000 ? console.substr(console.size() - 3000) : console;
}

class GuestBoot : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!find_program("qemu-system-x86_64")) return;
    image_ = new GuestImage(build_guest_image());
    kernel_ = new KernelArtifact(fetch_debian_kernel("linux-image-cloud-amd64"));
  }
  static void TearDownTestSuite() {
    delete image_;
    delete kernel_;
  }
  void SetUp() override {
    if (!find_program("qemu-system-x86_64")) ABVM_SKIP_WITHOUT("qemu-system-x86_64 not installed (package qemu-system-x86)");
    dir_ = fs::temp_directory_path() / ("abvm-boot-" + make_nonce().substr(0, 8));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }
  fs::path initrd_for(const GuestJob& job) {
    const fs::path initrd = dir_ / "initrd";
    const std::string modules = build_modules_archive(*kernel_->modules_dir, kGuestModules);
    write_guest_initrd(initrd, *image_, modules, build_job_archive(job));
    return initrd;
  }
  static GuestImage* image_;
  static KernelArtifact* kernel_;
  fs::path dir_;
};
GuestImage* GuestBoot::image_ = nullptr;
KernelArtifact* GuestBoot::kernel_ = nullptr;

TEST_F(GuestBoot, ImageIsSmallCachedAndHashed) {
  EXPECT_LT(image_->compressed_size, 8u << 20);
  EXPECT_EQ(image_->compressed_size, fs::file_size(image_->path));
  const std::string sum = run_checked({"sha256sum", image_->path.string()}).substr(0, 64);
  EXPECT_EQ(image_->sha256, sum);
  for (const char* p : {"init", "bin/busybox", "bin/sh", "usr/bin/dd", "usr/bin/fio", "dev/console"}) {
    EXPECT_NE(std::find(image_->contents.begin(), image_->contents.end(), p), image_->contents.end()) << p;
  }
  // Second build: a cache lookup.
  const auto t0 = std::chrono::steady_clock::now();
  const GuestImage again = build_guest_image();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(again.path, image_->path);
  EXPECT_EQ(again.sha256, image_->sha256);
  // The archive the kernel unpacks is what `contents` says.
  const std::string cpio = run_checked({"gzip", "-dc", image_->path.string()});
  EXPECT_EQ(cpio_list(cpio), image_->contents);
  std::printf("guest image: %s", describe_guest_image(*image_).c_str());
}

TEST_F(GuestBoot, DebianKernelRunsDdAndFioOnTheScratchDisk) {
  GuestJob job{.trial_id = "boot-test", .nonce = make_nonce(), .hold_seconds = 1};
  Workload dd{.name = "dd-write", .spec = DdWorkload{.block_size = "1M", .count = 16}, .repetitions = 2, .warmup = 1};
  FioWorkload fio_spec;
  fio_spec.options = {{"rw", "write"}, {"bs", "64k"}, {"size", "8M"}, {"direct", "1"},
                      {"ioengine", "psync"}, {"filename", "@scratch"}};
  Workload fio{.name = "fio-write", .spec = fio_spec, .repetitions = 1};
  job.workloads = job_workloads({dd, fio});
  const fs::path initrd = initrd_for(job);
  if (const char* keep = std::getenv("ABVM_BOOT_KEEP")) {
    fs::create_directories(keep);
    fs::copy_file(initrd, fs::path(keep) / "initrd", fs::copy_options::overwrite_existing);
    write_file_atomic(fs::path(keep) / "kernel", kernel_->image.string() + "\n");
    write_file_atomic(fs::path(keep) / "nonce", job.nonce + "\n");
    write_file_atomic(fs::path(keep) / "record_prefix", record_prefix(job.nonce) + "\n");
  }
  const Boot b = boot(dir_, kernel_->image, initrd, job.nonce);
  if (const char* keep = std::getenv("ABVM_BOOT_KEEP")) write_file_atomic(fs::path(keep) / "console.log", b.console);
  const GuestReport& r = b.report;
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  ASSERT_FALSE(b.qemu.timed_out);
  EXPECT_EQ(b.qemu.exit_code, 0) << b.qemu.err;
  EXPECT_TRUE(r.begun);
  EXPECT_TRUE(r.ended);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(r.agent_errors.empty()) << ::testing::PrintToString(r.agent_errors);
  EXPECT_EQ(r.trial_id, "boot-test");
  EXPECT_EQ(r.kernel_release, kernel_->release);
  EXPECT_NE(r.cmdline.find("panic=-1"), std::string::npos) << r.cmdline;
  ASSERT_TRUE(r.blk_features.has_value());
  // VIRTIO_F_VERSION_1 (bit 32) is negotiated by every modern virtio-pci device; QEMU's
  // iommu_platform is off by default, so ACCESS_PLATFORM (33) must be off.
  EXPECT_TRUE((*r.blk_features >> 32) & 1);
  EXPECT_FALSE(r.access_platform);
  ASSERT_EQ(r.runs.size(), 4u);  // dd: 1 warm-up + 2 measured; fio: 1

  const std::regex dd_line(R"((\d+) bytes .* copied, ([0-9.e-]+) s)");
  for (int i = 0; i < 3; ++i) {
    const GuestRun& run = r.runs[static_cast<std::size_t>(i)];
    EXPECT_EQ(run.workload, "dd-write");
    EXPECT_EQ(run.warmup, i == 0);
    EXPECT_EQ(run.index, i == 0 ? 0 : i - 1);
    EXPECT_EQ(run.exit_status, 0) << run.output;
    EXPECT_GE(run.t_end, run.t_start);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.output, m, dd_line)) << run.output;
    EXPECT_EQ(std::stoull(m[1]), 16ull << 20);
    EXPECT_GT(std::stod(m[2]), 0.0);
  }
  const GuestRun& f = r.runs[3];
  EXPECT_EQ(f.workload, "fio-write");
  EXPECT_EQ(f.exit_status, 0) << f.output;
  const auto json = nlohmann::json::parse(f.output.substr(f.output.find('{')));
  EXPECT_EQ(json["jobs"][0]["jobname"], "fio-write");
  EXPECT_EQ(json["jobs"][0]["write"]["io_bytes"].get<std::uint64_t>(), 8ull << 20);
  EXPECT_GT(json["jobs"][0]["write"]["bw"].get<double>(), 0.0);
  std::printf("guest uptime at first workload: %.2f s (host wall time %.1f s)\n", r.runs[0].t_start, b.host_seconds);
}

TEST_F(GuestBoot, BadWorkloadStillPowersOffAndReportsTheFailure) {
  GuestJob job{.trial_id = "fail-test", .nonce = make_nonce(), .hold_seconds = 1};
  // A dd that cannot succeed (no such input), then one that can: the agent goes on.
  job.workloads = job_workloads({Workload{.name = "dd-bad", .spec = DdWorkload{.count = 1, .input = "/nonexistent"}},
                                 Workload{.name = "dd-ok", .spec = DdWorkload{.block_size = "64K", .count = 4}}});
  const Boot b = boot(dir_, kernel_->image, initrd_for(job), job.nonce);
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  ASSERT_FALSE(b.qemu.timed_out);
  EXPECT_EQ(b.qemu.exit_code, 0);
  EXPECT_TRUE(b.report.ended);
  ASSERT_EQ(b.report.runs.size(), 2u);
  EXPECT_NE(b.report.runs[0].exit_status, 0);
  EXPECT_NE(b.report.runs[0].output.find("/nonexistent"), std::string::npos) << b.report.runs[0].output;
  EXPECT_EQ(b.report.runs[1].exit_status, 0);
}

TEST_F(GuestBoot, MissingScratchDiskIsReportedNotWrittenElsewhere) {
  GuestJob job{.trial_id = "serial-test", .nonce = make_nonce(), .hold_seconds = 1, .scratch_serial = "no-such-disk"};
  job.workloads = job_workloads({Workload{.name = "dd", .spec = DdWorkload{.count = 1}}});
  const Boot b = boot(dir_, kernel_->image, initrd_for(job), job.nonce);
  SCOPED_TRACE("console tail:\n" + console_tail(b.console));
  EXPECT_EQ(b.qemu.exit_code, 0);
  EXPECT_TRUE(b.report.ended);
  EXPECT_TRUE(b.report.runs.empty());
  ASSERT_EQ(b.report.agent_errors.size(), 1u);
  EXPECT_NE(b.report.agent_errors[0].find("no-such-disk"), std::string::npos);
}

}  // namespace
