#pragma once
// Guest hardware settings that an experiment may set per side, as values. config/ fills them from
// the experiment file; guest/ turns them into libvirt domain XML. The defaults here are the only
// ones (the key table shows them); the allowed values are in config/rules.hpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

// libvirt's <iotune> of a disk: QEMU's block throttling (util/throttle.c), one leaky bucket per
// limit. Every field is optional (unset: no limit, no element); libvirt itself reads 0 as unset,
// so abvm refuses 0 instead of passing it on. The rules that combine fields are
// rules::iotune_conflict.
//
// What a throttled disk delivers (QEMU 2.11 and later, util/throttle.c throttle_compute_wait):
// each limit is a bucket that leaks at its rate r. A request may start while the bucket holds at
// most its burst allowance b, and then adds its size (1 for an iops limit). b is r/10 when *_max
// is unset ("bucket_size = avg / 10"), else *_max * *_max_length. So a dd of D bytes in requests
// of s, one at a time, on an empty bucket (idle for (b + s) / r before), starts its last request
// at (D - s - b) / r and takes
//     T = (D - s - r/10) / r + L          L: the last request's service time, dd's start and end
// reporting D / T, above r for small L. The same holds for an iops limit counted in requests
// (s = 1), at any queue depth. So caps of r and f*r give a ratio (T_A + L) / (T_B + L), not f:
// with D = 24M, s = 512K, r = 10000K/s it is 0.8961 for f = 0.90 at L = 0, 0.8975 at the L of
// about 35 ms measured under TCG, 0.8981 at 50 ms. s is the request QEMU sees: a block of more
// pages than the guest's max_segments (or above max_sectors_kb) is split in two, the last piece
// small. README.md "Throttled disks" has the measured figures (harness/bench/throttle_ruler.py).
struct IotuneOptions {
  std::optional<std::uint64_t> total_bytes_sec;   // bytes per second, reads and writes together
  std::optional<std::uint64_t> read_bytes_sec;
  std::optional<std::uint64_t> write_bytes_sec;
  std::optional<std::uint64_t> total_iops_sec;    // requests per second
  std::optional<std::uint64_t> read_iops_sec;
  std::optional<std::uint64_t> write_iops_sec;
  std::optional<std::uint64_t> total_bytes_sec_max;  // burst rates (>= their rate)
  std::optional<std::uint64_t> read_bytes_sec_max;
  std::optional<std::uint64_t> write_bytes_sec_max;
  std::optional<std::uint64_t> total_iops_sec_max;
  std::optional<std::uint64_t> read_iops_sec_max;
  std::optional<std::uint64_t> write_iops_sec_max;
  std::optional<std::uint64_t> size_iops_sec;     // bytes that count as one request (larger: several)
  std::optional<std::uint64_t> total_bytes_sec_max_length;  // seconds the burst rate may last
  std::optional<std::uint64_t> read_bytes_sec_max_length;
  std::optional<std::uint64_t> write_bytes_sec_max_length;
  std::optional<std::uint64_t> total_iops_sec_max_length;
  std::optional<std::uint64_t> read_iops_sec_max_length;
  std::optional<std::uint64_t> write_iops_sec_max_length;
  bool operator==(const IotuneOptions&) const = default;
};

// What an iotune value counts: the key table's type and doc, the loader's rendering.
enum class IotuneUnit { bytes_per_second, requests_per_second, bytes, seconds };

struct IotuneField {
  std::string_view name;  // libvirt's element name, and the key under device.iotune
  std::optional<std::uint64_t> IotuneOptions::*member;
  IotuneUnit unit;
};

// Every field, in the order libvirt writes <iotune>'s elements (and its schema lists them).
inline constexpr std::array<IotuneField, 19> kIotuneFields = {{
    {"total_bytes_sec", &IotuneOptions::total_bytes_sec, IotuneUnit::bytes_per_second},
    {"read_bytes_sec", &IotuneOptions::read_bytes_sec, IotuneUnit::bytes_per_second},
    {"write_bytes_sec", &IotuneOptions::write_bytes_sec, IotuneUnit::bytes_per_second},
    {"total_iops_sec", &IotuneOptions::total_iops_sec, IotuneUnit::requests_per_second},
    {"read_iops_sec", &IotuneOptions::read_iops_sec, IotuneUnit::requests_per_second},
    {"write_iops_sec", &IotuneOptions::write_iops_sec, IotuneUnit::requests_per_second},
    {"total_bytes_sec_max", &IotuneOptions::total_bytes_sec_max, IotuneUnit::bytes_per_second},
    {"read_bytes_sec_max", &IotuneOptions::read_bytes_sec_max, IotuneUnit::bytes_per_second},
    {"write_bytes_sec_max", &IotuneOptions::write_bytes_sec_max, IotuneUnit::bytes_per_second},
    {"total_iops_sec_max", &IotuneOptions::total_iops_sec_max, IotuneUnit::requests_per_second},
    {"read_iops_sec_max", &IotuneOptions::read_iops_sec_max, IotuneUnit::requests_per_second},
    {"write_iops_sec_max", &IotuneOptions::write_iops_sec_max, IotuneUnit::requests_per_second},
    {"size_iops_sec", &IotuneOptions::size_iops_sec, IotuneUnit::bytes},
    {"total_bytes_sec_max_length", &IotuneOptions::total_bytes_sec_max_length, IotuneUnit::seconds},
    {"read_bytes_sec_max_length", &IotuneOptions::read_bytes_sec_max_length, IotuneUnit::seconds},
    {"write_bytes_sec_max_length", &IotuneOptions::write_bytes_sec_max_length, IotuneUnit::seconds},
    {"total_iops_sec_max_length", &IotuneOptions::total_iops_sec_max_length, IotuneUnit::seconds},
    {"read_iops_sec_max_length", &IotuneOptions::read_iops_sec_max_length, IotuneUnit::seconds},
    {"write_iops_sec_max_length", &IotuneOptions::write_iops_sec_max_length, IotuneUnit::seconds},
}};

inline bool any_set(const IotuneOptions& t) {
  for (const IotuneField& f : kIotuneFields) {
    if ((t.*f.member).has_value()) return true;
  }
  return false;
}

// The virtio-blk scratch disk's device options (QEMU/libvirt names in comments).
struct VirtioBlkOptions {
  bool iommu_platform = false;            // <driver iommu='on'>: VIRTIO_F_ACCESS_PLATFORM, guest uses the DMA API
  std::optional<int> queues;              // <driver queues='N'>: number of virtqueues
  std::optional<int> queue_size;          // <driver queue_size='N'>: ring size (power of two)
  std::string cache = "none";             // <driver cache=...>: one of rules::cache_modes
  std::string io = "native";              // <driver io=...>: one of rules::io_modes
  bool iothread = false;                  // run the disk in its own QEMU iothread
  IotuneOptions iotune;                   // <iotune>: throttling (none by default)
  bool operator==(const VirtioBlkOptions&) const = default;
};

struct MachineOptions {
  int vcpus = 1;
  int memory_mib = 512;
  std::vector<int> vcpu_pins;             // optional host CPU per vCPU (empty: no pinning)
  bool operator==(const MachineOptions&) const = default;
};

}  // namespace abvm
