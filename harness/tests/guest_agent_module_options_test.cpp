// The agent's reading of module options on the kernel command line (guests/agent/init.sh,
// cmdline_module_options, issue 14): insmod takes options only from its arguments, so the agent
// must find the words modprobe would have applied. Run by busybox sh on the host in the agent's
// "modopts" mode; the expected outputs follow kmod's kcmdline parser (libkmod-config.c).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/process.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

const fs::path kAgent = fs::path(ABVM_SOURCE_DIR) / "guests/agent/init.sh";

// "<module> <option>" lines, as the agent's load_modules reads them.
std::string options_of(const std::string& cmdline) {
  const ProcessResult r = run_process({"busybox", "sh", kAgent.string()},
                                      {.extra_env = {"ABVM_AGENT_MODE=modopts", "ABVM_CMDLINE=" + cmdline}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(GuestAgentModuleOptions, ModuleWordsInOrderDashesAsUnderscores) {
  EXPECT_EQ(options_of("console=ttyS0 panic=-1 virtio_blk.queue_depth=1 virtio-blk.num_request_queues=1 "
                       "abvm.test_fault=x virtio_pci.force_legacy"),
            "virtio_blk queue_depth=1\nvirtio_blk num_request_queues=1\nabvm test_fault=x\n"
            "virtio_pci force_legacy\n");
  // A later word for the same parameter comes later: the kernel applies the last one.
  EXPECT_EQ(options_of("virtio_blk.queue_depth=4 virtio_blk.queue_depth=2"),
            "virtio_blk queue_depth=4\nvirtio_blk queue_depth=2\n");
  // The first '.' ends the module name; later dots belong to the value.
  EXPECT_EQ(options_of("m.p=1.5"), "m p=1.5\n");
  EXPECT_EQ(options_of(""), "");
}

TEST(GuestAgentModuleOptions, WordsThatAreNoModuleOptions) {
  // An '=' before the first '.', no '.', or nothing before it: kernel or init parameters.
  EXPECT_EQ(options_of("root=/dev/vda1.x quiet .p=1 init=/init"), "");
}

TEST(GuestAgentModuleOptions, QuotedValuesStayWholeWithTheirQuotes) {
  // The kernel's own parser strips the quotes when insmod hands the option over.
  EXPECT_EQ(options_of("m.p=\"a b.c\" n.q=1"), "m p=\"a b.c\"\nn q=1\n");
  // kmod ignores a word whose quotes come before "<module>.<param>=" and one left unterminated
  // (which swallows the rest of the line).
  EXPECT_EQ(options_of("\"m.p=1\" m.\"p=1\" n.q=1 o.r=\"x y.z=1"), "n q=1\n");
}

}  // namespace
