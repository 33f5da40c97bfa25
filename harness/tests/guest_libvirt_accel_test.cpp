// Accelerator choice (guest/accel.hpp): the decision logic against a scripted driver, and the
// real probe on this host through libvirt.
#include <gtest/gtest.h>

#include "guest/accel.hpp"
#include "guest/domain_xml.hpp"
#include "fake_driver.hpp"
#include "guest_libvirt_support.hpp"

using namespace abvm;
using namespace std::chrono_literals;

namespace {
// The shared fake, answering each probe boot with the next scripted ending.
struct ScriptedDriver : test::FakeDriver {
  ScriptedDriver(std::string host, std::vector<test::FakeAnswer> script) : FakeDriver(std::move(host)) {
    answer = [this, script = std::move(script)](const test::FakeBoot&) { return script.at(boots.size() - 1); };
  }
  DomainSpec spec(std::size_t i) const { return boots.at(i).spec; }
};

AccelProbe probe() {
  AccelProbe p;
  p.kernel = "/k/vmlinuz";
  p.initrd = "/k/initrd";
  p.marker = "PROBE-OK";
  p.work_dir = "/tmp";
  p.timeout = 3s;
  return p;
}

class GuestLibvirtAccel : public ::testing::Test {
 protected:
  void SetUp() override { forget_accelerator_probes(); }
  void TearDown() override { forget_accelerator_probes(); }
};

}  // namespace

TEST_F(GuestLibvirtAccel, KvmWhenTheProbePrintsItsMarkerAndTheProbeRunsOncePerHost) {
  ScriptedDriver d("host-a", {{"boot...\nPROBE-OK\n", GuestOutcome::End::powered_off, 0.7, ""}});
  auto c = choose_accelerator(d, probe());
  EXPECT_EQ(to_string(c.accelerator), "kvm");
  EXPECT_FALSE(c.cached);
  EXPECT_DOUBLE_EQ(c.probe_seconds, 0.7);
  EXPECT_EQ(accelerator_warning(c), "");
  ASSERT_EQ(d.boots.size(), 1u);
  EXPECT_EQ(d.spec(0).accelerator, Accelerator::kvm);
  EXPECT_EQ(d.spec(0).kernel, "/k/vmlinuz");
  EXPECT_TRUE(d.spec(0).disks.empty());

  auto again = choose_accelerator(d, probe());
  EXPECT_EQ(to_string(again.accelerator), "kvm");
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(d.boots.size(), 1u);  // not probed again
}

TEST_F(GuestLibvirtAccel, TcgWhenKvmHangsOrIsMissingOrTheMarkerNeverComes) {
  ScriptedDriver hang("host-hang", {{"Booting the kernel.\n", GuestOutcome::End::timeout, 3.0, ""}});
  auto c = choose_accelerator(hang, probe());
  EXPECT_EQ(to_string(c.accelerator), "tcg");
  EXPECT_NE(c.reason.find("no marker within 3 s"), std::string::npos) << c.reason;
  EXPECT_NE(accelerator_warning(c).find("TCG"), std::string::npos);

  ScriptedDriver missing("host-nokvm", {{"", GuestOutcome::End::infra_error, 0.1, "no /dev/kvm"}});
  c = choose_accelerator(missing, probe());
  EXPECT_EQ(to_string(c.accelerator), "tcg");
  EXPECT_NE(c.reason.find("no /dev/kvm"), std::string::npos) << c.reason;

  // The guest ran to its end but never printed the marker: not a working KVM boot.
  ScriptedDriver silent("host-silent", {{"nothing\n", GuestOutcome::End::powered_off, 1.0, ""}});
  c = choose_accelerator(silent, probe());
  EXPECT_EQ(to_string(c.accelerator), "tcg");
  EXPECT_NE(c.reason.find("powered_off"), std::string::npos) << c.reason;
}

TEST_F(GuestLibvirtAccel, EachHostIsProbedSeparately) {
  ScriptedDriver a("host-a", {{"PROBE-OK", GuestOutcome::End::powered_off, 0.5, ""}});
  ScriptedDriver b("host-b", {{"", GuestOutcome::End::timeout, 3.0, ""}});
  EXPECT_EQ(to_string(choose_accelerator(a, probe()).accelerator), "kvm");
  EXPECT_EQ(to_string(choose_accelerator(b, probe()).accelerator), "tcg");
  EXPECT_EQ(b.boots.size(), 1u);
}

// On this machine /dev/kvm exists but a standard guest hangs under it: the probe must say TCG
// (and a host where KVM works must say KVM). Either way the guest under the chosen accelerator
// must then boot.
TEST_F(GuestLibvirtAccel, TheRealProbeChoosesAnAcceleratorThatBoots) {
  ABVM_REQUIRE_LIBVIRT();
  auto& s = test::shared();
  AccelProbe p;
  p.kernel = s.guest.kernel;
  p.initrd = s.guest.initrd;
  p.cmdline = "console=ttyS0 panic=-1 abvm_test=hang";
  p.marker = "ABVM-TEST-UP";
  p.work_dir = s.guest.work;
  p.timeout = 10s;
  auto c = choose_accelerator(*s.driver, p);
  std::cout << "accelerator: " << to_string(c.accelerator) << " (" << c.reason << ")\n";
  EXPECT_FALSE(c.cached);
  EXPECT_FALSE(c.reason.empty());

  DomainSpec spec;
  spec.name = domain_name("accel-check", 1);
  spec.kernel = s.guest.kernel;
  spec.initrd = s.guest.initrd;
  spec.cmdline = "console=ttyS0 panic=-1 abvm_test=poweroff";
  spec.console_log = s.guest.work / (spec.name + ".console.log");
  spec.accelerator = c.accelerator;
  auto out = s.driver->run_guest(spec, 60s, [](std::string_view con) {
    return con.find("ABVM-TEST-DONE") != std::string_view::npos;
  });
  EXPECT_EQ(to_string(out.end), "finished") << out.console;
}
