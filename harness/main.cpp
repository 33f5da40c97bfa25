// abvm: a thin main over the library; cli/ owns parsing, the one catch and the exit codes.
#include <cstdlib>
#include <new>

#include "cli/cli.hpp"
#include "core/huge_pages.hpp"

int main(int argc, char** argv) { return abvm::cli::main(argc, argv); }

// The binary's operator new puts large blocks on huge pages (core/huge_pages.hpp). The other forms
// (new[], nothrow, array deletes) forward to these in libstdc++.
#if ABVM_HUGE_PAGE_NEW
void* operator new(std::size_t n) {
  if (void* block = abvm::allocate_large_on_huge_pages(n)) return block;
  throw std::bad_alloc();
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
#endif
