// Large blocks on huge pages (core/huge_pages.hpp), in the kernel's own view of the advice:
// /proc/self/smaps (a mapping's VmFlags holds "hg" once MADV_HUGEPAGE is set on it). The abvm
// binary's use of it: cli_analyze_memory_test.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/files.hpp"
#include "core/huge_pages.hpp"
#include "environment_skip.hpp"

using abvm::kHugePageAdviceMinBytes;
using abvm::kHugePageBytes;

namespace {

// The VmFlags of the mapping in /proc/self/smaps that holds `address`: each mapping's block starts
// with its range ("from-to perms ...") and ends with its VmFlags line.
std::string vm_flags_at(std::uintptr_t address) {
  std::istringstream smaps(abvm::read_file("/proc/self/smaps"));
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind("VmFlags:", 0) == 0) {
      if (inside) return line;
      continue;
    }
    const std::string range = line.substr(0, line.find(' '));
    const auto dash = range.find('-');
    if (dash == std::string::npos || range.find(':') != std::string::npos) continue;
    const auto from = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto to = std::stoull(range.substr(dash + 1), nullptr, 16);
    inside = from <= address && address < to;
  }
  return "";
}

bool advised(std::uintptr_t address) { return vm_flags_at(address).find(" hg") != std::string::npos; }

}  // namespace

TEST(CoreHugePages, ABlockUnderTwoHugePagesIsNotAdvised) {
  if (!abvm::huge_pages_on_request()) ABVM_SKIP_WITHOUT("transparent huge pages are off on this kernel");
  // No block of this process was advised before it (ctest runs each test alone; it is also the first
  // of this file), so whatever holds it was not.
  const std::size_t n = kHugePageAdviceMinBytes - 4096;
  auto* block = static_cast<unsigned char*>(abvm::allocate_large_on_huge_pages(n));
  ASSERT_NE(block, nullptr);
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  for (std::uintptr_t a = begin; a < begin + n; a += kHugePageBytes / 2) EXPECT_FALSE(advised(a)) << vm_flags_at(a);
  std::free(block);
  void* empty = abvm::allocate_large_on_huge_pages(0);  // malloc(0) may be null: one byte is not
  EXPECT_NE(empty, nullptr);
  std::free(empty);
}

TEST(CoreHugePages, ALargeBlockIsAdvisedOverItsWholeHugePagesOnly) {
  if (!abvm::huge_pages_on_request()) ABVM_SKIP_WITHOUT("transparent huge pages are off on this kernel");
  const std::size_t n = 5 * kHugePageBytes + 12345;
  auto* block = static_cast<unsigned char*>(abvm::allocate_large_on_huge_pages(n));
  ASSERT_NE(block, nullptr);
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + n) & ~(kHugePageBytes - 1);
  ASSERT_GE(last - first, 4 * kHugePageBytes);
  EXPECT_TRUE(advised(first)) << vm_flags_at(first);
  EXPECT_TRUE(advised(last - 1)) << vm_flags_at(last - 1);
  // The part before the first whole huge page may share one with a neighbouring block.
  if (first != begin) {
    EXPECT_FALSE(advised(begin)) << vm_flags_at(begin);
  }
  if (last != begin + n) {
    EXPECT_FALSE(advised(last)) << vm_flags_at(last);
  }
  for (std::size_t i = 0; i < n; i += 4096) block[i] = static_cast<unsigned char>(i);  // good memory
  EXPECT_EQ(block[8192], static_cast<unsigned char>(8192));
  std::free(block);
}
