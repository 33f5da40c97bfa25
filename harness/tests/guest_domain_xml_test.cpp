// guest/domain_xml.hpp: golden XML for a few specs, escaping of hostile strings, and the errors
// for specs libvirt or QEMU would refuse.
//
// The golden files were written by this code and then checked by hand and by libvirt: each one was
// accepted by `virsh -c qemu:///embed?root=... define --validate` (the driver tests boot the same
// shape for real), and GoldensAndEveryOptionValidateAgainstLibvirtsSchema below checks them with
// libvirt's schema on every run. Regenerate with ABVM_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <pugixml.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "environment_skip.hpp"
#include "guest/domain_xml.hpp"

using namespace abvm;

namespace {

const std::filesystem::path kGolden = std::filesystem::path(ABVM_TEST_DATA) / "guest" / "domain";

DomainSpec basic() {
  DomainSpec s;
  s.name = "abvm-1234-demo-A-3";
  s.kernel = "/cache/kernels/abc/vmlinuz-6.1.0-57-cloud-amd64";
  s.initrd = "/results/demo/trials/3/initramfs.cpio";
  s.cmdline = "console=ttyS0 panic=-1 quiet";
  s.disks = {{.path = "/results/demo/scratch.img"}};
  s.console_log = "/results/demo/trials/3/console.log";
  return s;
}

void expect_golden(const std::string& file, const std::string& xml) {
  const auto path = kGolden / file;
  if (std::getenv("ABVM_UPDATE_GOLDEN")) write_file_atomic(path, xml);
  EXPECT_EQ(xml, read_file(path)) << "golden " << path << " differs; actual:\n" << xml;
}

pugi::xml_document parse(const std::string& xml) {
  pugi::xml_document doc;
  auto r = doc.load_string(xml.c_str());
  EXPECT_TRUE(r) << r.description();
  return doc;
}

std::string error_of(const DomainSpec& s) {
  try {
    domain_xml(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_files(const DomainSpec& s, const HostFiles& f) {
  try {
    domain_xml(s, f);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(GuestDomainXml, DefaultsTcgNoOptions) { expect_golden("basic-tcg.xml", domain_xml(basic())); }

TEST(GuestDomainXml, KvmIommuQueuesIothreadAndPinning) {
  auto s = basic();
  s.name = "abvm-1234-demo-B-4";
  s.accelerator = Accelerator::kvm;
  s.machine = {.vcpus = 2, .memory_mib = 1024, .vcpu_pins = {2, 3}};
  s.disks[0].options = {.iommu_platform = true, .queues = 2, .queue_size = 256, .cache = "none", .io = "io_uring", .iothread = true};
  expect_golden("kvm-iommu-iothread-pinned.xml", domain_xml(s));
}

TEST(GuestDomainXml, NoDiskNoInitrdWritebackThreads) {
  auto s = basic();
  s.disks.clear();
  s.initrd.clear();
  expect_golden("no-disk-no-initrd.xml", domain_xml(s));
  auto s2 = basic();
  s2.disks[0].options.cache = "writeback";
  s2.disks[0].options.io = "threads";
  auto doc = parse(domain_xml(s2));
  auto drv = doc.select_node("/domain/devices/disk/driver").node();
  EXPECT_STREQ(drv.attribute("cache").value(), "writeback");
  EXPECT_STREQ(drv.attribute("io").value(), "threads");
  EXPECT_STREQ(drv.attribute("iommu").value(), "off");
  EXPECT_FALSE(drv.attribute("queues"));
  EXPECT_FALSE(doc.select_node("/domain/iothreads"));
}

TEST(GuestDomainXml, HostileStringsAreEscapedAndRoundTripExactly) {
  auto s = basic();
  s.cmdline = "console=ttyS0 x=\"a'b\" </cmdline><devices><disk/></devices> &amp; & <!-- ]]> \xc3\xa9";
  s.kernel = "/tmp/we'ird \"dir\" <&>/vmlinuz";
  s.disks = {{.path = "/tmp/a'b\"c<d>&e.img"}};
  s.console_log = "/tmp/log & <x>'\".txt";
  s.disks[0].serial = "s<&>'\"";
  const std::string xml = domain_xml(s);
  auto doc = parse(xml);
  EXPECT_EQ(doc.select_nodes("//cmdline").size(), 1u);
  EXPECT_EQ(doc.select_nodes("//disk").size(), 1u);  // the injected <disk/> is text, not an element
  EXPECT_EQ(doc.select_node("/domain/os/cmdline").node().text().get(), s.cmdline);
  EXPECT_EQ(doc.select_node("/domain/os/kernel").node().text().get(), s.kernel.native());
  EXPECT_EQ(std::string(doc.select_node("/domain/devices/disk/source").node().attribute("file").value()),
            s.disks[0].path.native());
  EXPECT_EQ(std::string(doc.select_node("/domain/devices/serial/log").node().attribute("file").value()),
            s.console_log.native());
  EXPECT_EQ(doc.select_node("/domain/devices/disk/serial").node().text().get(), s.disks[0].serial);
  EXPECT_EQ(xml.find("<devices><disk/>"), std::string::npos);
}

// A remote host boots its volumes: the XML names the host's paths, never this machine's, and
// the console is a pty whose copy QEMU writes to the host's console volume.
TEST(GuestDomainXml, HostFilesReplaceTheLocalPathsAndTheConsoleIsAPtyWithQemusCopy) {
  const auto s = basic();
  const HostFiles host{.kernel = "/var/lib/abvm/pool/abvm-content-h_1_a-0f0f",
                       .initrd = "/var/lib/abvm/pool/abvm-initrd-h_1_a-abvm-1234-demo-A-3",
                       .disks = {"/var/lib/abvm/pool/abvm-scratch-h_1_a-0"},
                       .console_log = "/var/lib/abvm/pool/abvm-console-h_1_a-abvm-1234-demo-A-3"};
  const std::string xml = domain_xml(s, host);
  auto doc = parse(xml);
  EXPECT_EQ(doc.select_node("/domain/os/kernel").node().text().get(), host.kernel.native());
  EXPECT_EQ(doc.select_node("/domain/os/initrd").node().text().get(), host.initrd.native());
  EXPECT_EQ(std::string(doc.select_node("/domain/devices/disk/source").node().attribute("file").value()),
            host.disks[0].native());
  const auto serial = doc.select_node("/domain/devices/serial").node();
  EXPECT_STREQ(serial.attribute("type").value(), "pty");
  EXPECT_EQ(std::string(serial.child("log").attribute("file").value()), host.console_log.native());
  EXPECT_STREQ(serial.child("log").attribute("append").value(), "off");
  for (const auto& local : {s.kernel, s.initrd, s.disks[0].path, s.console_log}) {
    EXPECT_EQ(xml.find(local.native()), std::string::npos) << local;
  }
  // The spec alone is this machine's view: its own files.
  EXPECT_EQ(domain_xml(s), domain_xml(s, local_host_files(s)));
  auto no_disk = host;
  no_disk.disks.clear();
  EXPECT_EQ(error_of_files(s, no_disk), "domain scratch disks: 0 host paths for 1 disks");
  auto relative = host;
  relative.kernel = "pool/vmlinuz";
  EXPECT_NE(error_of_files(s, relative).find("'pool/vmlinuz' is not an absolute path"), std::string::npos);
}

TEST(GuestDomainXml, EveryEndingDestroysAndTheGuestHasAcpiAndNoExtras) {
  auto doc = parse(domain_xml(basic()));
  for (const char* e : {"on_poweroff", "on_reboot", "on_crash"}) {
    EXPECT_STREQ(doc.select_node((std::string("/domain/") + e).c_str()).node().text().get(), "destroy") << e;
  }
  EXPECT_TRUE(doc.select_node("/domain/features/acpi"));
  EXPECT_FALSE(doc.select_node("//interface"));
  EXPECT_FALSE(doc.select_node("//graphics"));
  EXPECT_STREQ(doc.select_node("//memballoon").node().attribute("model").value(), "none");
  EXPECT_STREQ(doc.select_node("/domain").node().attribute("type").value(), "qemu");
}

TEST(GuestDomainXml, NamesLibvirtOrAbvmRefuseAreClearErrors) {
  auto s = basic();
  s.name = "abvm-a/b";
  EXPECT_EQ(error_of(s), "domain name 'abvm-a/b' contains '/' at offset 6: use only letters, digits and . _ + -");
  s.name = "abvm-a\nb";
  EXPECT_EQ(error_of(s), "domain name 'abvm-a\nb' contains 0x0a at offset 6: use only letters, digits and . _ + -");
  s.name = "";
  EXPECT_EQ(error_of(s), "domain name '' must be 1-200 characters long");
  s.name = "-abvm";
  EXPECT_EQ(error_of(s), "domain name '-abvm' must not start with '-'");
  s.name = std::string(201, 'a');
  EXPECT_NE(error_of(s).find("must be 1-200 characters long"), std::string::npos);
}

TEST(GuestDomainXml, DomainNamesAreValidUniqueAndCarryThePid) {
  auto a = domain_name("demo/side A", 1);
  auto b = domain_name("demo/side A", 2);
  EXPECT_NO_THROW(validate_domain_name(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a, "abvm-" + std::to_string(::getpid()) + "." + boot_tag() + "-demo_side_A-1");
  EXPECT_EQ(boot_tag().size(), 8u) << "this machine's boot id could not be read";
  const auto owner = domain_owner(a);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->pid, ::getpid());
  EXPECT_EQ(owner->boot, boot_tag());
}

TEST(GuestDomainXml, DomainOwnersAreReadFromTaggedAndOlderNames) {
  EXPECT_FALSE(domain_owner("demo-1"));
  EXPECT_FALSE(domain_owner("abvm-x1-demo-1"));
  EXPECT_FALSE(domain_owner("abvm--demo-1"));
  EXPECT_FALSE(domain_owner("abvm-1234567890-demo-1"));  // longer than any pid
  const auto old = domain_owner("abvm-42-demo-1");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->pid, 42);
  EXPECT_EQ(old->boot, "");
  const auto tagged = domain_owner("abvm-42.0a1b2c3d-demo.x-1");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->pid, 42);
  EXPECT_EQ(tagged->boot, "0a1b2c3d");
}

// Which domains a starting abvm destroys: those of its own machine's dead processes, on its own
// daemon and on remote ones, and nothing of another machine's (a remote daemon serves several).
TEST(GuestDomainXml, LeftoversAreTheDomainsOfThisBootsDeadProcesses) {
  const auto dead = [](long) { return false; };
  const auto alive = [](long) { return true; };
  for (const bool local : {true, false}) {
    EXPECT_TRUE(is_leftover_domain("abvm-42.0a1b2c3d-t0001-1", local, "0a1b2c3d", dead)) << local;
    EXPECT_FALSE(is_leftover_domain("abvm-42.0a1b2c3d-t0001-1", local, "0a1b2c3d", alive)) << local;
    EXPECT_FALSE(is_leftover_domain("abvm-42.ffffffff-t0001-1", local, "0a1b2c3d", dead)) << local;
    EXPECT_FALSE(is_leftover_domain("other-42.0a1b2c3d-t0001-1", local, "0a1b2c3d", dead)) << local;
  }
  EXPECT_TRUE(is_leftover_domain("abvm-42-t0001-1", true, "0a1b2c3d", dead));
  EXPECT_FALSE(is_leftover_domain("abvm-42-t0001-1", false, "0a1b2c3d", dead));
  EXPECT_FALSE(is_leftover_domain("abvm-42-t0001-1", true, "0a1b2c3d", alive));
}

TEST(GuestDomainXml, ImpossibleSettingsAreClearErrors) {
  auto s = basic();
  s.cmdline = "console=ttyS0\x01";
  EXPECT_EQ(error_of(s), "domain kernel command line: control character 0x01 at offset 13 (\"console=ttyS0\x01\"); "
                         "remove it from the kernel command line");
  s = basic();
  s.kernel = "vmlinuz";
  EXPECT_NE(error_of(s).find("domain kernel: 'vmlinuz' is not an absolute path"), std::string::npos);
  s = basic();
  s.disks[0].options.cache = "fast";
  EXPECT_EQ(error_of(s), "virtio-blk cache 'fast' is not one of: none, writethrough, writeback, directsync, unsafe");
  s = basic();
  s.disks[0].options.cache = "writeback";  // io stays 'native'
  EXPECT_NE(error_of(s).find("io 'native' needs cache 'none' or 'directsync'"), std::string::npos);
  s = basic();
  s.disks[0].options.queue_size = 100;
  EXPECT_EQ(error_of(s), "virtio-blk queue_size = 100: must be a power of two in 4..1024");
  s = basic();
  s.disks[0].options.queues = 0;
  EXPECT_EQ(error_of(s), "virtio-blk queues = 0: must be 1..1024");
  s = basic();
  s.machine.vcpus = 2;
  s.machine.vcpu_pins = {1};
  EXPECT_EQ(error_of(s), "vcpu pinning lists 1 host CPUs for 2 vCPUs: give exactly one per vCPU");
  s = basic();
  s.disks[0].serial = std::string(21, 's');
  EXPECT_NE(error_of(s).find("must be 1-20 characters"), std::string::npos);
}

// <iotune> after <target>, as libvirt writes it (libvirt 9.0's `virsh dumpxml` of a domain defined
// from this XML gives the same elements in the same place and order), only the values set.
TEST(GuestDomainXml, IotuneHasTheSetValuesInLibvirtsOrder) {
  auto s = basic();
  s.name = "abvm-1234-ruler-B-5";
  IotuneOptions& t = s.disks[0].options.iotune;
  t.write_iops_sec_max_length = 3;
  t.size_iops_sec = 4096;
  t.total_bytes_sec_max = 32 << 20;
  t.read_iops_sec = 400;
  t.write_iops_sec = 300;
  t.write_iops_sec_max = 600;
  t.total_bytes_sec = 9216000;
  const std::string xml = domain_xml(s);
  expect_golden("iotune.xml", xml);
  auto doc = parse(xml);
  const auto iotune = doc.select_node("/domain/devices/disk/iotune").node();
  std::vector<std::string> names;
  for (auto c : iotune.children()) names.push_back(c.name());
  EXPECT_EQ(names, (std::vector<std::string>{"total_bytes_sec", "read_iops_sec", "write_iops_sec",
                                             "total_bytes_sec_max", "write_iops_sec_max", "size_iops_sec",
                                             "write_iops_sec_max_length"}));
  EXPECT_STREQ(iotune.child("total_bytes_sec").text().get(), "9216000");
  EXPECT_STREQ(iotune.previous_sibling().name(), "target");
  EXPECT_STREQ(iotune.next_sibling().name(), "serial");
  EXPECT_TRUE(parse(domain_xml(basic())).select_node("//iotune").node().empty());
}

TEST(GuestDomainXml, IotuneThatLibvirtOrQemuRefuseIsAClearError) {
  const auto with = [](auto set) {
    auto s = basic();
    set(s.disks[0].options.iotune);
    return error_of(s);
  };
  EXPECT_EQ(with([](IotuneOptions& t) { t.total_iops_sec = 0; }),
            "virtio-blk iotune total_iops_sec = 0: must be 1..1000000000000000 (leave it unset for no limit)");
  EXPECT_EQ(with([](IotuneOptions& t) { t.read_bytes_sec = (1ULL << 40) + 1; }),
            "virtio-blk iotune read_bytes_sec = 1099511627777: must be 1..1T (leave it unset for no limit)");
  EXPECT_EQ(with([](IotuneOptions& t) { t.total_bytes_sec = 1, t.write_bytes_sec = 2; }),
            "virtio-blk iotune write_bytes_sec = 2 with total_bytes_sec = 1: libvirt takes a total limit or read "
            "and write limits, not both");
  EXPECT_EQ(with([](IotuneOptions& t) { t.read_iops_sec_max = 5; }),
            "virtio-blk iotune read_iops_sec_max = 5 with read_iops_sec = unset: a burst rate needs its rate limit");
  EXPECT_EQ(with([](IotuneOptions& t) { t.total_iops_sec = 10, t.total_iops_sec_max = 5; }),
            "virtio-blk iotune total_iops_sec_max = 5 with total_iops_sec = 10: QEMU refuses a burst rate below its "
            "rate");
  EXPECT_EQ(with([](IotuneOptions& t) { t.total_iops_sec = 10, t.total_iops_sec_max_length = 5; }),
            "virtio-blk iotune total_iops_sec_max_length = 5 with total_iops_sec_max = unset: a burst length needs "
            "its burst rate");
  EXPECT_EQ(with([](IotuneOptions& t) {
              t.total_iops_sec = 10, t.total_iops_sec_max = 1'000'000'000, t.total_iops_sec_max_length = 1'000'001;
            }),
            "virtio-blk iotune total_iops_sec_max_length = 1000001 with total_iops_sec_max = 1000000000: QEMU "
            "allows at most 1e15 per burst");
  EXPECT_EQ(with([](IotuneOptions& t) { t.size_iops_sec = 4096; }),
            "virtio-blk iotune size_iops_sec = 4096 with total_iops_sec = unset: an iops size needs an iops limit");
}

// Co-scheduled guests share a host CPU set: libvirt's <vcpu cpuset> pins the vCPUs and QEMU's
// emulator threads; an explicit per-vCPU pin still wins for its vCPU.
TEST(GuestDomainXml, HostCpuSetPinsTheWholeGuest) {
  auto s = basic();
  s.host_cpus = "0-1";
  auto doc = parse(domain_xml(s));
  EXPECT_STREQ(doc.select_node("/domain/vcpu").node().attribute("cpuset").value(), "0-1");
  EXPECT_TRUE(doc.select_node("/domain/cputune").node().empty());
  EXPECT_TRUE(parse(domain_xml(basic())).select_node("/domain/vcpu").node().attribute("cpuset").empty());
  s.host_cpus = "0;rm";
  EXPECT_EQ(error_of(s), "host CPU set '0;rm' is not CPU numbers and ranges such as \"0\" or \"2-3\"");
}

// Independent of this code: libvirt's own RelaxNG schema (virt-xml-validate, libvirt-clients)
// accepts every golden file and the XML of a spec with every option set, host CPU set included.
TEST(GuestDomainXml, GoldensAndEveryOptionValidateAgainstLibvirtsSchema) {
  if (!find_program("virt-xml-validate")) ABVM_SKIP_WITHOUT("virt-xml-validate is not installed (libvirt-clients)");
  auto s = basic();
  s.accelerator = Accelerator::kvm;
  s.host_cpus = "0-1";
  s.machine = {.vcpus = 2, .memory_mib = 1024, .vcpu_pins = {0, 1}};
  s.disks[0].options = {.iommu_platform = true, .queues = 2, .queue_size = 256, .cache = "none", .io = "io_uring", .iothread = true};
  // Every <iotune> element at once that can be: read and write limits of each kind (total_* are
  // the golden iotune.xml's), with bursts, their lengths and an iops size.
  for (const IotuneField& f : kIotuneFields) {
    if (!f.name.starts_with("total_")) s.disks[0].options.iotune.*f.member = f.unit == IotuneUnit::seconds ? 2 : 4096;
  }
  const auto every_option = std::filesystem::temp_directory_path() / ("abvm-domain-" + std::to_string(::getpid()) + ".xml");
  write_file_atomic(every_option, domain_xml(s));
  std::vector<std::filesystem::path> files = {every_option};
  for (const auto& e : std::filesystem::directory_iterator(kGolden)) files.push_back(e.path());
  for (const auto& f : files) {
    const ProcessResult r = run_process({"virt-xml-validate", f.string(), "domain"});
    EXPECT_EQ(r.exit_code, 0) << f << ": " << r.out << r.err;
  }
  std::filesystem::remove(every_option);
}
