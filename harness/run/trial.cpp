#include "run/trial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "config/workload.hpp"
#include "samples/tool_message.hpp"

namespace abvm {
namespace {

// The line holding `pos`, without its line break, for details.
std::string line_at(std::string_view text, std::size_t pos) {
  const std::size_t begin = text.rfind('\n', pos) == std::string_view::npos ? 0 : text.rfind('\n', pos) + 1;
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string line(text.substr(begin, end - begin));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string last_line(std::string_view console) {
  std::size_t end = console.size();
  while (end > 0 && (console[end - 1] == '\n' || console[end - 1] == '\r')) --end;
  if (end == 0) return "";
  return line_at(console, end - 1);
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// Every expected run carries the trial's outcome: the trial as a whole failed.
void fail_all(TrialResult& result, const std::vector<TrialWorkload>& workloads, Outcome outcome, std::string detail) {
  result.outcome = outcome;
  result.detail = std::move(detail);
  result.runs.clear();
  for (const auto& w : workloads) {
    for (int i = 0; i < w.repetitions; ++i) {
      result.runs.push_back({.workload = w.workload, .side = w.side, .disk_serial = w.disk_serial,
                             .report_name = w.report_name, .index = i, .outcome = outcome, .detail = result.detail});
    }
  }
}

// What the tool wrote about its failure, in its own words (its error lines; a kind is its tool's name).
std::string tool_said(std::string_view output) {
  for (const std::string& tool : workload_kind_names()) {
    if (std::string said = tool_message(output, tool); !said.empty()) return said;
  }
  return "";
}

}  // namespace

std::string side_workload_name(std::string_view workload, Side side) {
  return fmt::format("{}.{}", workload, to_string(side));
}

void classify_trial(const GuestOutcome& guest, const GuestReport& report, const std::vector<TrialWorkload>& workloads,
                    TrialResult& result) {
  result.seconds = guest.seconds;
  if (guest.end == GuestOutcome::End::infra_error) {
    fail_all(result, workloads, Outcome::infra_error,
             guest.detail.empty() ? "the hypervisor could not run the guest" : guest.detail);
    return;
  }
  // Its records cannot be trusted with a middle left out, and a guest that floods its console
  // is not one whose numbers count.
  if (guest.console_cut) {
    fail_all(result, workloads, Outcome::invalid_output,
             fmt::format("the console exceeded its limit: {}; console.log keeps its head and its tail", guest.detail));
    return;
  }
  // A panic explains a timeout or a missing end record, so it is checked first.
  if (const auto at = find_kernel_panic(guest.console); at != std::string::npos) {
    fail_all(result, workloads, Outcome::panic, line_at(guest.console, at));
    return;
  }
  if (guest.end == GuestOutcome::End::crashed) {
    fail_all(result, workloads, Outcome::panic,
             fmt::format("the guest crashed{}", guest.detail.empty() ? "" : ": " + guest.detail));
    return;
  }
  if (guest.end == GuestOutcome::End::timeout) {
    const std::string last = last_line(guest.console);
    fail_all(result, workloads, Outcome::timeout,
             fmt::format("no end record after {:.1f} s; the guest was destroyed{}", guest.seconds,
                         last.empty() ? " (empty console)" : "; last console line: " + last));
    return;
  }
  // finished or powered_off: the records decide.
  std::vector<std::string> why;
  if (!report.begun || !report.ended || !report.problems.empty()) why = report.problems;
  if (why.empty() && !report.ended) why.push_back("no end record");
  if (report.begun && report.trial_id != result.trial.id) {
    why.push_back(fmt::format("records are of trial '{}', not '{}'", report.trial_id, result.trial.id));
  }
  if (!why.empty()) {
    fail_all(result, workloads, Outcome::invalid_output, join(why, "; "));
    return;
  }
  if (!report.agent_errors.empty()) {
    // The guest could not set up what the job asked for: its runs are not comparable.
    fail_all(result, workloads, Outcome::workload_failed, "guest agent: " + join(report.agent_errors, "; "));
    return;
  }
  result.outcome = Outcome::ok;
  result.detail.clear();
  result.runs.clear();
  std::vector<std::string> missing;
  std::vector<std::pair<std::size_t, RunResult>> ran;  // by where the guest reported it
  for (const auto& w : workloads) {
    for (int i = 0; i < w.repetitions; ++i) {
      const GuestRun* found = nullptr;
      for (const auto& r : report.runs) {
        if (r.workload == w.report_name && r.index == i && !r.warmup) found = &r;
      }
      if (found == nullptr) {
        missing.push_back(fmt::format("{} #{}", w.report_name, i));
        continue;
      }
      RunResult run{.workload = w.workload, .side = w.side, .disk_serial = w.disk_serial, .report_name = w.report_name,
                    .index = i, .exit_status = found->exit_status, .output = found->output,
                    .guest_cpu = found->cpu};
      // The filler's last run is stopped early: the runs it began, less that one, and the measured one.
      if (found->window) run.window_runs = static_cast<std::uint64_t>(std::max(1, found->window->fills));
      if (found->exit_status != 0) {
        run.outcome = Outcome::workload_failed;
        run.detail = fmt::format("{} run {} exited with status {}", w.report_name, i, found->exit_status);
        if (const std::string said = tool_said(found->output); !said.empty()) run.detail += ": " + said;
        if (result.outcome == Outcome::ok) {
          result.outcome = Outcome::workload_failed;
          result.detail = run.detail;
        }
      }
      ran.emplace_back(static_cast<std::size_t>(found - report.runs.data()), std::move(run));
    }
  }
  // In the order the guest ran them (one guest measuring both sides alternates them).
  std::stable_sort(ran.begin(), ran.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [at, run] : ran) result.runs.push_back(std::move(run));
  if (!missing.empty()) {
    fail_all(result, workloads, Outcome::invalid_output,
             fmt::format("the guest ended without reporting run{} {}", missing.size() > 1 ? "s" : "",
                         join(missing, ", ")));
  }
}

std::map<std::string, std::string> guest_facts(const GuestReport& report, const std::string& disk) {
  std::map<std::string, std::string> facts{{"kernel_release", report.kernel_release},
                                           {"kernel_version", report.kernel_version},
                                           {"cmdline", report.cmdline}};
  if (const auto own = report.disk_features.find(disk); own != report.disk_features.end()) {
    facts["virtio_f_access_platform"] = (own->second >> kVirtioFAccessPlatform) & 1 ? "negotiated" : "not negotiated";
  } else if (report.blk_features) {
    facts["virtio_f_access_platform"] = report.access_platform ? "negotiated" : "not negotiated";
  }
  const bool dma = std::any_of(report.dmesg.begin(), report.dmesg.end(),
                               [](const std::string& l) { return l.find(kDmaApiInUse) != std::string::npos; });
  facts["dma_api_in_use"] = dma ? "reported" : "not reported";
  return facts;
}

std::vector<std::string> side_mismatches(const GuestReport& report, const SideExpectation& expect,
                                         const std::string& disk) {
  std::vector<std::string> out;
  const auto facts = guest_facts(report, disk);
  const auto differs = [&](const char* what, const std::string& got, const std::string& want) {
    if (!want.empty() && got != want) out.push_back(fmt::format("{} is '{}', not the side's '{}'", what, got, want));
  };
  differs("kernel release", report.kernel_release, expect.release);
  // The identity's version is "<release> (<builder>) <uname -v>": the build shows in its tail.
  if (!expect.version.empty() &&
      (report.kernel_version.empty() || !expect.version.ends_with(" " + report.kernel_version))) {
    out.push_back(fmt::format("kernel build is '{}', not the side's '{}'", report.kernel_version, expect.version));
  }
  differs("kernel command line", report.cmdline, expect.cmdline);
  if (const auto ap = facts.find("virtio_f_access_platform"); expect.access_platform && ap != facts.end()) {
    const bool negotiated = ap->second == "negotiated";
    if (negotiated != *expect.access_platform) {
      // Name the disk when the guest has more than one (one guest measuring both sides).
      const bool name_disk = report.disk_features.size() > 1 && !disk.empty();
      out.push_back(fmt::format("VIRTIO_F_ACCESS_PLATFORM was {}negotiated{}, but the side's device.iommu_platform "
                                "is {}", negotiated ? "" : "not ", name_disk ? " on disk " + disk : "",
                                *expect.access_platform ? "true" : "false"));
    }
  }
  if (expect.dma_api_reported && (facts.at("dma_api_in_use") == "reported") != *expect.dma_api_reported) {
    out.push_back(*expect.dma_api_reported
                      ? fmt::format("the kernel did not print '{}', which the side's patched kernel must", kDmaApiInUse)
                      : fmt::format("the kernel printed '{}', which the side's kernel cannot", kDmaApiInUse));
  }
  return out;
}

void check_sides(const std::function<const SideExpectation&(Side)>& expect, const std::vector<TrialWorkload>& workloads,
                 TrialResult& result) {
  if (result.outcome != Outcome::ok && result.outcome != Outcome::workload_failed) return;
  std::vector<std::string> why_all;
  std::vector<std::pair<Side, std::string>> checked;
  for (const auto& w : workloads) {
    const std::pair<Side, std::string> key{w.side, w.disk_serial};
    if (std::find(checked.begin(), checked.end(), key) != checked.end()) continue;
    checked.push_back(key);
    const auto why = side_mismatches(result.report, expect(w.side), w.disk_serial);
    if (!why.empty()) why_all.push_back(fmt::format("side {} booted something else: {}", to_string(w.side), join(why, "; ")));
  }
  if (!why_all.empty()) fail_all(result, workloads, Outcome::mismatch, join(why_all, "; "));
}

}  // namespace abvm
