// libFuzzer entry for fuzz_bisect (see targets.hpp for the contract and the invariants).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  abvm::fuzz::fuzz_bisect(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
