// What the analysis finds about the experiment as a whole: sides that are not what it asks for,
// different hosts or accelerators, TCG, failed runs, nothing to compare, workloads never measured.
#include "verdict/analysis_steps.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "samples/cost.hpp"

namespace abvm::analysis_steps {
namespace {

WorkloadMissing workload_missing(const MissingData& d) {
  return {.workload = d.workload,
          .metrics = d.metrics,
          .runs_a = d.runs_a,
          .runs_b = d.runs_b,
          .first_failure = d.first_failure,
          .reported = d.reported};
}

}  // namespace

// Experiment-wide findings: hosts, accelerators, failed runs, missing workloads.
void record_experiment_findings(Analysis& out, const SampleSet& samples) {
  auto as_set = [](const auto& v) { return std::set<typename std::decay_t<decltype(v)>::value_type>(v.begin(), v.end()); };
  std::size_t mismatched = 0;
  for (const auto& f : samples.failures) mismatched += f.outcome == "mismatch";
  // Before anything else: the comparison is not the one the experiment asked for.
  if (mismatched > 0) out.findings.push_back(SidesMismatch{.runs = mismatched});
  if (!samples.context_a.hosts.empty() && !samples.context_b.hosts.empty() &&
      as_set(samples.context_a.hosts) != as_set(samples.context_b.hosts)) {
    out.findings.push_back(DifferentHosts{});
  }
  if (!samples.context_a.accelerators.empty() && !samples.context_b.accelerators.empty() &&
      as_set(samples.context_a.accelerators) != as_set(samples.context_b.accelerators)) {
    out.findings.push_back(DifferentAccelerators{});
  }
  for (const auto* ctx : {&samples.context_a, &samples.context_b}) {
    if (std::find(ctx->accelerators.begin(), ctx->accelerators.end(), Accelerator::tcg) != ctx->accelerators.end()) {
      out.findings.push_back(RanUnderTcg{});
      if (std::any_of(samples.metrics.begin(), samples.metrics.end(), [](const MetricSamples& m) {
            return is_cost_metric(m.name) && m.name.find(".host_cpu_") != std::string::npos;
          })) {
        out.findings.push_back(HostCostUnderTcg{});
      }
      break;
    }
  }
  if (out.failed_a + out.failed_b > 0) {
    out.findings.push_back(RunsFailed{.a = out.failed_a, .b = out.failed_b});
    std::size_t lo = std::min(out.failed_a, out.failed_b), hi = std::max(out.failed_a, out.failed_b);
    if (hi >= 3 && hi >= 3 * std::max<std::size_t>(lo, 1)) {
      out.findings.push_back(OneSideFailsMore{.side = out.failed_a > out.failed_b ? Side::a : Side::b});
    }
  }
  if (out.metrics.empty()) out.findings.push_back(NothingToCompare{});
  // Built in place: GCC 12 takes a moved temporary variant for uninitialised (-Wmaybe-uninitialized).
  for (const MissingData& d : samples.missing) {
    out.findings.emplace_back(std::in_place_type<WorkloadMissing>, workload_missing(d));
  }
}

}  // namespace abvm::analysis_steps
