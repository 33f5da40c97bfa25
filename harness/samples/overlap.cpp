#include "samples/overlap.hpp"

#include <algorithm>

namespace abvm {

double overlap_share(const RunTiming& run, const RunTiming& partner) {
  const double from = std::max(run.start, partner.start);
  const double to = std::min(run.end, partner.load_end);
  const double length = run.end - run.start;
  if (!(length > 0)) return run.start >= partner.start && run.start <= partner.load_end ? 1.0 : 0.0;
  return std::clamp((to - from) / length, 0.0, 1.0);
}

std::pair<RunOverlap, RunOverlap> pair_overlap(const RunTiming& first, const std::string& first_trial,
                                               const RunTiming& second, const std::string& second_trial) {
  const double a = overlap_share(first, second), b = overlap_share(second, first);
  const double pair = std::min(a, b);
  return {RunOverlap{.partner = second_trial, .run = a, .pair = pair},
          RunOverlap{.partner = first_trial, .run = b, .pair = pair}};
}

}  // namespace abvm
