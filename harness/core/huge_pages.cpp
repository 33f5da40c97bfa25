#include "core/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace abvm {

void* allocate_large_on_huge_pages(std::size_t n) noexcept {
  void* block = std::malloc(n == 0 ? 1 : n);
  if (block == nullptr || n < kHugePageAdviceMinBytes) return block;
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + n) & ~(kHugePageBytes - 1);
  // Advice on a range is a hint: a kernel without THP refuses it (EINVAL), and the block is still
  // good memory.
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  return block;
}

bool huge_pages_on_request() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(in, modes) && modes.find("[never]") == std::string::npos;
}

}  // namespace abvm
