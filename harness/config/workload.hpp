#pragma once
// What runs inside a guest: the workloads of an experiment, as values. The experiment file
// (config/) produces them, the plan (plan/) orders them into trials, and the guest job
// (guest/job) serialises them for the in-guest agent.
//
// A workload's kind is the tool it runs, one alternative of WorkloadSpec each. Code that does
// something different per kind goes through visit_kind with an `overloaded{...}` of one lambda
// per kind, so that a kind added to WorkloadSpec is a compile error at every such place (the steps:
// harness/ARCHITECTURE.md, "Adding a workload tool").
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace abvm {

// GNU dd with direct I/O, as in the seed: dd if=/dev/zero of=/dev/vda bs=8M count=1024 oflag=direct
struct DdWorkload {
  static constexpr std::string_view kind = "dd";
  std::string block_size = "1M";          // dd's bs= (dd's own suffixes: K, M, G; kB, MB ...)
  std::uint64_t count = 64;               // dd's count=
  std::string input = "/dev/zero";        // if=
  std::string output = "@scratch";        // of=; "@scratch" is the guest's virtio-blk scratch disk
  std::vector<std::string> iflag;         // e.g. {"direct"}
  std::vector<std::string> oflag = {"direct"};
};

// fio with JSON output. Either a job file's text, or options for one job (fio's
// --name=value command-line form). "@scratch" in filename= means the scratch disk.
struct FioWorkload {
  static constexpr std::string_view kind = "fio";
  std::optional<std::string> job_file;    // the text of a fio job file
  std::map<std::string, std::string> options = {
      {"rw", "write"}, {"bs", "1M"}, {"size", "64M"}, {"direct", "1"},
      {"ioengine", "psync"}, {"filename", "@scratch"}};
  std::string output_format = "json";     // "json" or "json+"
};

// Steps before each measured run; all on by default because each removes a known source
// of noise (dirty page cache, scheduler reordering).
struct PreRunSteps {
  bool sync = true;
  bool drop_caches = true;
  bool scheduler_none = true;   // echo none > /sys/block/<scratch>/queue/scheduler
};

// Every kind. `kind` is the tool's name: the experiment file's `type`, the job's `kind`, argv[0].
using WorkloadSpec = std::variant<DdWorkload, FioWorkload>;

// An overload set of lambdas, one per kind: visit_kind(overloaded{[](const DdWorkload&) ...}, spec).
template <class... Lambdas>
struct overloaded : Lambdas... {
  using Lambdas::operator()...;
};
// clang before 17 deduces no aggregate's template arguments by itself (the fuzz build's clang 14).
template <class... Lambdas>
overloaded(Lambdas...) -> overloaded<Lambdas...>;

// No kind: a visitor that accepts it has a catch-all, which would take a new kind in silently.
struct NotAWorkloadKind {};

// std::visit for a workload's kind, refusing at compile time a visitor that misses a kind or has
// a catch-all (a generic lambda, an `auto` overload). Works on any variant of kinds, so that
// harness/tests/data/compile_probes/workload_kinds.cpp can show the refusal with a third kind.
template <class Visitor, class... Kinds>
decltype(auto) visit_kind(Visitor&& visitor, const std::variant<Kinds...>& spec) {
  static_assert((std::is_invocable_v<Visitor, const Kinds&> && ...),
                "visit_kind: a workload kind is not handled here: add its case "
                "(ARCHITECTURE.md, Adding a workload tool)");
  static_assert(!std::is_invocable_v<Visitor, const NotAWorkloadKind&>,
                "visit_kind: a catch-all case would take a new workload kind silently: name each kind");
  return std::visit(std::forward<Visitor>(visitor), spec);
}
template <class Visitor, class... Kinds>
decltype(auto) visit_kind(Visitor&& visitor, std::variant<Kinds...>& spec) {
  static_assert((std::is_invocable_v<Visitor, Kinds&> && ...),
                "visit_kind: a workload kind is not handled here: add its case "
                "(ARCHITECTURE.md, Adding a workload tool)");
  static_assert(!std::is_invocable_v<Visitor, NotAWorkloadKind&>,
                "visit_kind: a catch-all case would take a new workload kind silently: name each kind");
  return std::visit(std::forward<Visitor>(visitor), spec);
}

// The kind's tool name ("dd", "fio").
std::string_view kind_name(const WorkloadSpec& spec);
// Every kind's name, in WorkloadSpec's order: the choices of a workload's `type`.
std::vector<std::string> workload_kind_names();
// A default spec of the kind named `name`; nullopt for a name that is no kind.
std::optional<WorkloadSpec> default_spec(std::string_view name);

struct Workload {
  std::string name;                              // unique in the experiment, e.g. "dd-write"
  WorkloadSpec spec;
  int repetitions = 1;                           // measured runs per boot
  int warmup = 0;                                // discarded runs before them
  PreRunSteps pre_run;
  // The least time a measured run should take (run/sizing.hpp): its own `min_run_time`; unset:
  // schedule.min_run_time's. Zero: run as written.
  std::optional<std::chrono::milliseconds> min_run_time;
};

// Sizing a workload's runs (run/sizing.hpp): what sets a run's length, one function per kind.
// The size in the tool's own words: "bs=8M count=16" (dd), "bs=1M size=128M" (fio); a fio job
// file's "job file" (it sets its own).
std::string run_size(const WorkloadSpec& spec);
// Why a run's length cannot be scaled by a factor (a fio job file, fio's runtime= already time-boxes
// it, a size that is no byte count); nullopt when it can.
std::optional<std::string> unsizable(const WorkloadSpec& spec);
// The spec with its length times `factor` (>= 1): dd's count, fio's number_ios when set, else its
// size. Only for a spec unsizable() accepts.
WorkloadSpec scaled(const WorkloadSpec& spec, std::uint64_t factor);
// Bytes one run reads or writes on the scratch disk (what caps its scaling); nullopt when it does
// not use the scratch disk or its extent is unknown (fio's number_ios).
std::optional<std::uint64_t> scratch_extent(const WorkloadSpec& spec);

}  // namespace abvm
