#pragma once
// The defaults and allowed ranges of the decision settings (margin, confidence, bootstrap seed),
// declared once. They live in core/ because three stages that cannot see each other need them:
// config/ (the experiment keys analysis.*), verdict/ (AnalysisOptions, which `abvm analyze`
// fills without any experiment file) and cli/ (the --margin/--confidence/--seed flags).
#include <cstdint>

namespace abvm {

// An open interval: both ends are excluded (a margin of 0 or 1, a confidence of 1, mean nothing).
struct OpenRange {
  double low = 0;
  double high = 0;
  constexpr bool contains(double x) const { return x > low && x < high; }
};

// The smallest relative change that matters (0.05: 5 %).
inline constexpr double kDefaultMargin = 0.05;
inline constexpr OpenRange kMarginRange{0, 1};

// Family-wise confidence level of the intervals. Below 0.5 an "interval" would be less likely
// to hold the effect than not.
inline constexpr double kDefaultConfidence = 0.95;
inline constexpr OpenRange kConfidenceRange{0.5, 1};

// Seed of the bootstrap interval; fixed so that an analysis of the same data repeats exactly.
inline constexpr std::uint64_t kDefaultAnalysisSeed = 1;

}  // namespace abvm
