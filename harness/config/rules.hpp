#pragma once
// The bounds and choice lists of the guest machine and its virtio-blk disk, declared once. The
// key table (config/keys.cpp) shows them in `abvm config keys` and the loader enforces them
// through it; guest/domain_xml.cpp checks every DomainSpec against the same values, so a spec
// the loader accepts is one the domain XML accepts, and the other way round.
// tests/guest_domain_xml_rules_test.cpp fails when the two drift apart.
//
// Each bound is what QEMU/libvirt accept for the machine abvm builds (x86_64 'pc', virtio-blk),
// or a sanity limit where they would accept more; the comments say which.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>
#include <algorithm>

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

}  // namespace abvm::rules
