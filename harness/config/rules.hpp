#pragma once
// The bounds and choice lists of the guest machine and its virtio-blk disk, declared once. The
// key table (config/keys.cpp) shows them in `abvm config keys` and the loader enforces them
// through it; guest/domain_xml.cpp checks every DomainSpec against the same values, so a spec
// the loader accepts is one the domain XML accepts, and the other way round.
// tests/guest_domain_xml_rules_test.cpp fails when the two drift apart.
//
// Each bound is what QEMU/libvirt accept for the machine abvm builds (x86_64 'pc', virtio-blk),
// or a sanity limit where they would accept more; the comments say which.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/device.hpp"

namespace abvm::rules {

struct IntBounds {
  std::int64_t min = 0;
  std::int64_t max = 0;
  constexpr bool contains(std::int64_t x) const { return x >= min && x <= max; }
};

// QEMU's 'pc' (i440fx) machine supports at most 255 vCPUs; more need q35 with an IOMMU for
// interrupt remapping, which abvm does not build.
inline constexpr IntBounds vcpus{1, 255};

// The guest holds the kernel, abvm's initramfs (unpacked into its RAM) and the workload's page
// cache: 128 MiB is the least the loader has always asked for (libvirt itself would start a
// smaller guest that then fails to boot). Above 256 GiB is far more likely a typo than a plan.
inline constexpr IntBounds memory_mib{128, 262144};

// A host CPU number in <vcpupin cpuset=...>; older libvirt refuses numbers past its cpumask
// length, newer ones allow more: 4095 covers any host abvm is likely to run on.
inline constexpr IntBounds host_cpu{0, 4095};

// virtio-blk num-queues: QEMU needs at least one and allows up to VIRTIO_QUEUE_MAX (1024).
inline constexpr IntBounds virtqueues{1, 1024};

// virtio-blk queue-size: QEMU refuses sizes <= 2 (seg-max is queue-size - 2) and above
// VIRTQUEUE_MAX_SIZE (1024), and wants a power of two.
inline constexpr IntBounds queue_size{4, 1024};
constexpr bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// libvirt's <driver cache=...> and <driver io=...> values abvm offers.
inline constexpr std::array<std::string_view, 5> cache_modes = {"none", "writethrough", "writeback", "directsync",
                                                                 "unsafe"};
inline constexpr std::array<std::string_view, 3> io_modes = {"native", "threads", "io_uring"};

// QEMU's native AIO opens the image with O_DIRECT, so it refuses io=native with a cache mode that
// goes through the host page cache.
constexpr bool io_allowed_with_cache(std::string_view io, std::string_view cache) {
  return io != "native" || cache == "none" || cache == "directsync";
}

// <iotune> values. libvirt reads 0 as "no limit", so every value starts at 1 (leave a key out for
// no limit). QEMU (THROTTLE_VALUE_MAX, util/throttle.c) and libvirt (QEMU_BLOCK_IOTUNE_MAX) take
// rates up to 1e15; abvm takes request rates up to that, and byte rates and sizes up to 1 TiB, a
// sanity limit: a cap of 1 TiB/s throttles no disk. QEMU takes a burst length up to UINT_MAX s.
inline constexpr std::int64_t iotune_value_max = 1'000'000'000'000'000;
inline constexpr IntBounds iotune_requests{1, iotune_value_max};
inline constexpr IntBounds iotune_bytes{1, std::int64_t{1} << 40};
inline constexpr IntBounds iotune_seconds{1, 4'294'967'295};

constexpr IntBounds iotune_bounds(IotuneUnit unit) {
  switch (unit) {
    case IotuneUnit::requests_per_second: return iotune_requests;
    case IotuneUnit::seconds: return iotune_seconds;
    case IotuneUnit::bytes_per_second:
    case IotuneUnit::bytes: break;
  }
  return iotune_bytes;
}

// The first combination of <iotune> values that libvirt or QEMU refuses (libvirt's schema and
// virDomainDiskDefIotuneParse, QEMU's throttle_is_valid), checked in this order:
//   total_and_one_way   total_X with read_X or write_X (X: bytes_sec, iops_sec, their _max and
//                       _max_length): libvirt's schema takes one or the other
//   max_without_rate    Y_max without Y: "bps_max/iops_max require corresponding bps/iops values"
//   max_below_rate      Y_max < Y: "bps_max/iops_max cannot be lower than bps/iops"
//   length_without_max  Y_max_length without Y_max: "burst length set without burst rate" (QEMU
//                       lets a length of 1 pass, which means nothing: abvm refuses it too)
//   burst_too_large     Y_max * Y_max_length > 1e15: "burst length too high for this burst rate"
//   size_without_iops   size_iops_sec without an iops limit: "iops size requires an iops value"
// `key` is the value at fault, `other` the one it clashes with or needs (for size_without_iops:
// total_iops_sec, though read_iops_sec or write_iops_sec would do).
struct IotuneConflict {
  enum class Kind { total_and_one_way, max_without_rate, max_below_rate, length_without_max, burst_too_large,
                    size_without_iops };
  Kind kind;
  std::string_view key;
  std::string_view other;
};

inline std::optional<std::uint64_t> iotune_value(const IotuneOptions& t, std::string_view name) {
  for (const IotuneField& f : kIotuneFields) {
    if (f.name == name) return t.*f.member;
  }
  return std::nullopt;
}

inline std::optional<IotuneConflict> iotune_conflict(const IotuneOptions& t) {
  using K = IotuneConflict::Kind;
  // The names below are kIotuneFields' own: string_views into static storage.
  static constexpr std::array<std::array<std::string_view, 3>, 6> ways = {{
      {"total_bytes_sec", "read_bytes_sec", "write_bytes_sec"},
      {"total_iops_sec", "read_iops_sec", "write_iops_sec"},
      {"total_bytes_sec_max", "read_bytes_sec_max", "write_bytes_sec_max"},
      {"total_iops_sec_max", "read_iops_sec_max", "write_iops_sec_max"},
      {"total_bytes_sec_max_length", "read_bytes_sec_max_length", "write_bytes_sec_max_length"},
      {"total_iops_sec_max_length", "read_iops_sec_max_length", "write_iops_sec_max_length"},
  }};
  for (const auto& w : ways) {
    if (!iotune_value(t, w[0])) continue;
    for (std::size_t i = 1; i < 3; ++i) {
      if (iotune_value(t, w[i])) return IotuneConflict{K::total_and_one_way, w[i], w[0]};
    }
  }
  // rate, its _max, its _max_length
  static constexpr std::array<std::array<std::string_view, 3>, 6> buckets = {{
      {"total_bytes_sec", "total_bytes_sec_max", "total_bytes_sec_max_length"},
      {"read_bytes_sec", "read_bytes_sec_max", "read_bytes_sec_max_length"},
      {"write_bytes_sec", "write_bytes_sec_max", "write_bytes_sec_max_length"},
      {"total_iops_sec", "total_iops_sec_max", "total_iops_sec_max_length"},
      {"read_iops_sec", "read_iops_sec_max", "read_iops_sec_max_length"},
      {"write_iops_sec", "write_iops_sec_max", "write_iops_sec_max_length"},
  }};
  for (const auto& b : buckets) {
    const auto rate = iotune_value(t, b[0]), max = iotune_value(t, b[1]), length = iotune_value(t, b[2]);
    if (max && !rate) return IotuneConflict{K::max_without_rate, b[1], b[0]};
    if (max && *max < *rate) return IotuneConflict{K::max_below_rate, b[1], b[0]};
    if (length && !max) return IotuneConflict{K::length_without_max, b[2], b[1]};
    // max * length > limit, without overflow (both are at least 1; QEMU's own test).
    if (length && *length > static_cast<std::uint64_t>(iotune_value_max) / *max) {
      return IotuneConflict{K::burst_too_large, b[2], b[1]};
    }
  }
  if (t.size_iops_sec && !t.total_iops_sec && !t.read_iops_sec && !t.write_iops_sec) {
    return IotuneConflict{K::size_without_iops, "size_iops_sec", "total_iops_sec"};
  }
  return std::nullopt;
}

// A host CPU set as libvirt's cpuset attribute takes it, restricted to what abvm needs: CPU
// numbers (host_cpu bounds) and ascending ranges, comma-separated ("0", "2-3", "0,2-3").
constexpr bool valid_cpu_set(std::string_view text) {
  if (text.empty()) return false;
  std::int64_t first = -1, number = -1;
  bool in_range = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c >= '0' && c <= '9') {
      number = (number < 0 ? 0 : number * 10) + (c - '0');
      if (!host_cpu.contains(number)) return false;
    } else if (c == '-' && number >= 0 && !in_range) {
      first = number;
      number = -1;
      in_range = true;
    } else if (c == ',' && number >= 0 && (!in_range || first <= number)) {
      number = -1;
      in_range = false;
    } else {
      return false;
    }
  }
  return true;
}

// The CPUs a valid cpu set names, ascending, each once ("0,2-3" -> 0, 2, 3).
inline std::vector<std::int64_t> cpu_set_members(std::string_view text) {
  std::vector<std::int64_t> out;
  std::int64_t first = -1, number = -1;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c >= '0' && c <= '9') {
      number = (number < 0 ? 0 : number * 10) + (c - '0');
    } else if (c == '-') {
      first = number;
      number = -1;
    } else {
      for (std::int64_t k = first < 0 ? number : first; k <= number; ++k) out.push_back(k);
      first = number = -1;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---- Workloads: what dd and fio can open, and the flags abvm gives dd by itself. ----

// The guest agent puts /dev/<the scratch disk> in place of this anywhere in a tool's argument.
inline constexpr std::string_view scratch_word = "@scratch";

inline bool names_scratch(std::string_view path) { return path.find(scratch_word) != std::string_view::npos; }

// Character devices that refuse O_DIRECT: open() fails with EINVAL (they have no direct I/O), so
// a dd or fio with direct I/O on them fails in every run ("dd: failed to open '/dev/null':
// Invalid argument").
inline constexpr std::array<std::string_view, 5> no_direct_devices = {"/dev/null", "/dev/zero", "/dev/full",
                                                                       "/dev/random", "/dev/urandom"};

inline bool refuses_direct(std::string_view path) {
  return std::find(no_direct_devices.begin(), no_direct_devices.end(), path) != no_direct_devices.end();
}

// dd's iflag (for if=) or oflag (for of=) when the experiment does not set it: O_DIRECT where dd
// reads or writes the scratch disk, so that the page cache is not measured, and nothing elsewhere
// (/dev/zero, /dev/null and pipes cannot be opened with O_DIRECT).
inline std::vector<std::string> dd_default_flags(std::string_view path) {
  if (names_scratch(path)) return {"direct"};
  return {};
}

// fio ioengines that keep one request in flight whatever iodepth says (fio's HOWTO: "increasing
// iodepth beyond 1 will not affect synchronous ioengines").
inline constexpr std::array<std::string_view, 3> synchronous_ioengines = {"psync", "sync", "pvsync2"};

}  // namespace abvm::rules
