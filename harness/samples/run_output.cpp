#include "samples/run_output.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "samples/dd.hpp"
#include "samples/fio.hpp"

namespace abvm {

namespace {

// ---- One sample parser per workload kind. ----

RunMetrics dd_run_metrics(std::string_view workload_name, std::string_view output, const std::string& source) {
  const auto runs = parse_dd(output, source);
  if (runs.size() != 1) throw Error(fmt::format("{}: {} dd summaries, expected 1", source, runs.size()));
  return {.metrics = dd_metrics(workload_name, runs[0]), .bytes = runs[0].bytes};
}

RunMetrics fio_run_metrics(std::string_view workload_name, std::string_view output, const std::string& source) {
  const auto docs = parse_fio(output, source);
  if (docs.size() != 1) throw Error(fmt::format("{}: {} fio documents, expected 1", source, docs.size()));
  RunMetrics out;
  // One failed job fails the run; the last one's error is the one told.
  for (const auto& job : docs[0].jobs) {
    if (job.error != 0) out.failure = describe_fio_error(job);
  }
  if (!out.failure.empty()) return out;
  out.metrics = fio_metrics(workload_name, docs[0]);
  out.per_request = true;
  // The run's CPU: every job's, or none when one job's is not reported (never a part as the whole).
  double cpu = 0;
  std::uint64_t ctx = 0;
  bool every_job = true;
  for (const auto& job : docs[0].jobs) {
    for (const auto& d : job.directions) out.bytes += d.io_bytes;
    if (!job.cpu) every_job = false;
    else cpu += job.cpu->seconds(), ctx += job.cpu->ctx;
  }
  if (every_job) out.cpu_seconds = cpu, out.ctx = ctx;
  return out;
}

}  // namespace

RunMetrics parse_run_output(const WorkloadSpec& workload, std::string_view workload_name, std::string_view output,
                            const std::string& source) {
  return visit_kind(overloaded{[&](const DdWorkload&) { return dd_run_metrics(workload_name, output, source); },
                               [&](const FioWorkload&) { return fio_run_metrics(workload_name, output, source); }},
                    workload);
}

}  // namespace abvm
