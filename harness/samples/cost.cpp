#include "samples/cost.hpp"

namespace abvm {

bool disk_saw_too_little(const RunCost& cost) {
  if (!cost.host || cost.tool_bytes == 0) return false;
  const double expected = static_cast<double>(cost.tool_bytes) * static_cast<double>(cost.tool_runs);
  return static_cast<double>(cost.host->disk_bytes) < kDiskBytesShare * expected;
}

bool is_cost_metric(std::string_view metric) {
  for (std::string_view suffix : {".guest_cpu_per_gib", ".host_cpu_per_gib", ".host_cpu_per_req"}) {
    if (metric.ends_with(suffix) && metric.size() > suffix.size()) return true;
  }
  return false;
}

}  // namespace abvm
