#pragma once
// One measured run's output, read as its workload's tool wrote it: one sample parser per workload
// kind (dd: samples/dd, fio: samples/fio), chosen by the workload's kind (config/workload.hpp
// visit_kind). The journal sink (run/journal_sink) turns each run of a trial into a journal line
// with it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/workload.hpp"
#include "samples/journal.hpp"

namespace abvm {

struct RunMetrics {
  std::vector<JournalMetric> metrics;
  // Not empty: the tool reported that the run failed (fio's job error), in its words; no metrics.
  std::string failure;
  // What the tool says the run moved and, where it says so (fio), the CPU its jobs took and their
  // context switches: the guest's side of the run's cost (samples/cost.hpp).
  std::uint64_t bytes = 0;
  std::optional<double> cpu_seconds;
  std::optional<std::uint64_t> ctx;
  bool per_request = false;  // its requests are the unit of work (fio): host_cpu_per_req applies
};

// The metrics of one run of `workload` (named `workload_name` in the metrics' names) from the
// tool's output. Throws Error "source...: ..." when the output is not one run of the tool.
RunMetrics parse_run_output(const WorkloadSpec& workload, std::string_view workload_name, std::string_view output,
                            const std::string& source);

}  // namespace abvm
