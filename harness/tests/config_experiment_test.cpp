#include "config/experiment.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "config/keys.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "environment_skip.hpp"

namespace abvm {
namespace {

namespace fs = std::filesystem;

// Lines 1-6; tests append from line 7 on.
const std::string kBase =
    "name = \"demo\"\n"
    "[sides.B]\n"
    "device.iommu_platform = true\n"
    "[[workload]]\n"
    "name = \"dd-write\"\n"
    "type = \"dd\"\n";

Experiment load(const std::string& text, const LoadOptions& options = {}, const fs::path& base = ".") {
  return load_experiment_text(text, "demo.toml", base, options);
}

std::string error_of(const std::string& text, const LoadOptions& options = {}, const fs::path& base = ".") {
  try {
    load(text, options, base);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigExperiment, MinimalFileGetsEveryDefault) {
  const Experiment e = load(kBase);
  EXPECT_EQ(e.name, "demo");
  EXPECT_EQ(e.description, "");
  EXPECT_EQ(e.guest.image, "default");
  EXPECT_FALSE(e.guest.accelerator.has_value());  // "auto"
  EXPECT_TRUE(e.disk.path.empty());
  EXPECT_EQ(e.disk.size_bytes, 1ULL << 30);
  EXPECT_FALSE(e.disk.preallocate);
  EXPECT_FALSE(e.disk.overwrite);
  EXPECT_EQ(e.a.label, "A");
  EXPECT_EQ(e.b.label, "B");
  for (const SideSpec* s : {&e.a, &e.b}) {
    EXPECT_EQ(s->kernel, "debian-cloud");
    EXPECT_EQ(s->cmdline, "");
    EXPECT_EQ(s->machine.vcpus, 1);
    EXPECT_EQ(s->machine.memory_mib, 512);
    EXPECT_TRUE(s->machine.vcpu_pins.empty());
    EXPECT_FALSE(s->device.queues.has_value());
    EXPECT_FALSE(s->device.queue_size.has_value());
    EXPECT_EQ(s->device.cache, "none");
    EXPECT_EQ(s->device.io, "native");
    EXPECT_FALSE(s->device.iothread);
  }
  EXPECT_FALSE(e.a.device.iommu_platform);
  EXPECT_TRUE(e.b.device.iommu_platform);
  ASSERT_EQ(e.workloads.size(), 1u);
  const Workload& w = e.workloads[0];
  EXPECT_EQ(w.name, "dd-write");
  EXPECT_EQ(w.repetitions, 1);
  EXPECT_EQ(w.warmup, 0);
  EXPECT_TRUE(w.pre_run.sync && w.pre_run.drop_caches && w.pre_run.scheduler_none);
  const auto& dd = std::get<DdWorkload>(w.spec);
  EXPECT_EQ(dd.block_size, "1M");
  EXPECT_EQ(dd.count, 64u);
  EXPECT_EQ(dd.input, "/dev/zero");
  EXPECT_EQ(dd.output, "@scratch");
  EXPECT_TRUE(dd.iflag.empty());
  EXPECT_EQ(dd.oflag, std::vector<std::string>{"direct"});
  const ScheduleSettings& s = e.schedule;
  EXPECT_EQ(s.boots_per_side, 10);
  EXPECT_EQ(s.order, ScheduleOrder::interleaved);
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.boot_timeout, std::chrono::seconds(60));
  EXPECT_EQ(s.run_timeout, std::chrono::seconds(120));
  EXPECT_FALSE(s.allow_identical_sides);
  EXPECT_EQ(s.infra_retries, 1);
  EXPECT_EQ(s.console_limit, 64u << 20);
  EXPECT_FALSE(s.sequential.enabled);
  EXPECT_EQ(s.sequential.max_boots_per_side, 40);
  EXPECT_EQ(s.sequential.max_wall_time, std::chrono::hours(2));
  EXPECT_EQ(s.sequential.look_every, 5);
  EXPECT_EQ(s.sequential.correction, LookCorrection::obrien_fleming);
  EXPECT_DOUBLE_EQ(e.analysis.margin, 0.05);
  EXPECT_DOUBLE_EQ(e.analysis.confidence, 0.95);
  EXPECT_EQ(e.analysis.seed, 1u);
  EXPECT_TRUE(e.analysis.metrics.empty());
  EXPECT_EQ(e.source_text, kBase);
}

TEST(ConfigExperiment, FioDefaultsAndOptions) {
  const Experiment e = load(kBase +
                            "[[workload]]\nname = \"fio-w\"\ntype = \"fio\"\nbs = \"4K\"\nrw = \"randwrite\"\n"
                            "ioengine = \"libaio\"\niodepth = 8\nruntime = \"30s\"\noptions = { rate_iops = 100, verify = \"crc32\" }\n");
  const auto& fio = std::get<FioWorkload>(e.workloads[1].spec);
  EXPECT_FALSE(fio.job_file.has_value());
  EXPECT_EQ(fio.output_format, "json");
  const std::map<std::string, std::string> expected = {
      {"rw", "randwrite"}, {"bs", "4K"}, {"size", "64M"}, {"direct", "1"}, {"ioengine", "libaio"},
      {"filename", "@scratch"}, {"iodepth", "8"}, {"runtime", "30s"}, {"time_based", "1"},
      {"rate_iops", "100"}, {"verify", "crc32"}};
  EXPECT_EQ(fio.options, expected);
}

TEST(ConfigExperiment, FioJobFileIsReadRelativeToTheConfig) {
  const fs::path dir = fs::path(::testing::TempDir()) / "abvm_config_jobfile";
  fs::create_directories(dir);
  std::ofstream(dir / "seq.fio") << "[seq]\nrw=write\n";
  const Experiment e = load(kBase + "[[workload]]\nname = \"f\"\ntype = \"fio\"\njob_file = \"seq.fio\"\n", {}, dir);
  EXPECT_EQ(std::get<FioWorkload>(e.workloads[1].spec).job_file, "[seq]\nrw=write\n");
  EXPECT_EQ(error_of(kBase + "[[workload]]\nname = \"f\"\ntype = \"fio\"\njob_file = \"seq.fio\"\nrw = \"read\"\n",
                     {}, dir),
            "demo.toml:11: key 'workload[1].rw' conflicts with job_file: set it in the job file \"seq.fio\"");
}

TEST(ConfigExperiment, SidesInheritAndOverride) {
  const Experiment e = load(
      "name = \"x\"\n[guest]\nkernel = \"k1\"\ncmdline = \"quiet\"\nvcpus = 2\n[device]\ncache = \"directsync\"\n"
      "[sides.A]\nlabel = \"base\"\n[sides.B]\nkernel = \"k2\"\ncmdline_append = \"swiotlb=force\"\n"
      "guest.memory_mib = 1024\ndevice.queues = 4\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n");
  EXPECT_EQ(e.a.label, "base");
  EXPECT_EQ(e.a.kernel, "k1");
  EXPECT_EQ(e.b.kernel, "k2");
  EXPECT_EQ(e.a.cmdline, "quiet");
  EXPECT_EQ(e.b.cmdline, "quiet swiotlb=force");
  EXPECT_EQ(e.b.machine.vcpus, 2);
  EXPECT_EQ(e.b.machine.memory_mib, 1024);
  EXPECT_EQ(e.a.machine.memory_mib, 512);
  EXPECT_EQ(e.b.device.cache, "directsync");
  EXPECT_EQ(e.b.device.queues, 4);
  EXPECT_FALSE(e.a.device.queues.has_value());
}

TEST(ConfigExperiment, ErrorsNameFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[sides.A]\nlable = \"x\"\n", "demo.toml:8: unknown key 'sides.A.lable' (did you mean 'label'?)"},
      // After [[workload]] a bare key belongs to the workload (TOML), so the hint points elsewhere.
      {"vcpus = 2\n", "demo.toml:7: unknown key 'workload[0].vcpus' (did you mean 'guest.vcpus'?)"},
      {"[foo]\nbar = 1\n", "demo.toml:7: unknown key 'foo': remove it, or check its spelling and its [section]"},
      {"[sides.C]\nlabel = \"c\"\n", "demo.toml:7: unknown side 'sides.C': the sides are named A and B"},
      {"[guest]\nvcpus = \"2\"\n", "demo.toml:8: key 'guest.vcpus' must be an integer, not a string"},
      {"[guest]\nvcpus = 0\n", "demo.toml:8: key 'guest.vcpus' = 0 is out of range: use 1..255"},
      {"[analysis]\nmargin = 2\n", "demo.toml:8: key 'analysis.margin' = 2 is out of range: use 0 < x < 1"},
      {"[disk]\nsize = \"1Q\"\n",
       "demo.toml:8: key 'disk.size': invalid size '1Q': write a whole number of bytes with an optional K, M, G "
       "or T suffix (binary: 1K = 1024), e.g. \"512K\", \"8M\", \"1G\""},
      {"[disk]\nsize = \"1K\"\n", "demo.toml:8: key 'disk.size' = \"1K\" is out of range: use 1M..1T"},
      {"[schedule]\nmin_overlap = 1.5\n", "demo.toml:8: key 'schedule.min_overlap' = 1.5 is out of range: use 0..1"},
      {"[schedule]\nmin_overlap = \"high\"\n", "demo.toml:8: key 'schedule.min_overlap' must be a number, not a string"},
      {"[schedule]\nmax_start_skew = 50\n",
       "demo.toml:8: key 'schedule.max_start_skew' must be a duration such as \"60s\", not an integer"},
      {"[schedule]\nmax_start_skew = \"2h\"\n",
       "demo.toml:8: key 'schedule.max_start_skew' = \"2h\" is out of range: use 0s..1h"},
      {"[schedule]\nvcpu_swap = \"2m\"\n",
       "demo.toml:8: key 'schedule.vcpu_swap' = \"2m\" is out of range: use 0s..1m"},
      {"[schedule]\nconsole_limit = \"1K\"\n",
       "demo.toml:8: key 'schedule.console_limit' = \"1K\" is out of range: use 64K..1G"},
      {"[device]\ncache = \"fast\"\n",
       "demo.toml:8: key 'device.cache' = \"fast\" is not one of none, writethrough, writeback, directsync, unsafe"},
      {"[device]\ncache = \"writeback\"\n",
       "demo.toml:8: side A: device.io = \"native\" needs device.cache = \"none\" or \"directsync\" (QEMU's native "
       "AIO opens the disk with O_DIRECT): change one of them"},
      {"[device]\nqueue_size = 100\n",
       "demo.toml:8: key 'device.queue_size' = 100 is not a power of two: use 4, 8, ... 1024"},
      {"[schedule]\nboot_timeout = \"60\"\n",
       "demo.toml:8: key 'schedule.boot_timeout': invalid duration '60': write a whole number with a unit ms, s, "
       "m or h, e.g. \"500ms\", \"60s\", \"2m\", \"1h\""},
      {"[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\n",
       "demo.toml:8: workload name \"dd-write\" is used twice (first at demo.toml:5): give each workload its own "
       "name"},
      {"[[workload]]\nname = \"w2\"\ntype = \"dd\"\nrepetitions = 0\n",
       "demo.toml:10: key 'workload[1].repetitions' = 0 is out of range: use 1..1000"},
      {"[[workload]]\nname = \"w2\"\ntype = \"fio\"\ncount = 3\n",
       "demo.toml:10: key 'workload[1].count' is for dd workloads, but workload \"w2\" is fio: remove it"},
      {"[[workload]]\ntype = \"dd\"\n",
       "demo.toml:7: workload[1] has no name: add name = \"...\" (unique, [A-Za-z0-9_-]+)"},
      {"[[workload]]\nname = \"a.b\"\ntype = \"dd\"\n",
       "demo.toml:8: key 'workload[1].name' = \"a.b\" may only contain letters, digits, '_' and '-' (metrics are "
       "named <workload>.<metric>)"},
      {"[[workload]]\nname = \"w\"\ntype = \"dd\"\noflag = [\"direct\", 1]\n",
       "demo.toml:10: key 'workload[1].oflag' must be a list of strings: element 1 is an integer, not a string"},
      {"[schedule.sequential]\nenabled = true\nmax_boots_per_side = 5\n",
       "demo.toml:9: schedule.sequential.max_boots_per_side = 5 is less than schedule.boots_per_side = 10: the "
       "budget must allow the first look; raise it or lower boots_per_side"},
      {"[analysis]\nmetrics = [{ name = \"dd-wirte.bandwidth\" }]\n",
       "demo.toml:8: key 'analysis.metrics[0].name' = \"dd-wirte.bandwidth\" does not name a metric of a "
       "workload: use \"<workload>.<metric>\" with one of the workloads dd-write"},
      {"[analysis]\nmetrics = [{ name = \"dd-write.bandwidth\", better = \"more\" }]\n",
       "demo.toml:8: key 'analysis.metrics[0].better' = \"more\" is not one of higher, lower"},
      {"[guest]\nvcpus = 2\nvcpu_pins = [0]\n",
       "demo.toml:9: key 'guest.vcpu_pins' has 1 CPUs for 2 vCPUs on side A: give one host CPU per vCPU"},
      {"[sides.A]\nlabel = \"B\"\n",
       "demo.toml:8: sides A and B have the same label \"B\": give them different labels (reports name the "
       "sides by them)"},
      {"x = [\n", "demo.toml:7: invalid TOML: Error while parsing array: encountered end-of-file"},
  };
  for (const auto& [tail, expected] : cases) {
    EXPECT_EQ(error_of(kBase + tail), expected) << tail;
  }
}

// dd's flags default by what it reads and writes (issue 20): O_DIRECT on the scratch disk's end only,
// so a read to /dev/null is not given oflag=direct (which fails in every run); flags as written are
// kept, and an end that never touches the scratch disk keeps none.
TEST(ConfigExperiment, DdFlagsDefaultToDirectOnTheScratchDisksEndOnly) {
  const auto dd_of = [](const std::string& keys) {
    const Experiment e = load(kBase + "[[workload]]\nname = \"w\"\ntype = \"dd\"\n" + keys);
    return std::get<DdWorkload>(e.workloads.at(1).spec);
  };
  const DdWorkload write = dd_of("");
  EXPECT_EQ(write.iflag, std::vector<std::string>{});
  EXPECT_EQ(write.oflag, std::vector<std::string>{"direct"});
  const DdWorkload read = dd_of("if = \"@scratch\"\nof = \"/dev/null\"\n");
  EXPECT_EQ(read.iflag, std::vector<std::string>{"direct"});
  EXPECT_EQ(read.oflag, std::vector<std::string>{});
  const DdWorkload as_written = dd_of("if = \"@scratch\"\nof = \"/dev/null\"\niflag = [\"direct\"]\n");
  EXPECT_EQ(as_written.iflag, std::vector<std::string>{"direct"});
  EXPECT_EQ(as_written.oflag, std::vector<std::string>{});
  const DdWorkload buffered = dd_of("if = \"@scratch\"\nof = \"/dev/null\"\niflag = []\n");
  EXPECT_EQ(buffered.iflag, std::vector<std::string>{});
  const DdWorkload copy = dd_of("if = \"@scratch\"\noflag = [\"dsync\"]\n");
  EXPECT_EQ(copy.iflag, std::vector<std::string>{"direct"});
  EXPECT_EQ(copy.oflag, std::vector<std::string>{"dsync"});
}

// Workloads that cannot work, or cannot do what they say, are refused at the line to change.
TEST(ConfigExperiment, WorkloadsThatCannotWorkAreRefusedSayingWhatToChange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[[workload]]\nname = \"rd\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/dev/null\"\n"
       "oflag = [\"direct\"]\n",
       "demo.toml:12: key 'workload[1].oflag' = [\"direct\"] asks for O_DIRECT on of = \"/dev/null\", which cannot be "
       "opened with O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" from it"},
      {"[[workload]]\nname = \"w\"\ntype = \"dd\"\niflag = [\"fullblock\", \"direct\"]\n",
       "demo.toml:10: key 'workload[1].iflag' = [\"fullblock\", \"direct\"] asks for O_DIRECT on if = \"/dev/zero\", "
       "which cannot be opened with O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" from it"},
      {"[[workload]]\nname = \"w\"\ntype = \"dd\"\nif = \"@scratch\"\nof = \"/dev/urandom\"\n"
       "oflag = [\"direct\"]\n",
       "demo.toml:12: key 'workload[1].oflag' = [\"direct\"] asks for O_DIRECT on of = \"/dev/urandom\", which cannot "
       "be opened with O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" from it"},
      {"[[workload]]\nname = \"f\"\ntype = \"fio\"\nfilename = \"/dev/null\"\n",
       "demo.toml:10: key 'workload[1].filename' = \"/dev/null\" with direct = true asks for O_DIRECT on a device that "
       "cannot be opened with it (fio fails in every run): set direct = false, or filename = \"@scratch\" (the "
       "default)"},
      {"[[workload]]\nname = \"f\"\ntype = \"fio\"\nrw = \"randread\"\niodepth = 32\n",
       "demo.toml:11: key 'workload[1].iodepth' = 32 has no effect with ioengine = \"psync\": a synchronous engine "
       "keeps one request in flight whatever iodepth says; set ioengine = \"libaio\" or \"io_uring\" for a queue "
       "depth, or remove iodepth"},
  };
  for (const auto& [tail, expected] : cases) EXPECT_EQ(error_of(kBase + tail), expected) << tail;
  // What works: a read to /dev/null, O_DIRECT on a file of the guest's own, a dd that touches no disk
  // (a CPU and memory reference, harness/bench/calibrate_designs.py --reference), fio on /dev/null
  // without O_DIRECT, a queue depth of 1 with a synchronous engine, an asynchronous engine at any depth.
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"rd\"\ntype = \"dd\"\nif = \"@scratch\"\nof = "
                               "\"/dev/null\"\niflag = [\"direct\"]\n"));
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"cp\"\ntype = \"dd\"\nif = \"@scratch\"\nof = "
                               "\"/tmp/copy\"\noflag = [\"direct\"]\n"));
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"ref\"\ntype = \"dd\"\nof = \"/dev/null\"\n"));
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"f\"\ntype = \"fio\"\nfilename = \"/dev/null\"\n"
                               "direct = false\n"));
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"f\"\ntype = \"fio\"\niodepth = 1\n"));
  EXPECT_NO_THROW(load(kBase + "[[workload]]\nname = \"f\"\ntype = \"fio\"\nioengine = \"io_uring\"\n"
                               "iodepth = 32\n"));
}

// [device.iotune] and a side's device.iotune: byte rates take abvm's sizes, the rest integers;
// a side inherits each key on its own.
TEST(ConfigExperiment, IotuneKeysReachEachSidesDevice) {
  const Experiment e = load(
      "name = \"x\"\n[device.iotune]\ntotal_bytes_sec = \"10000K\"\ntotal_iops_sec = 400\n"
      "size_iops_sec = \"4K\"\n[sides.B.device.iotune]\ntotal_bytes_sec = 9216000\n"
      "total_bytes_sec_max = \"16M\"\ntotal_bytes_sec_max_length = 2\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n");
  EXPECT_EQ(e.a.device.iotune.total_bytes_sec, 10240000u);
  EXPECT_EQ(e.a.device.iotune.total_iops_sec, 400u);
  EXPECT_EQ(e.a.device.iotune.size_iops_sec, 4096u);
  EXPECT_FALSE(e.a.device.iotune.total_bytes_sec_max.has_value());
  EXPECT_EQ(e.b.device.iotune.total_bytes_sec, 9216000u);
  EXPECT_EQ(e.b.device.iotune.total_iops_sec, 400u);  // inherited
  EXPECT_EQ(e.b.device.iotune.total_bytes_sec_max, 16u << 20);
  EXPECT_EQ(e.b.device.iotune.total_bytes_sec_max_length, 2u);
  EXPECT_FALSE(e.b.device.iotune.read_bytes_sec.has_value());
  const std::string shown = describe_effective_config(e);
  const auto line_of = [&](const std::string& key) {
    const auto start = shown.find("\n" + key + " ");
    return start == std::string::npos ? "" : shown.substr(start + 1, shown.find('\n', start + 1) - start - 1);
  };
  EXPECT_NE(line_of("sides.B.device.iotune.total_bytes_sec").find("\"9000K\"  "), std::string::npos) << shown;
  EXPECT_NE(line_of("sides.B.device.iotune.total_bytes_sec").find("demo.toml:7"), std::string::npos) << shown;
  EXPECT_NE(line_of("sides.A.device.iotune.total_iops_sec").find("side A inherits device.iotune.total_iops_sec "
                                                                  "(demo.toml:4)"),
            std::string::npos)
      << shown;
  EXPECT_EQ(load(kBase).a.device.iotune, IotuneOptions{});
}

// What libvirt's schema or QEMU's throttle_is_valid refuse, at the line of the key to change.
TEST(ConfigExperiment, IotuneCombinationsLibvirtOrQemuRefuseAreErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[device.iotune]\ntotal_iops_sec = 0\n",
       "demo.toml:8: key 'device.iotune.total_iops_sec' = 0 is out of range: use 1..1000000000000000"},
      {"[device.iotune]\nwrite_bytes_sec = \"2T\"\n",
       "demo.toml:8: key 'device.iotune.write_bytes_sec' = \"2T\" is out of range: use 1..1T"},
      {"[device.iotune]\ntotal_bytes_sec = \"16M\"\nread_bytes_sec = \"8M\"\n",
       "demo.toml:9: key 'device.iotune.read_bytes_sec' cannot be set with device.iotune.total_bytes_sec: libvirt "
       "takes a total limit or read and write limits, not both; remove one of them"},
      {"[device.iotune]\nwrite_iops_sec_max = 100\n",
       "demo.toml:8: key 'device.iotune.write_iops_sec_max' needs device.iotune.write_iops_sec: a burst rate "
       "belongs to a rate limit; set write_iops_sec, or remove write_iops_sec_max"},
      {"[device.iotune]\ntotal_bytes_sec = \"16M\"\ntotal_bytes_sec_max = \"8M\"\n",
       "demo.toml:9: key 'device.iotune.total_bytes_sec_max' = \"8M\" is lower than device.iotune.total_bytes_sec "
       "= \"16M\": QEMU refuses a burst rate below its rate; raise it, or remove it (unset, QEMU lets a tenth of a "
       "second at the rate through at once)"},
      {"[device.iotune]\ntotal_iops_sec = 100\ntotal_iops_sec_max_length = 10\n",
       "demo.toml:9: key 'device.iotune.total_iops_sec_max_length' needs device.iotune.total_iops_sec_max: it is "
       "how long that burst rate may last; set total_iops_sec_max, or remove total_iops_sec_max_length"},
      {"[device.iotune]\nread_bytes_sec = \"1T\"\nread_bytes_sec_max = \"1T\"\nread_bytes_sec_max_length = 910\n",
       "demo.toml:10: key 'device.iotune.read_bytes_sec_max_length' = 910 seconds at "
       "device.iotune.read_bytes_sec_max = \"1T\" is more than QEMU's limit of 1000000000000000 bytes per burst: "
       "shorten the burst or lower its rate"},
      {"[device.iotune]\ntotal_bytes_sec = \"16M\"\nsize_iops_sec = \"4K\"\n",
       "demo.toml:9: key 'device.iotune.size_iops_sec' needs an iops limit (total_iops_sec, read_iops_sec or "
       "write_iops_sec): it says how many bytes count as one request; set one, or remove size_iops_sec"},
      // A side's own key clashing with a shared one: the side's line, and the message says which.
      {"[device.iotune]\ntotal_bytes_sec = \"16M\"\n[sides.A.device.iotune]\nwrite_bytes_sec = \"8M\"\n",
       "demo.toml:10: key 'sides.A.device.iotune.write_bytes_sec' cannot be set with device.iotune.total_bytes_sec "
       "(which side A inherits): libvirt takes a total limit or read and write limits, not both; remove one of "
       "them"},
      {"[device.iotune]\ntotal_bytes_sec = \"8M\"\ntotal_bytes_sec_max = \"16M\"\n[sides.A.device.iotune]\n"
       "total_bytes_sec = \"32M\"\n",
       "demo.toml:11: key 'device.iotune.total_bytes_sec_max' (which side A inherits) = \"16M\" is lower than "
       "sides.A.device.iotune.total_bytes_sec = \"32M\": QEMU refuses a burst rate below its rate; raise it, or "
       "remove it (unset, QEMU lets a tenth of a second at the rate through at once)"},
      {"[device.iotune]\ntotal_byte_sec = 1\n",
       "demo.toml:8: unknown key 'device.iotune.total_byte_sec' (did you mean 'total_bytes_sec'?)"},
      {"[device.iotune]\ntotal_iops_sec = \"400\"\n",
       "demo.toml:8: key 'device.iotune.total_iops_sec' must be an integer, not a string"},
  };
  for (const auto& [tail, expected] : cases) {
    EXPECT_EQ(error_of(kBase + tail), expected) << tail;
  }
  // The largest burst QEMU takes: 1e15 bytes.
  EXPECT_EQ(error_of(kBase + "[device.iotune]\nread_bytes_sec = 1000000000\nread_bytes_sec_max = 1000000000\n"
                             "read_bytes_sec_max_length = 1000000\n"),
            "(no error)");
}

TEST(ConfigExperiment, MissingNameAndWorkloads) {
  EXPECT_EQ(error_of("[[workload]]\nname = \"w\"\ntype = \"dd\"\n"),
            "demo.toml: missing key 'name': add name = \"...\" ([A-Za-z0-9._-]+; results go to "
            "results/<name>-<timestamp>/)");
  EXPECT_EQ(error_of("name = \"x\"\n[sides.B]\nkernel = \"k\"\n"),
            "demo.toml: no [[workload]]: add at least one, e.g. [[workload]] name = \"dd-write\" type = \"dd\"");
  EXPECT_EQ(error_of("name = \"a b\"\n"),
            "demo.toml:1: key 'name' = \"a b\" may only contain letters, digits, '.', '_' and '-' (it names the "
            "results directory)");
}

TEST(ConfigExperiment, IdenticalSidesNeedTheExplicitFlag) {
  const std::string same = "name = \"aa\"\n[sides.B]\nlabel = \"again\"\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n";
  EXPECT_EQ(error_of(same),
            "demo.toml:2: sides A and B are identical (same kernel, command line, device and guest options): set "
            "what B changes in [sides.B], or set schedule.allow_identical_sides = true for an A/A run");
  EXPECT_EQ(error_of("name = \"aa\"\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n"),
            "demo.toml: sides A and B are identical (same kernel, command line, device and guest options): set "
            "what B changes in [sides.B], or set schedule.allow_identical_sides = true for an A/A run");
  const Experiment e = load(same + "[schedule]\nallow_identical_sides = true\n");
  EXPECT_TRUE(e.schedule.allow_identical_sides);
  EXPECT_EQ(e.a.kernel, e.b.kernel);
}

TEST(ConfigExperiment, KernelHookIsAskedForEachSide) {
  LoadOptions options;
  std::vector<std::string> asked;
  options.kernel_exists = [&](const std::string& k) {
    asked.push_back(k);
    return k != "nope";
  };
  EXPECT_EQ(error_of(kBase + "[sides.A]\nkernel = \"nope\"\n", options),
            "demo.toml:8: key 'sides.A.kernel' = \"nope\": no such kernel recipe or file: see kernels/ for the "
            "recipes, or give a path to a kernel image");
  asked.clear();
  load(kBase, options);
  EXPECT_EQ(asked, (std::vector<std::string>{"debian-cloud", "debian-cloud"}));
}

class DiskSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest runs the tests of this fixture in parallel processes.
    dir_ = fs::path(::testing::TempDir()) /
           ("abvm_config_disk_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string disk(const std::string& path, bool overwrite = false) {
    return kBase + "[disk]\npath = \"" + path + "\"\n" + (overwrite ? "overwrite = true\n" : "");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(DiskSafety, NewOrEmptyFileIsAcceptedAndResolvedAgainstTheConfigDirectory) {
  EXPECT_EQ(load(disk("new.img"), {}, dir_).disk.path, dir_ / "new.img");
  std::ofstream(dir_ / "empty.img").close();
  EXPECT_EQ(load(disk("empty.img"), {}, dir_).disk.path, dir_ / "empty.img");
}

TEST_F(DiskSafety, NonEmptyFileNeedsOverwrite) {
  std::ofstream(dir_ / "data.img") << "precious";
  EXPECT_EQ(error_of(disk("data.img"), {}, dir_),
            "demo.toml:8: key 'disk.path' = \"data.img\" (" + (dir_ / "data.img").string() +
                ") is an existing non-empty file (8 bytes): the experiment would destroy its contents; set "
                "disk.overwrite = true if that is intended, or name a new file");
  EXPECT_EQ(load(disk("data.img", true), {}, dir_).disk.path, dir_ / "data.img");
  // Loading never touches the file.
  EXPECT_EQ(fs::file_size(dir_ / "data.img"), 8u);
}

TEST_F(DiskSafety, DirectoryAndMissingParentAreRefused) {
  fs::create_directories(dir_ / "sub");
  EXPECT_EQ(error_of(disk("sub"), {}, dir_),
            "demo.toml:8: key 'disk.path' = \"sub\" (" + (dir_ / "sub").string() +
                ") is a directory: name an image file in it");
  EXPECT_EQ(error_of(disk("nowhere/x.img"), {}, dir_),
            "demo.toml:8: key 'disk.path' = \"nowhere/x.img\" (" + (dir_ / "nowhere/x.img").string() +
                "): its directory does not exist: create it first");
}

fs::path any_block_device() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    if (entry.is_block_file(ec)) return entry.path();
  }
  return {};
}

TEST_F(DiskSafety, BlockDevicesAreRefusedAlsoThroughSymlinks) {
  const fs::path device = any_block_device();
  if (device.empty()) ABVM_SKIP_WITHOUT("no block device in /dev to test with");
  EXPECT_EQ(error_of(disk(device.string()), {}, dir_),
            "demo.toml:8: key 'disk.path' = \"" + device.string() +
                "\" is a block device: abvm writes only to image files; name a file, or leave disk.path empty for "
                "a scratch image in the results directory");
  fs::create_symlink(device, dir_ / "disk.img");
  EXPECT_EQ(error_of(disk("disk.img", true), {}, dir_),
            "demo.toml:8: key 'disk.path' = \"disk.img\" (" + (dir_ / "disk.img").string() +
                ") is a block device (through a symlink to " + fs::canonical(device).string() +
                "): abvm writes only to image files; name a file, or leave disk.path empty for a scratch image in "
                "the results directory");
}

TEST(ConfigExperiment, ShippedConfigsLoad) {
  const fs::path configs = fs::path(ABVM_SOURCE_DIR) / "configs";
  for (const char* name : {"demo.toml", "virtio-dma-api.toml", "swiotlb-control.toml", "aa-control.toml",
                           "ruler-10.toml", "ruler-3.toml", "ruler-3-read-faster.toml"}) {
    SCOPED_TRACE(name);
    const Experiment e = load_experiment(configs / name);
    EXPECT_FALSE(e.workloads.empty());
    EXPECT_NE(e.a.label, e.b.label);
  }
  const Experiment demo = load_experiment(configs / "demo.toml");
  EXPECT_FALSE(demo.a.device.iommu_platform);
  EXPECT_TRUE(demo.b.device.iommu_platform);
  EXPECT_EQ(demo.a.kernel, "debian-cloud");
  const auto& dd = std::get<DdWorkload>(demo.workloads.at(0).spec);
  EXPECT_EQ(dd.block_size, "8M");
  EXPECT_EQ(dd.oflag, std::vector<std::string>{"direct"});
  EXPECT_EQ(demo.workloads.at(0).repetitions, 5);
  // The whole question (issue 20): a large-block sequential fio write and a 4k random write at queue
  // depth 16 or more, each workload with one judged metric.
  ASSERT_EQ(demo.workloads.size(), 3u);
  const auto& seq = std::get<FioWorkload>(demo.workloads.at(1).spec).options;
  EXPECT_EQ(seq.at("rw"), "write");
  EXPECT_EQ(seq.at("bs"), "1M");
  const auto& rand = std::get<FioWorkload>(demo.workloads.at(2).spec).options;
  EXPECT_EQ(rand.at("rw"), "randwrite");
  EXPECT_EQ(rand.at("bs"), "4K");
  EXPECT_EQ(rand.at("ioengine"), "libaio");
  EXPECT_GE(std::stoi(rand.at("iodepth")), 16);
  ASSERT_EQ(demo.analysis.metrics.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(demo.analysis.metrics[i].name.starts_with(demo.workloads[i].name + ".")) << demo.analysis.metrics[i].name;
  }
  EXPECT_EQ(demo.schedule.cpu_sets, (std::vector<std::string>{"0-1"}));
  // The shipped experiments run the co-scheduled design (README: Designs, Validated on).
  for (const char* name : {"demo.toml", "virtio-dma-api.toml", "swiotlb-control.toml", "aa-control.toml"}) {
    EXPECT_EQ(load_experiment(configs / name).schedule.design, Design::co_scheduled) << name;
  }
  const Experiment swiotlb = load_experiment(configs / "swiotlb-control.toml");
  EXPECT_TRUE(swiotlb.a.device.iommu_platform && swiotlb.b.device.iommu_platform);
  EXPECT_EQ(swiotlb.a.cmdline, "");
  EXPECT_EQ(swiotlb.b.cmdline, "swiotlb=force");
  const Experiment dma = load_experiment(configs / "virtio-dma-api.toml");
  EXPECT_EQ(dma.a.kernel, "linux-6.1-virtio");
  EXPECT_EQ(dma.b.kernel, "linux-6.1-virtio-dma-api");
  const Experiment aa = load_experiment(configs / "aa-control.toml");
  EXPECT_TRUE(aa.schedule.allow_identical_sides);
  SideSpec a = aa.a;
  a.label = aa.b.label;
  EXPECT_EQ(a, aa.b);
}

// The rulers: one side's caps are exactly 0.90 (0.97) of the other's, and each workload's
// "# expected: <metric> <ratio> [<low>, <high>]" line is QEMU's burst model for the workload as
// configured (config/device.hpp) at a tool overhead L between 0 and 60 ms, its range (where given:
// the short runs, whose ratio moves with L) inside that and around the ratio: a change of the
// workloads or the caps that forgets the expectation fails here.
TEST(ConfigExperiment, RulersStateTheBurstModelsRatios) {
  const fs::path configs = fs::path(ABVM_SOURCE_DIR) / "configs";
  struct Ruler {
    const char* file;
    double f;          // the slower side's caps over the faster side's
    bool b_slower;     // else A is the slower side (B faster)
    std::size_t metrics;
  };
  for (const Ruler& ruler : {Ruler{"ruler-10.toml", 0.90, true, 3}, Ruler{"ruler-3.toml", 0.97, true, 3},
                             Ruler{"ruler-3-read-faster.toml", 0.97, false, 2}}) {
    SCOPED_TRACE(ruler.file);
    const Experiment e = load_experiment(configs / ruler.file);
    EXPECT_EQ(e.schedule.design, Design::co_scheduled);
    EXPECT_EQ(e.schedule.boots_per_side, 10);
    EXPECT_EQ(e.a.kernel, "debian-cloud");
    EXPECT_EQ(e.b.kernel, "debian-cloud");
    EXPECT_TRUE(e.disk.preallocate);
    const IotuneOptions& fast = ruler.b_slower ? e.a.device.iotune : e.b.device.iotune;
    const IotuneOptions& slow = ruler.b_slower ? e.b.device.iotune : e.a.device.iotune;
    ASSERT_TRUE(fast.total_bytes_sec && slow.total_bytes_sec);
    EXPECT_EQ(static_cast<double>(*slow.total_bytes_sec), std::round(*fast.total_bytes_sec * ruler.f));
    EXPECT_EQ(fast.total_iops_sec.has_value(), slow.total_iops_sec.has_value());
    if (fast.total_iops_sec) {
      EXPECT_EQ(static_cast<double>(*slow.total_iops_sec), std::round(*fast.total_iops_sec * ruler.f));
    }
    std::map<std::string, std::array<double, 3>> expected;  // ratio, low, high (low = high = ratio without a range)
    const std::regex line(R"(\n# expected: (\S+) ([0-9.]+)(?: \[([0-9.]+), ([0-9.]+)\])?\n)");
    for (auto it = std::sregex_iterator(e.source_text.begin(), e.source_text.end(), line); it != std::sregex_iterator();
         ++it) {
      const double r = std::stod((*it)[2]);
      expected[(*it)[1]] = {r, (*it)[3].matched ? std::stod((*it)[3]) : r, (*it)[4].matched ? std::stod((*it)[4]) : r};
    }
    ASSERT_EQ(expected.size(), ruler.metrics);
    ASSERT_EQ(e.workloads.size(), ruler.metrics);
    // T = (D - s - r/10) / r + L, D and s in bytes (dd, total_bytes_sec) or requests (fio, total_iops_sec).
    const auto seconds = [](double d, double s, double r, double l) { return (d - s - r / 10) / r + l; };
    const auto cap = [](const IotuneOptions& o, bool iops) {
      return static_cast<double>(iops ? *o.total_iops_sec : *o.total_bytes_sec);
    };
    for (const Workload& w : e.workloads) {
      SCOPED_TRACE(w.name);
      const bool dd = std::holds_alternative<DdWorkload>(w.spec);
      double d = 0, s = 1;
      if (dd) {
        const auto& spec = std::get<DdWorkload>(w.spec);
        s = static_cast<double>(parse_size(spec.block_size));
        d = s * static_cast<double>(spec.count);
      } else {
        const auto& o = std::get<FioWorkload>(w.spec).options;
        d = static_cast<double>(parse_size(o.at("size")) / parse_size(o.at("bs")));
        // Each cap binds its own workload only: fio's bytes stay far below the bytes cap.
        EXPECT_LT(cap(fast, true) * static_cast<double>(parse_size(o.at("bs"))), cap(slow, false) / 5);
      }
      if (dd && fast.total_iops_sec) {
        EXPECT_LT(cap(fast, false) / s, cap(slow, true) / 5);  // and dd's requests far below the iops cap
      }
      const std::string metric = w.name + (dd ? ".bandwidth" : ".write.iops");
      ASSERT_TRUE(expected.contains(metric)) << metric;
      const auto ratio = [&](double l) {  // B/A of the rate: A's time over B's
        const double t_fast = seconds(d, s, cap(fast, !dd), l), t_slow = seconds(d, s, cap(slow, !dd), l);
        return ruler.b_slower ? t_fast / t_slow : t_slow / t_fast;
      };
      const double lo = std::min(ratio(0), ratio(0.060)) - 5e-5, hi = std::max(ratio(0), ratio(0.060)) + 5e-5;
      const auto [r, low, high] = expected.at(metric);
      EXPECT_GE(r, lo);
      EXPECT_LE(r, hi);
      EXPECT_LE(low, r);
      EXPECT_GE(high, r);
      EXPECT_GE(low, lo);
      EXPECT_LE(high, hi);
    }
  }
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

TEST(ConfigExperiment, DesignDefaultsToSequentialBlocksUnpinned) {
  const Experiment e = load(kBase);
  EXPECT_EQ(e.schedule.design, Design::sequential_blocks);
  EXPECT_TRUE(e.schedule.cpu_sets.empty());
}

TEST(ConfigExperiment, MaxStartSkewDefaultsTo50msAndIsRead) {
  EXPECT_EQ(load(kBase).schedule.max_start_skew, std::chrono::milliseconds(50));
  const Experiment e = load(kBase + "[schedule]\ndesign = \"co-scheduled\"\nmax_start_skew = \"20ms\"\n");
  EXPECT_EQ(e.schedule.max_start_skew, std::chrono::milliseconds(20));
  EXPECT_NE(describe_effective_config(e).find("schedule.max_start_skew"), std::string::npos);
  EXPECT_EQ(load(kBase + "[schedule]\nmax_start_skew = \"0ms\"\n").schedule.max_start_skew, std::chrono::milliseconds(0));
}

// A co-scheduled pair trades its CPUs every 10 ms unless told otherwise (run/designs/vcpu_swap.hpp).
TEST(ConfigExperiment, VcpuSwapDefaultsTo10msAndIsRead) {
  EXPECT_EQ(load(kBase).schedule.vcpu_swap, std::chrono::milliseconds(10));
  const Experiment e = load(kBase + "[schedule]\ndesign = \"co-scheduled\"\nvcpu_swap = \"0s\"\n");
  EXPECT_EQ(e.schedule.vcpu_swap, std::chrono::milliseconds(0));
  EXPECT_NE(describe_effective_config(e).find("schedule.vcpu_swap"), std::string::npos);
  EXPECT_EQ(load(kBase + "[schedule]\nvcpu_swap = \"2ms\"\n").schedule.vcpu_swap, std::chrono::milliseconds(2));
}

// The old overlap rule's key (issue 26): older experiment files still load, the value is checked,
// not used, and `abvm config show` says so.
TEST(ConfigExperiment, MinOverlapStillLoadsAndIsShownAsNotUsed) {
  const Experiment e = load(kBase + "[schedule]\ndesign = \"co-scheduled\"\nmin_overlap = 0.8\n");
  EXPECT_EQ(e.schedule.max_start_skew, std::chrono::milliseconds(50));
  const std::string shown = describe_effective_config(e);
  EXPECT_NE(shown.find("0.8 (not used: pairs are left out by schedule.max_start_skew only)"), std::string::npos) << shown;
  EXPECT_EQ(describe_effective_config(load(kBase)).find("schedule.min_overlap"), std::string::npos)
      << "not shown when not written";
}

TEST(ConfigExperiment, DesignsWithTwoGuestsPinToCpusZeroAndOneOrZeroUnlessTold) {
  using Sets = std::vector<std::string>;
  EXPECT_EQ(load(kBase + "[schedule]\ndesign = \"co-scheduled\"\n").schedule.cpu_sets, Sets{"0-1"});
  EXPECT_EQ(load(kBase + "[schedule]\ndesign = \"lockstep\"\n").schedule.cpu_sets, Sets{"0"});
  EXPECT_TRUE(load(kBase + "[schedule]\ndesign = \"same-guest\"\n").schedule.cpu_sets.empty());
  const Experiment e = load(kBase + "[schedule]\ndesign = \"co-scheduled\"\ncpu_set = \"2-3\"\n");
  EXPECT_EQ(e.schedule.design, Design::co_scheduled);
  EXPECT_EQ(e.schedule.cpu_sets, Sets{"2-3"});
  EXPECT_NE(describe_effective_config(e).find("schedule.design"), std::string::npos);
  const Experiment lanes = load(kBase + "[schedule]\ndesign = \"lockstep\"\ncpu_sets = [\"0\", \"1\"]\n");
  EXPECT_EQ(lanes.schedule.design, Design::lockstep);
  EXPECT_EQ(lanes.schedule.cpu_sets, (Sets{"0", "1"}));
  EXPECT_NE(describe_effective_config(lanes).find("[\"0\", \"1\"]"), std::string::npos);
}

TEST(ConfigExperiment, DesignErrorsNameTheKeyAndWhatToDo) {
  EXPECT_EQ(error_of(kBase + "[schedule]\ndesign = \"parallel\"\n"),
            "demo.toml:8: key 'schedule.design' = \"parallel\" is not one of sequential-blocks, co-scheduled, "
            "lockstep, same-guest");
  EXPECT_EQ(error_of(kBase + "[schedule]\ndesign = \"co-scheduled\"\norder = \"sequential\"\n"),
            "demo.toml:8: schedule.design = \"co-scheduled\" pairs each block's A and B boots: it needs "
            "schedule.order = \"interleaved\"; remove the order");
  EXPECT_EQ(error_of(kBase + "[disk]\npath = \"my.img\"\n[schedule]\ndesign = \"lockstep\"\n"),
            "demo.toml:10: schedule.design = \"lockstep\" runs two guests at once, each on a scratch image of "
            "its own: remove disk.path and let abvm create them");
  for (const char* bad : {"", "x", "1-", "3-1", "0,,1", "-1", "99999"}) {
    EXPECT_EQ(error_of(kBase + "[schedule]\ncpu_set = \"" + bad + "\"\n"),
              std::string("demo.toml:8: key 'schedule.cpu_set' = \"") + bad +
                  "\" is not a host CPU set: write CPU numbers and ranges such as \"0\", \"2-3\" or \"0,2\"")
        << bad;
  }
  EXPECT_EQ(load(kBase + "[schedule]\ncpu_set = \"0,2-3\"\n").schedule.cpu_sets, std::vector<std::string>{"0,2-3"});
}

// Issue 26: co-scheduled on one CPU, each guest's work delayed its partner's, and the slower side's
// short runs paid 3-4 ms for it; each lane of the design needs a CPU per guest.
TEST(ConfigExperiment, CoScheduledLanesNeedTwoCpusEach) {
  const std::string co = kBase + "[schedule]\ndesign = \"co-scheduled\"\n";
  EXPECT_EQ(error_of(co + "cpu_sets = [\"0-1\", \"2\"]\n"),
            "demo.toml:9: key 'schedule.cpu_sets': the CPU set \"2\" holds fewer than the 2 CPUs schedule.design = "
            "\"co-scheduled\" needs in each lane, one for each guest that measures while the other does (on one CPU "
            "each guest's work delays its partner's: the slower side's runs took 3-4 ms longer); give each set 2 "
            "CPUs, e.g. \"0-1\", or use design = \"lockstep\"");
  EXPECT_NE(error_of(co + "cpu_set = \"3\"\n").find("key 'schedule.cpu_set': the CPU set \"3\" holds fewer"),
            std::string::npos);
  EXPECT_EQ(load(co + "cpu_sets = [\"0,2\", \"1,3\"]\n").schedule.cpu_sets, (std::vector<std::string>{"0,2", "1,3"}));
  EXPECT_EQ(load(kBase + "[schedule]\ndesign = \"lockstep\"\ncpu_set = \"3\"\n").schedule.cpu_sets,
            std::vector<std::string>{"3"});
}

TEST(ConfigExperiment, CpuSetsMustNotOverlapNorComeWithOneCpuSetOrTheUsersDisk) {
  EXPECT_EQ(error_of(kBase + "[schedule]\ncpu_sets = [\"0-2\", \"2-3\"]\n"),
            "demo.toml:8: key 'schedule.cpu_sets': CPU 2 is in \"0-2\" and in \"2-3\": the lanes' CPU sets must "
            "not overlap (each runs its own block at the same time)");
  EXPECT_EQ(error_of(kBase + "[schedule]\ncpu_set = \"0\"\ncpu_sets = [\"1\"]\n"),
            "demo.toml:9: schedule.cpu_set and schedule.cpu_sets both name the host CPUs: keep cpu_sets (a list; "
            "one block runs on each set at once)");
  EXPECT_EQ(error_of(kBase + "[disk]\npath = \"my.img\"\n[schedule]\ncpu_sets = [\"0\", \"1\"]\n"),
            "demo.toml:10: key 'schedule.cpu_sets' runs 2 blocks at once, each on scratch images of its own: remove "
            "disk.path and let abvm create them");
  EXPECT_EQ(error_of(kBase + "[schedule]\ncpu_sets = [\"0\", \"x\"]\n"),
            "demo.toml:8: key 'schedule.cpu_sets' = \"x\" is not a host CPU set: write CPU numbers and ranges such as "
            "\"0\", \"2-3\" or \"0,2\"");
}

TEST(ConfigExperiment, SameGuestNeedsSidesThatDifferInDeviceOptionsOnly) {
  const Experiment e = load(kBase + "[schedule]\ndesign = \"same-guest\"\n");
  EXPECT_EQ(e.schedule.design, Design::same_guest);
  const std::string other_kernel =
      "name = \"demo\"\n[sides.B]\nkernel = \"linux-6.1-virtio\"\n[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\n";
  EXPECT_EQ(error_of(other_kernel + "[schedule]\ndesign = \"same-guest\"\n"),
            "demo.toml:8: schedule.design = \"same-guest\" boots one guest with both sides' disks, so the sides may "
            "differ only in device options, but their kernels differ: use another design");
  const std::string other_cmdline =
      "name = \"demo\"\n[sides.B]\ncmdline_append = \"swiotlb=force\"\n[[workload]]\nname = \"dd-write\"\n"
      "type = \"dd\"\n";
  EXPECT_EQ(error_of(other_cmdline + "[schedule]\ndesign = \"same-guest\"\n"),
            "demo.toml:8: schedule.design = \"same-guest\" boots one guest with both sides' disks, so the sides may "
            "differ only in device options, but their kernel command lines differ: use another design");
  EXPECT_EQ(error_of(kBase + "[disk]\npath = \"my.img\"\n[schedule]\ndesign = \"same-guest\"\n"),
            "demo.toml:10: schedule.design = \"same-guest\" boots one guest with both sides' disks, so the sides may "
            "differ only in device options, but disk.path names one disk (remove it: abvm creates one per side): use "
            "another design");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

TEST(ConfigExperiment, HostsAreLibvirtUrisOnceEachWithAnAbsolutePoolPath) {
  const Experiment e = load(kBase + "[hosts]\nuris = [\"qemu+ssh://root@lab3/system\", \"qemu+tcp://10.0.0.7:16509/system\"]\n");
  EXPECT_EQ(e.hosts.uris, (std::vector<std::string>{"qemu+ssh://root@lab3/system", "qemu+tcp://10.0.0.7:16509/system"}));
  EXPECT_FALSE(e.hosts.pool_path.has_value()) << "unset: the pool 'abvm' a host has, wherever it is";
  EXPECT_EQ(load(kBase + "[hosts]\npool_path = \"/srv/abvm\"\n").hosts.pool_path, "/srv/abvm");
  const std::string shown = describe_effective_config(e);
  EXPECT_NE(shown.find("qemu+ssh://root@lab3/system"), std::string::npos) << shown;
  EXPECT_TRUE(load(kBase).hosts.uris.empty());
  EXPECT_EQ(error_of(kBase + "[hosts]\nuris = [\"lab3\"]\n"),
            "demo.toml:8: key 'hosts.uris': \"lab3\" is not a libvirt URI: write e.g. \"qemu+ssh://root@lab3/system\" "
            "or \"qemu+tcp://10.0.0.7:16509/system\"");
  EXPECT_EQ(error_of(kBase + "[hosts]\nuris = [\"qemu:///system\", \"qemu:///system\"]\n"),
            "demo.toml:8: key 'hosts.uris': \"qemu:///system\" is named twice: a host runs its own blocks once");
  EXPECT_EQ(error_of(kBase + "[hosts]\npool_path = \"pool\"\n"),
            "demo.toml:8: key 'hosts.pool_path' = \"pool\" must be an absolute path on the hosts");
  EXPECT_EQ(error_of(kBase + "[disk]\npath = \"my.img\"\n[hosts]\nuris = [\"qemu:///system\"]\n"),
            "demo.toml:8: disk.path names a file on this machine, but the blocks run on [hosts]: remove it (abvm "
            "creates a scratch volume on each host)");
}

}  // namespace
}  // namespace abvm
