#pragma once
// Guest hardware settings that an experiment may set per side, as values. config/ fills them from
// the experiment file; guest/ turns them into libvirt domain XML. The defaults here are the only
// ones (the key table shows them); the allowed values are in config/rules.hpp.
#include <optional>
#include <string>
#include <vector>

namespace abvm {

// The virtio-blk scratch disk's device options (QEMU/libvirt names in comments).
struct VirtioBlkOptions {
  bool iommu_platform = false;            // <driver iommu='on'>: VIRTIO_F_ACCESS_PLATFORM, guest uses the DMA API
  std::optional<int> queues;              // <driver queues='N'>: number of virtqueues
  std::optional<int> queue_size;          // <driver queue_size='N'>: ring size (power of two)
  std::string cache = "none";             // <driver cache=...>: one of rules::cache_modes
  std::string io = "native";              // <driver io=...>: one of rules::io_modes
  bool iothread = false;                  // run the disk in its own QEMU iothread
  bool operator==(const VirtioBlkOptions&) const = default;
};

struct MachineOptions {
  int vcpus = 1;
  int memory_mib = 512;
  std::vector<int> vcpu_pins;             // optional host CPU per vCPU (empty: no pinning)
  bool operator==(const MachineOptions&) const = default;
};

}  // namespace abvm
