#pragma once
// An experiment file (TOML) as an immutable value. The loader is strict: every key must be in
// config/keys.hpp's table, with the right type and an allowed value, and the whole must make
// sense (unique workload names, sides that differ, a safe scratch disk); otherwise it throws
// Error with "file:line: ..." naming the key and what to do. See configs/*.toml for examples
// and describe_key_table() for every key.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/design.hpp"
#include "config/device.hpp"
#include "config/workload.hpp"
#include "core/decision_defaults.hpp"
#include "core/vocabulary.hpp"

namespace abvm {

// One side, fully resolved: everything the guest driver needs to boot it.
struct SideSpec {
  std::string label;                   // "baseline"; defaults to the letter
  std::string kernel;                  // kernel recipe name or path
  std::string cmdline;                 // shared or own command line, plus cmdline_append
  VirtioBlkOptions device;
  MachineOptions machine;
  bool operator==(const SideSpec&) const = default;
};

struct GuestSettings {
  std::string image = "default";       // guest image recipe
  std::optional<Accelerator> accelerator;  // unset: "auto", a KVM probe boot decides
};

struct DiskSettings {
  // Empty: abvm creates a scratch raw image in the results directory. Else the user's file,
  // resolved against the config file's directory; checked not to be a block device (also
  // through symlinks) nor an existing non-empty file unless overwrite.
  std::filesystem::path path;
  std::uint64_t size_bytes = 1ULL << 30;
  bool preallocate = false;
  bool overwrite = false;
};

// Where the blocks run (config/keys.cpp "hosts"): libvirt hosts reached through libvirt's own
// remote protocol; empty: this machine.
struct HostSettings {
  std::vector<std::string> uris;
  // The libvirt storage pool 'abvm' on every host must be here (or is created here). Unset: a pool
  // 'abvm' that exists is used wherever it is; one abvm creates goes to /var/lib/abvm/pool.
  std::optional<std::string> pool_path;
};

enum class ScheduleOrder { interleaved, sequential };
const char* to_string(ScheduleOrder order);

// The designs (schedule.design): config/design.hpp.

// How sequential stopping splits 1 - confidence over the looks (see plan/looks.hpp): Lan-DeMets
// group-sequential boundaries (obrien_fleming, pocock), or each look at its own share of alpha by
// the union bound (pocock_spending, bonferroni; conservative, kept for existing experiment files).
enum class LookCorrection { obrien_fleming, pocock, pocock_spending, bonferroni };
const char* to_string(LookCorrection correction);

struct SequentialSettings {
  bool enabled = false;
  int max_boots_per_side = 40;
  std::chrono::milliseconds max_wall_time = std::chrono::hours(2);
  int look_every = 5;                  // blocks between looks
  LookCorrection correction = LookCorrection::obrien_fleming;
};

struct ScheduleSettings {
  int boots_per_side = 10;
  ScheduleOrder order = ScheduleOrder::interleaved;
  // Draw each block's workload order from the seed (both trials of a block run the same order):
  // a workload's verdict then owes nothing to the one that ran before it in every boot.
  bool draw_workload_order = false;
  Design design = Design::sequential_blocks;
  // Host CPU sets (libvirt cpuset syntax, "0" or "2-3"), one lane each: a lane runs one block at a
  // time with every guest pinned to its set (vCPUs and QEMU's own threads), and the lanes run
  // their blocks at the same time. Empty: one lane, unpinned. Designs that run their guests
  // together default to {"0"}. No two sets share a CPU.
  std::vector<std::string> cpu_sets;
  // Designs whose A and B runs are meant to overlap (co-scheduled): a pair of runs that started
  // surely further apart than this on the host's clock (samples/sample.hpp RunTiming: the starts'
  // difference less both clock errors) is left out of the analysis (verdict/analysis.hpp
  // AnalysisOptions::max_start_skew_ms). The old schedule.min_overlap is read and not used.
  std::chrono::milliseconds max_start_skew{50};
  // Designs that run a pair together on a lane of two CPUs (co-scheduled): the two guests' vCPUs
  // trade CPUs this often, so each meets both CPUs alike (run/designs/vcpu_swap.hpp); 0: never.
  std::chrono::milliseconds vcpu_swap{10};
  std::uint64_t seed = 0;              // 0: the run picks one and records it in plan.json
  std::chrono::milliseconds boot_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds run_timeout = std::chrono::seconds(120);
  // Each workload's least measured run time, unless it sets its own (run/sizing.hpp); 0: off.
  std::chrono::milliseconds min_run_time = std::chrono::seconds(1);
  bool allow_identical_sides = false;
  int infra_retries = 1;
  // What abvm keeps of a trial's console, in bytes; a guest that prints more is invalid-output.
  std::uint64_t console_limit = std::uint64_t{64} << 20;
  SequentialSettings sequential;
};

struct MetricSelection {
  std::string name;                    // "<workload>.<metric>", workload checked to exist
  std::optional<Better> better;  // unset: the metric's natural direction
};

struct AnalysisSettings {
  double margin = kDefaultMargin;
  double confidence = kDefaultConfidence;
  std::uint64_t seed = kDefaultAnalysisSeed;
  std::vector<MetricSelection> metrics;   // empty: every metric
};

// One line of `abvm config show`: a key's effective value and where it came from
// ("default", "demo.toml:12", "side A inherits guest.kernel (default)").
struct EffectiveValue {
  std::string key;                     // concrete path: "sides.A.device.cache", "workload[0].bs"
  std::string value;                   // TOML-like: "\"none\"", "8M", "true", "unset"
  std::string origin;
};

struct Experiment {
  std::string name;
  std::string description;
  std::string source;                  // the config file as given (for messages)
  std::string source_text;             // its text: the config as run
  GuestSettings guest;
  DiskSettings disk;
  HostSettings hosts;
  SideSpec a;
  SideSpec b;
  std::vector<Workload> workloads;
  ScheduleSettings schedule;
  AnalysisSettings analysis;
  std::vector<EffectiveValue> effective;  // every key, in key-table order

  const SideSpec& side(Side id) const { return id == Side::a ? a : b; }
};

struct LoadOptions {
  // Asked for each side's kernel; false is an Error at the key that names it. The default
  // accepts everything (kernels/ is checked when the kernel is built).
  std::function<bool(const std::string&)> kernel_exists;
};

// Reads and validates an experiment file. Throws Error ("file:line: ...") for anything wrong
// in it; never touches the disk it names (only stat()s it).
Experiment load_experiment(const std::filesystem::path& file, const LoadOptions& options = {});

// The same from text. `display_name` is used in messages; relative paths in the text (disk,
// fio job files) are resolved against `base_dir`.
Experiment load_experiment_text(std::string_view text, std::string display_name,
                                const std::filesystem::path& base_dir, const LoadOptions& options = {});

// Every effective value and its origin, one aligned line per key (`abvm config show`).
std::string describe_effective_config(const Experiment& experiment);

}  // namespace abvm
