#pragma once
// Large blocks on transparent huge pages. `abvm analyze` of 2 x 1M values touches about 280 MB of
// fresh memory; in 4 KiB pages that was 72,800 page faults, a third of its 1.5 s on this VM (each
// fault traps to the hypervisor: README, the benchmark table). Debian's kernel gives huge pages only
// to memory that asks for them (transparent_hugepage/enabled = madvise), so the abvm binary's
// operator new (harness/main.cpp) asks for them on every large block.
#include <cstddef>

// 1 where the abvm binary replaces operator new with allocate_large_on_huge_pages: not under
// AddressSanitizer, whose own operator new checks that new and delete match.
#if defined(__SANITIZE_ADDRESS__)
#define ABVM_HUGE_PAGE_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ABVM_HUGE_PAGE_NEW 0
#endif
#endif
#ifndef ABVM_HUGE_PAGE_NEW
#define ABVM_HUGE_PAGE_NEW 1
#endif

namespace abvm {

// A huge page's size (x86-64's PMD page) and the smallest block that is advised: one of at least
// two huge pages always holds a whole aligned one, which is all the kernel can back with one.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugePageAdviceMinBytes = 2 * kHugePageBytes;

// malloc(n) (n = 0 allocates one byte); a block of at least kHugePageAdviceMinBytes is advised
// MADV_HUGEPAGE over the whole huge pages inside it, and only those, so that no neighbouring
// block's memory grows. Returns nullptr when malloc does; a failed advice only costs speed.
void* allocate_large_on_huge_pages(std::size_t n) noexcept;

// Whether this kernel gives huge pages to memory that asks for them: THP built in and its mode not
// "[never]" (/sys/kernel/mm/transparent_hugepage/enabled).
bool huge_pages_on_request();

}  // namespace abvm
