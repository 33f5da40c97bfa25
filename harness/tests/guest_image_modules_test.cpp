// Module resolution and the modules archive, on small module trees made by the test: the
// load order must put dependencies first, builtin modules must be skipped, compressed
// modules decompressed, and a missing module named.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/cpio.hpp"
#include "guest/job.hpp"
#include "guest/modules.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

class ModuleTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("abvm-mods-" + make_nonce().substr(0, 8)) / "lib/modules/6.1.0-test";
    fs::create_directories(root_ / "kernel/drivers/virtio");
    fs::create_directories(root_ / "kernel/drivers/block");
    for (const char* m : {"virtio", "virtio_ring", "virtio_pci", "virtio_pci_modern_dev", "virtio_pci_legacy_dev"}) {
      write_file_atomic(root_ / "kernel/drivers/virtio" / (std::string(m) + ".ko"), std::string("ELF ") + m);
    }
    // As in Debian's cloud kernel modules.dep (6.1): dependencies listed after the colon.
    write_file_atomic(root_ / "modules.dep",
                      "kernel/drivers/block/virtio_blk.ko.xz: kernel/drivers/virtio/virtio_ring.ko "
                      "kernel/drivers/virtio/virtio.ko\n"
                      "kernel/drivers/virtio/virtio.ko:\n"
                      "kernel/drivers/virtio/virtio_ring.ko:\n"
                      "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko "
                      "kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_ring.ko "
                      "kernel/drivers/virtio/virtio.ko\n"
                      "kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
                      "kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n");
    // virtio_blk is xz-compressed, as newer Debian kernels ship modules.
    write_file_atomic(root_ / "kernel/drivers/block/virtio_blk.ko.plain", "ELF virtio_blk");
    const std::string xz = run_checked({"xz", "-z", "-c", (root_ / "kernel/drivers/block/virtio_blk.ko.plain").string()});
    write_file_atomic(root_ / "kernel/drivers/block/virtio_blk.ko.xz", xz);
    write_file_atomic(root_ / "modules.builtin", "kernel/drivers/block/loop.ko\n");
  }
  void TearDown() override { fs::remove_all(root_.parent_path().parent_path().parent_path()); }

  static std::vector<std::string> names(const std::vector<ModuleFile>& mods) {
    std::vector<std::string> out;
    for (const auto& m : mods) out.push_back(m.name);
    return out;
  }
  fs::path root_;
};

TEST_F(ModuleTree, DependenciesComeFirstAndOnce) {
  const auto mods = resolve_modules(root_, {"virtio_pci", "virtio-blk"});
  EXPECT_EQ(names(mods), (std::vector<std::string>{"virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_ring",
                                                   "virtio", "virtio_pci", "virtio_blk"}));
  EXPECT_EQ(mods.back().path, root_ / "kernel/drivers/block/virtio_blk.ko.xz");
}

TEST_F(ModuleTree, BuiltinModulesNeedNoFile) {
  EXPECT_TRUE(resolve_modules(root_, {"loop"}).empty());
  EXPECT_EQ(build_modules_archive(root_, {"loop"}), "");
}

TEST_F(ModuleTree, MissingModuleIsNamed) {
  try {
    resolve_modules(root_, {"virtio_scsi"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel module 'virtio_scsi' not found under"), std::string::npos) << e.what();
  }
  // A dependency missing from the tree names who needed it.
  fs::remove(root_ / "kernel/drivers/virtio/virtio.ko");
  write_file_atomic(root_ / "modules.dep", "kernel/drivers/virtio/virtio_ring.ko: kernel/drivers/virtio/virtio.ko\n");
  fs::remove(root_ / "modules.builtin");
  try {
    resolve_modules(root_, {"virtio_ring"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'virtio' (needed by virtio_ring)"), std::string::npos) << e.what();
  }
}

TEST_F(ModuleTree, ArchiveHoldsDecompressedModulesAndTheLoadOrder) {
  const std::string archive = build_modules_archive(root_, {"virtio_blk"});
  const fs::path out = root_.parent_path() / "x";
  fs::create_directories(out);
  run_checked({"cpio", "-i", "-d", "--quiet"}, {.cwd = out, .stdin_data = archive});
  EXPECT_EQ(read_file(out / "abvm/modules.order"), "virtio_ring.ko\nvirtio.ko\nvirtio_blk.ko\n");
  EXPECT_EQ(read_file(out / "abvm/modules/virtio_blk.ko"), "ELF virtio_blk");
  EXPECT_EQ(read_file(out / "abvm/modules/virtio.ko"), "ELF virtio");
}

TEST_F(ModuleTree, NotADirectoryIsAnError) {
  EXPECT_THROW(resolve_modules(root_ / "nope", {"virtio"}), Error);
}

TEST_F(ModuleTree, MalformedModulesDepIsLocated) {
  write_file_atomic(root_ / "modules.dep", "kernel/drivers/virtio/virtio.ko:\nthis line has no colon\n");
  try {
    resolve_modules(root_, {"virtio"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("modules.dep:2: missing ':'"), std::string::npos) << e.what();
  }
}

}  // namespace
