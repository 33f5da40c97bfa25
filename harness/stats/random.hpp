#pragma once
// A seeded random source whose output is the same on every platform and standard library.
//
// std::mt19937_64's output sequence is fixed by the C++ standard, but the <random> distributions
// (uniform_int_distribution, normal_distribution, ...) are implementation-defined: the same seed gives
// different numbers with libstdc++ and libc++. Every reduction from raw 64-bit words is therefore
// spelled out here, so a seed printed in a report reproduces the same resamples anywhere.
#include <cstdint>
#include <optional>
#include <random>

namespace abvm::stats {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  // The raw 64-bit word of std::mt19937_64.
  std::uint64_t next() { return engine_(); }

  // Uniform integer in [0, n); n must be > 0 (throws std::invalid_argument otherwise).
  // Unbiased by rejection: a word r is accepted only when r >= 2^64 mod n, which leaves a
  // multiple of n accepted words, so r mod n is exactly uniform (the OpenBSD arc4random_uniform rule).
  std::uint64_t below(std::uint64_t n);

  // Uniform double in [0, 1) with 53 random bits: (r >> 11) * 2^-53.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal by the Box-Muller transform; the second value of each pair is kept for the
  // next call. Uses only std::log, std::sqrt, std::cos, std::sin (correctly rounded or nearly
  // so on all mainstream libms).
  double normal();

 private:
  std::mt19937_64 engine_;
  std::optional<double> spare_;
};

}  // namespace abvm::stats
