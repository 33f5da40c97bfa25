#include "samples/overlap.hpp"

#include <algorithm>

namespace abvm {

namespace {

double overlap(double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); }

}  // namespace

double overlap_share(const RunTiming& run, const RunTiming& partner) {
  // The partner's load: its run, then its filler (from `fill`, or straight on) to load_end; the
  // two never overlap, so their overlaps with the run add up.
  const double fill = partner.fill.value_or(partner.end);
  const double length = run.end - run.start;
  if (!(length > 0)) {
    const double t = run.start;
    return (t >= partner.start && t <= partner.end) || (t >= fill && t <= partner.load_end && fill < partner.load_end)
               ? 1.0
               : 0.0;
  }
  const double loaded = overlap(run.start, run.end, partner.start, partner.end) +
                        overlap(run.start, run.end, std::max(fill, partner.end), partner.load_end);
  return std::clamp(loaded / length, 0.0, 1.0);
}

std::pair<RunOverlap, RunOverlap> pair_overlap(const RunTiming& first, const std::string& first_trial,
                                               const RunTiming& second, const std::string& second_trial) {
  const double a = overlap_share(first, second), b = overlap_share(second, first);
  const double pair = std::min(a, b);
  return {RunOverlap{.partner = second_trial, .run = a, .pair = pair},
          RunOverlap{.partner = first_trial, .run = b, .pair = pair}};
}

}  // namespace abvm
