#pragma once
// Simulated data like the seed's dd runs, shared by the calibration programs: about 70 % of runs
// near 4.5 GB/s with ~8 % spread, 30 % in a slow mode near 1.4 GB/s with ~15 % spread, drawn
// independently per run.
#include <cmath>
#include <random>

#include "samples/sample.hpp"

namespace abvm::bench {

struct Bimodal {
  double fast_fraction = 0.7;
  double fast_median = 4.5e9, fast_sigma = 0.08;
  double slow_median = 1.4e9, slow_sigma = 0.15;
};

// Own transforms rather than std distributions so the figures are the same on every platform.
inline double uniform(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }
inline double standard_normal(std::mt19937_64& rng) {
  return std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
}

// The first n runs per side of a simulated experiment: what a look at that point sees.
inline SampleSet first_runs(const SampleSet& all, std::size_t n) {
  SampleSet s = all;
  for (auto& m : s.metrics) {
    m.a.resize(n);
    m.b.resize(n);
  }
  return s;
}

inline double draw(std::mt19937_64& rng, const Bimodal& d) {
  // Own transforms rather than std distributions so the figures are the same on every platform.
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  double u1 = uniform(), u2 = uniform();
  double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  bool fast = uniform() < d.fast_fraction;
  return fast ? d.fast_median * std::exp(d.fast_sigma * z) : d.slow_median * std::exp(d.slow_sigma * z);
}

// n runs per side, B's scaled by b_factor, in alternating order.
inline SampleSet simulate(std::mt19937_64& rng, const Bimodal& d, std::size_t n, double b_factor) {
  MetricSamples m;
  m.name = "dd.bandwidth";
  m.unit = "B/s";
  m.better = Better::higher;
  for (std::size_t i = 0; i < n; ++i) {
    m.a.push_back({.value = draw(rng, d), .order = static_cast<std::int64_t>(2 * i)});
    m.b.push_back({.value = draw(rng, d) * b_factor, .order = static_cast<std::int64_t>(2 * i + 1)});
  }
  SampleSet s;
  s.metrics.push_back(std::move(m));
  return s;
}

}  // namespace abvm::bench
