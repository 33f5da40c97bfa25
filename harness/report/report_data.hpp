#pragma once
// The one strict reader of each file a report comes from: the JSON report (analysis.json,
// report/schema.json), read back to the report model every writer takes (verdict/report_model.hpp:
// the same value the run had in memory when it wrote the file), environment.json and kernels.json.
//
// Every field the report uses is required. A field that is missing or of the wrong type is an
// Error naming the file and the JSON path, with what to do:
//   "r/analysis.json: metrics[1].effect.ci_low is missing; regenerate it with 'abvm analyze ...'"
// never a silent "", 0 or NaN. A null where the schema allows one (a number that was not finite
// when written) reads as NaN; fields that really may be absent are optional here too.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"
#include "samples/sample.hpp"
#include "verdict/report_model.hpp"

namespace abvm {

// environment.json (run/environment.hpp writes it).
struct HostEnvironment {
  struct Kernel {
    std::string sysname, release, machine;
  };
  std::string hostname;
  std::optional<Kernel> host_kernel;               // absent when uname() failed
  std::string cpu_model;                           // "" when /proc/cpuinfo names none
  std::uint64_t cpus_online = 0;
  std::optional<std::string> cpufreq_governor;     // null: the host has no cpufreq (most VMs)
  std::optional<std::vector<double>> load_average; // absent when /proc/loadavg was unreadable
  std::string libvirt_uri, libvirt_version, qemu_version;
  Accelerator accelerator = Accelerator::kvm;
  std::string accelerator_reason;
};

// What the report shows of one side's kernel from kernels.json (run/prepare.hpp writes it). A
// field the entry lacks is absent (a preparer may record less, as the tests' do).
struct SideKernel {
  std::optional<std::string> release;   // the built kernel's release (uname -r)
  std::optional<std::string> cmdline;   // the guest's whole kernel command line
};

// Where the JSON came from, for messages: `file` names it, `advice` says what to do about a
// damaged one ("regenerate it with 'abvm analyze DIR --json FILE'").
struct JsonOrigin {
  std::string file;
  std::string advice;
};

// Throw Error "<file>: <path> is missing; <advice>" (or "... is "x", not a number; <advice>").
ReportModel read_report_data(const nlohmann::json& report, const JsonOrigin& origin);
// One element of the report's "metrics"; `path` is its place in the file, e.g. "metrics[2]".
ReportMetric read_report_metric(const nlohmann::json& metric, const JsonOrigin& origin, std::string path);
// One element of the report's "missing"; `path` is its place in the file, e.g. "missing[0]".
MissingData read_report_missing(const nlohmann::json& missing, const JsonOrigin& origin, std::string path);
HostEnvironment read_host_environment(const nlohmann::json& environment, const JsonOrigin& origin);
// kernels.json: each side's kernel, keyed by side ("A", "B"); a side the file does not name is
// absent. A file that is not an object, or a field of the wrong type, is an Error.
std::map<Side, SideKernel> read_side_kernels(const nlohmann::json& kernels, const JsonOrigin& origin);

}  // namespace abvm
