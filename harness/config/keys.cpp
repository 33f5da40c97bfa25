#include "config/keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "config/design.hpp"
#include "config/device.hpp"
#include "config/experiment.hpp"
#include "config/rules.hpp"
#include "config/workload.hpp"
#include "core/decision_defaults.hpp"
#include "core/units.hpp"

namespace abvm {
namespace {

constexpr double kMaxInt63 = 9223372036854775807.0;

KeyRange closed(double min, double max) { return KeyRange{min, max, false, false}; }
KeyRange closed(rules::IntBounds b) { return closed(static_cast<double>(b.min), static_cast<double>(b.max)); }
KeyRange open_range(OpenRange r) { return KeyRange{r.low, r.high, true, true}; }

template <std::size_t N>
std::vector<std::string> choices(const std::array<std::string_view, N>& list) {
  return {list.begin(), list.end()};
}

std::string bool_text(bool value) { return value ? "true" : "false"; }
std::string toml_quoted(std::string_view text) { return fmt::format("\"{}\"", text); }

// Device keys are shared ([device]) and per side ([sides.A.device]); listing them once keeps
// the two in step. Defaults are VirtioBlkOptions' own, bounds and choices config/rules.hpp's.
struct DeviceKey {
  std::string name;
  KeyType type;
  std::string default_text;
  std::string doc;
  std::vector<std::string> choices;
  std::optional<KeyRange> range;
};

// One line per <iotune> key, from its name: "read_bytes_sec_max" is the burst rate of
// read_bytes_sec, and so on.
std::string iotune_doc(std::string_view name) {
  if (name == "size_iops_sec") {
    return "bytes that count as one request for the iops limits (a larger request counts as several), a size "
           "such as \"4K\"; needs an iops limit";
  }
  const std::string_view way = name.substr(0, name.find('_'));  // total, read, write
  const bool bytes = name.find("_bytes_") != std::string_view::npos;
  const std::string what = way == "total" ? (bytes ? "throughput of reads and writes together" : "read and write "
                                                                                                 "requests together")
                                          : fmt::format("{} {}", way, bytes ? "throughput" : "requests");
  const std::string unit = bytes ? "bytes per second, a size such as \"16M\" (16 MiB/s)" : "requests per second";
  const std::string rate(name.substr(0, name.find("_sec") + 4));
  if (name.ends_with("_max_length")) {
    return fmt::format("seconds that {}_max may last (needs it; QEMU's default 1)", rate);
  }
  if (name.ends_with("_max")) {
    return fmt::format("burst rate of {}, {}, at least {} (unset: QEMU lets a tenth of a second at the rate through "
                       "at once)", rate, unit, rate);
  }
  return fmt::format("limit of the {}: {}; {}", what, unit,
                     way == "total" ? fmt::format("not with read_{0} or write_{0}", name.substr(6))
                                    : fmt::format("not with total_{}", name.substr(way.size() + 1)));
}

const std::vector<DeviceKey>& device_keys() {
  static const VirtioBlkOptions d;
  static const std::vector<DeviceKey> keys = {
      {"iommu_platform", KeyType::boolean, bool_text(d.iommu_platform),
       "VIRTIO_F_ACCESS_PLATFORM (<driver iommu='on'>): the guest's virtio goes through the DMA API", {}, {}},
      {"queues", KeyType::integer, "unset",
       "number of virtqueues (unset: QEMU's default)", {}, closed(rules::virtqueues)},
      {"queue_size", KeyType::integer, "unset",
       "virtqueue ring size, a power of two (unset: QEMU's default)", {}, closed(rules::queue_size)},
      {"cache", KeyType::string, toml_quoted(d.cache), "host page cache mode of the scratch disk",
       choices(rules::cache_modes), {}},
      {"io", KeyType::string, toml_quoted(d.io), "QEMU's I/O mode; native needs cache none or directsync",
       choices(rules::io_modes), {}},
      {"iothread", KeyType::boolean, bool_text(d.iothread), "run the disk in its own QEMU iothread", {}, {}},
  };
  static const std::vector<DeviceKey> all = [] {
    std::vector<DeviceKey> out = keys;
    out.push_back({"iotune", KeyType::table, "",
                   "disk throttling, libvirt's <iotune> (QEMU's block throttling); a key left out sets no limit",
                   {}, {}});
    for (const IotuneField& f : kIotuneFields) {
      const bool size = f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes;
      out.push_back({"iotune." + std::string(f.name), size ? KeyType::size : KeyType::integer, "unset",
                     iotune_doc(f.name), {}, closed(rules::iotune_bounds(f.unit))});
    }
    return out;
  }();
  return all;
}

std::vector<KeySpec> build_table() {
  std::vector<KeySpec> t;
  const auto add = [&t](KeySpec spec) { t.push_back(std::move(spec)); };

  add({.path = "name", .type = KeyType::string, .default_text = "",
       .doc = "experiment name, [A-Za-z0-9._-]+ (results go to results/<name>-<timestamp>/)",
       .required = true});
  add({.path = "description", .type = KeyType::string, .default_text = "\"\"",
       .doc = "free text, copied into the results"});

  add({.path = "guest", .type = KeyType::table, .doc = "the guest machine, shared by both sides"});
  const MachineOptions machine;
  add({.path = "guest.vcpus", .type = KeyType::integer, .default_text = std::to_string(machine.vcpus),
       .doc = "virtual CPUs", .range = closed(rules::vcpus)});
  add({.path = "guest.memory_mib", .type = KeyType::integer, .default_text = std::to_string(machine.memory_mib),
       .doc = "guest memory in MiB", .range = closed(rules::memory_mib)});
  add({.path = "guest.vcpu_pins", .type = KeyType::integer_list, .default_text = "[]",
       .doc = "host CPU for each vCPU, one per vCPU (empty: no pinning)", .range = closed(rules::host_cpu)});
  add({.path = "guest.image", .type = KeyType::string, .default_text = "\"default\"",
       .doc = "guest image recipe (guests/<image>)"});
  add({.path = "guest.accelerator", .type = KeyType::string, .default_text = "\"auto\"",
       .doc = "auto: KVM when a probe shows it works, else TCG", .choices = {"auto", "kvm", "tcg"}});
  add({.path = "guest.kernel", .type = KeyType::string, .default_text = "\"debian-cloud\"",
       .doc = "kernel recipe name (kernels/<name>.toml) or path, for both sides"});
  add({.path = "guest.cmdline", .type = KeyType::string, .default_text = "\"\"",
       .doc = "kernel command line for both sides, appended to abvm's own"});

  add({.path = "disk", .type = KeyType::table, .doc = "the virtio-blk scratch disk the workloads write to"});
  add({.path = "disk.path", .type = KeyType::string, .default_text = "\"\"",
       .doc = "empty: a scratch raw image in the results dir; else a file (relative to this file), "
              "never a block device"});
  add({.path = "disk.size", .type = KeyType::size, .default_text = "\"1G\"", .doc = "size of the raw image",
       .range = closed(1 << 20, 1ULL << 40)});
  add({.path = "disk.preallocate", .type = KeyType::boolean, .default_text = "false",
       .doc = "allocate every block up front (no sparse-file effects in the numbers)"});
  add({.path = "disk.overwrite", .type = KeyType::boolean, .default_text = "false",
       .doc = "allow disk.path to name an existing non-empty file (its contents are destroyed)"});

  add({.path = "hosts", .type = KeyType::table,
       .doc = "where the blocks run: a pool of libvirt hosts (unset: this machine, libvirt's embedded driver)"});
  add({.path = "hosts.uris", .type = KeyType::string_list, .default_text = "[]",
       .doc = "libvirt URIs, e.g. [\"qemu+ssh://root@lab3/system\", \"qemu+tls://lab4/system\"]: every host runs "
              "blocks at once (both sides of a block on one host), one per CPU set; abvm run --connect URI "
              "(repeated) overrides"});
  add({.path = "hosts.pool_path", .type = KeyType::string, .default_text = "(unset)",
       .doc = "directory of the libvirt storage pool 'abvm' on each host (kernels, initrds and scratch disks reach "
              "a host as volumes there); a pool 'abvm' elsewhere is then an error. Unset: an existing pool 'abvm' "
              "wherever it is, else one made at /var/lib/abvm/pool"});

  add({.path = "device", .type = KeyType::table, .doc = "virtio-blk device options, shared by both sides"});
  for (const DeviceKey& k : device_keys()) {
    add({.path = "device." + k.name, .type = k.type, .default_text = k.default_text, .doc = k.doc,
         .choices = k.choices, .range = k.range});
  }

  add({.path = "sides", .type = KeyType::table, .doc = "the two sides, A and B"});
  add({.path = "sides.*", .type = KeyType::table,
       .doc = "one side; anything not set here is taken from the shared tables"});
  add({.path = "sides.*.label", .type = KeyType::string, .default_text = "the side's letter",
       .doc = "name shown in reports"});
  add({.path = "sides.*.kernel", .type = KeyType::string, .default_text = "guest.kernel",
       .doc = "this side's kernel recipe or path"});
  add({.path = "sides.*.cmdline", .type = KeyType::string, .default_text = "guest.cmdline",
       .doc = "this side's kernel command line (replaces guest.cmdline)"});
  add({.path = "sides.*.cmdline_append", .type = KeyType::string, .default_text = "\"\"",
       .doc = "appended to this side's command line (e.g. \"swiotlb=force\")"});
  add({.path = "sides.*.guest", .type = KeyType::table, .doc = "this side's machine options"});
  add({.path = "sides.*.guest.vcpus", .type = KeyType::integer, .default_text = "guest.vcpus",
       .doc = "virtual CPUs", .range = closed(rules::vcpus)});
  add({.path = "sides.*.guest.memory_mib", .type = KeyType::integer, .default_text = "guest.memory_mib",
       .doc = "guest memory in MiB", .range = closed(rules::memory_mib)});
  add({.path = "sides.*.guest.vcpu_pins", .type = KeyType::integer_list, .default_text = "guest.vcpu_pins",
       .doc = "host CPU for each vCPU", .range = closed(rules::host_cpu)});
  add({.path = "sides.*.device", .type = KeyType::table, .doc = "this side's virtio-blk device options"});
  for (const DeviceKey& k : device_keys()) {
    add({.path = "sides.*.device." + k.name, .type = k.type, .default_text = "device." + k.name,
         .doc = k.doc, .choices = k.choices, .range = k.range});
  }

  add({.path = "workload", .type = KeyType::table_list,
       .doc = "[[workload]]: what each boot runs, in order (at least one)"});
  add({.path = "workload[].name", .type = KeyType::string, .default_text = "",
       .doc = "unique name, [A-Za-z0-9_-]+ (metrics are named <workload>.<metric>)", .required = true});
  add({.path = "workload[].type", .type = KeyType::string, .default_text = "",
       .doc = fmt::format("{}", fmt::join(workload_kind_names(), " or ")), .choices = workload_kind_names(),
       .required = true});
  add({.path = "workload[].repetitions", .type = KeyType::integer, .default_text = "1",
       .doc = "measured runs per boot", .range = closed(1, 1000)});
  add({.path = "workload[].warmup", .type = KeyType::integer, .default_text = "0",
       .doc = "runs per boot before the measured ones, discarded", .range = closed(0, 100)});
  add({.path = "workload[].sync", .type = KeyType::boolean, .default_text = "true",
       .doc = "sync before each run"});
  add({.path = "workload[].drop_caches", .type = KeyType::boolean, .default_text = "true",
       .doc = "echo 3 > /proc/sys/vm/drop_caches before each run"});
  add({.path = "workload[].scheduler_none", .type = KeyType::boolean, .default_text = "true",
       .doc = "use the 'none' I/O scheduler on the scratch disk"});
  add({.path = "workload[].min_run_time", .type = KeyType::duration, .default_text = "schedule.min_run_time",
       .doc = "this workload's least measured run time (as schedule.min_run_time; \"0s\": run as written)",
       .range = closed(0, 3'600'000)});
  add({.path = "workload[].bs", .type = KeyType::size, .default_text = "\"1M\"",
       .doc = "block size (dd bs=, fio bs=)", .range = closed(512, 1ULL << 30)});
  add({.path = "workload[].count", .type = KeyType::integer, .default_text = "64", .doc = "dd count=",
       .range = closed(1, kMaxInt63), .only_for = "dd"});
  add({.path = "workload[].if", .type = KeyType::string, .default_text = "\"/dev/zero\"",
       .doc = "dd if= (@scratch: read the scratch disk)", .only_for = "dd"});
  add({.path = "workload[].of", .type = KeyType::string, .default_text = "\"@scratch\"",
       .doc = "dd of= (@scratch: write the scratch disk, e.g. \"/dev/null\" when if = \"@scratch\")",
       .only_for = "dd"});
  add({.path = "workload[].iflag", .type = KeyType::string_list,
       .default_text = "[\"direct\"] when if = \"@scratch\", else []",
       .doc = "dd iflag=; \"direct\" on /dev/zero, /dev/null, /dev/full, /dev/random or /dev/urandom is refused (they "
              "cannot be opened with O_DIRECT)",
       .only_for = "dd"});
  add({.path = "workload[].oflag", .type = KeyType::string_list,
       .default_text = "[\"direct\"] when of = \"@scratch\", else []",
       .doc = "dd oflag=; \"direct\" on /dev/null and the like is refused, as for iflag", .only_for = "dd"});
  add({.path = "workload[].job_file", .type = KeyType::string, .default_text = "\"\"",
       .doc = "fio job file (relative to this file) instead of the keys below", .only_for = "fio"});
  add({.path = "workload[].rw", .type = KeyType::string, .default_text = "\"write\"", .doc = "fio rw=",
       .choices = {"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}, .only_for = "fio"});
  add({.path = "workload[].size", .type = KeyType::size, .default_text = "\"64M\"", .doc = "fio size=",
       .range = closed(4096, 1ULL << 40), .only_for = "fio"});
  add({.path = "workload[].direct", .type = KeyType::boolean, .default_text = "true",
       .doc = "fio direct= (O_DIRECT)", .only_for = "fio"});
  add({.path = "workload[].ioengine", .type = KeyType::string, .default_text = "\"psync\"",
       .doc = "fio ioengine=", .choices = {"psync", "sync", "libaio", "io_uring", "posixaio", "pvsync2"},
       .only_for = "fio"});
  add({.path = "workload[].filename", .type = KeyType::string, .default_text = "\"@scratch\"",
       .doc = "fio filename= (@scratch: the scratch disk); with direct, not /dev/null and the like", .only_for = "fio"});
  add({.path = "workload[].iodepth", .type = KeyType::integer, .default_text = "unset",
       .doc = "fio iodepth=; above 1 it needs an asynchronous ioengine (libaio, io_uring, posixaio)",
       .range = closed(1, 4096), .only_for = "fio"});
  add({.path = "workload[].numjobs", .type = KeyType::integer, .default_text = "unset", .doc = "fio numjobs=",
       .range = closed(1, 256), .only_for = "fio"});
  add({.path = "workload[].runtime", .type = KeyType::duration, .default_text = "unset",
       .doc = "fio runtime= with time_based (unset: until size is written)", .only_for = "fio"});
  add({.path = "workload[].output_format", .type = KeyType::string, .default_text = "\"json\"",
       .doc = "fio --output-format", .choices = {"json", "json+"}, .only_for = "fio"});
  add({.path = "workload[].options", .type = KeyType::string_table, .default_text = "{}",
       .doc = "further fio options, name = \"value\" (fio checks them)", .only_for = "fio"});

  add({.path = "schedule", .type = KeyType::table, .doc = "how many boots, in which order"});
  add({.path = "schedule.boots_per_side", .type = KeyType::integer, .default_text = "10",
       .doc = "boots (trials) per side; runs within a boot are not independent", .range = closed(2, 10000)});
  add({.path = "schedule.order", .type = KeyType::string, .default_text = "\"interleaved\"",
       .doc = "interleaved: A/B blocks in seeded random order; sequential: all A, then all B",
       .choices = {"interleaved", "sequential"}});
  {
    std::string doc = "how a block's A and B boots meet the host's noise:";
    std::vector<std::string> names;
    for (const DesignTraits& d : kDesignTraits) {
      doc += fmt::format(" {} ({}){}", d.name, d.doc, &d == &kDesignTraits[std::size(kDesignTraits) - 1] ? "." : ",");
      names.emplace_back(d.name);
    }
    doc += " All but sequential-blocks decide on the paired per-block ratio";
    add({.path = "schedule.design", .type = KeyType::string, .default_text = "\"sequential-blocks\"", .doc = doc,
         .choices = names});
  }
  add({.path = "schedule.workload_order", .type = KeyType::string, .default_text = "\"as-listed\"",
       .doc = "the order of the workloads in each boot: as-listed, or drawn per block from the seed (both sides of "
              "a block run the same order), so that a workload's verdict does not depend on the one before it",
       .choices = {"as-listed", "drawn"}});
  add({.path = "schedule.cpu_set", .type = KeyType::string, .default_text = "unset",
       .doc = "host CPUs every guest is pinned to, e.g. \"0\" or \"2-3\": cpu_sets = [\"0\"] (unset: unpinned; "
              "\"0-1\" when co-scheduled, which needs two CPUs per set, \"0\" when lockstep)"});
  add({.path = "schedule.cpu_sets", .type = KeyType::string_list, .default_text = "unset",
       .doc = "host CPU sets, one lane each: a block runs on every set at once, its guests pinned there, e.g. "
              "[\"0\", \"1\"] (sets must not overlap; co-scheduled: two CPUs or more each, e.g. [\"0-1\", \"2-3\"])"});
  add({.path = "schedule.max_start_skew", .type = KeyType::duration,
       .default_text = toml_quoted(format_duration(ScheduleSettings{}.max_start_skew)),
       .doc = "in designs whose A and B runs are meant to overlap (co-scheduled), a pair of runs whose starts lay "
              "surely further apart than this on the host's clock (less both runs' clock errors) is left out of the "
              "analysis, with a warning; the estimate over every pair is reported beside",
       .range = closed(0, 3'600'000)});
  add({.path = "schedule.min_overlap", .type = KeyType::number, .default_text = "unset",
       .doc = "no longer used: a pair of runs is never left out for its overlap, which moves with the pair's own "
              "ratio (issue 26); accepted so that older experiment files load. Use schedule.max_start_skew",
       .range = closed(0, 1)});
  add({.path = "schedule.vcpu_swap", .type = KeyType::duration,
       .default_text = toml_quoted(format_duration(ScheduleSettings{}.vcpu_swap)),
       .doc = "in designs that run A's and B's guests together on a lane of two CPUs (co-scheduled), the two "
              "guests' vCPU threads trade CPUs this often, so that each meets both CPUs alike (under the embedded "
              "driver only; recorded per trial as vcpu_swap). \"0s\": the host's scheduler places them",
       .range = closed(0, 60'000)});
  add({.path = "schedule.seed", .type = KeyType::integer, .default_text = "0",
       .doc = "seed of the trial order (0: abvm picks one and records it)", .range = closed(0, kMaxInt63)});
  add({.path = "schedule.boot_timeout", .type = KeyType::duration, .default_text = "\"1m\"",
       .doc = "from start until the guest job reports in", .range = closed(1000, 86'400'000)});
  add({.path = "schedule.run_timeout", .type = KeyType::duration, .default_text = "\"2m\"",
       .doc = "for each workload run", .range = closed(1000, 86'400'000)});
  add({.path = "schedule.min_run_time", .type = KeyType::duration, .default_text = "\"1s\"",
       .doc = "after the first block, each workload whose measured runs took less than this (median over both sides) "
              "runs longer by a whole factor, the same on both sides: dd's count, fio's size (or number_ios), as "
              "google/benchmark sizes its iterations; the first block is then set aside. \"0s\": runs as written. "
              "Not with order = \"sequential\"",
       .range = closed(0, 3'600'000)});
  add({.path = "schedule.allow_identical_sides", .type = KeyType::boolean, .default_text = "false",
       .doc = "allow A and B to be the same (an A/A run: the false-alarm rate of this host)"});
  add({.path = "schedule.infra_retries", .type = KeyType::integer, .default_text = "1",
       .doc = "retries of a trial after an infrastructure error (recorded)", .range = closed(0, 10)});
  // A real trial prints some hundreds of KiB (boot messages, records, fio JSON in base64); 64 MiB
  // is far above that and still cheap to hold and parse. A guest printing more is stopped.
  add({.path = "schedule.console_limit", .type = KeyType::size, .default_text = "\"64M\"",
       .doc = "console bytes kept per trial; a guest printing more is stopped and invalid-output (its head and tail kept)",
       .range = closed(64 << 10, 1ULL << 30)});
  add({.path = "schedule.sequential", .type = KeyType::table,
       .doc = "sequential stopping: add A/B blocks while the verdict is inconclusive"});
  add({.path = "schedule.sequential.enabled", .type = KeyType::boolean, .default_text = "false",
       .doc = "keep adding blocks until a verdict or the budget is spent"});
  add({.path = "schedule.sequential.max_boots_per_side", .type = KeyType::integer, .default_text = "40",
       .doc = "budget in boots per side (>= boots_per_side)", .range = closed(2, 10000)});
  add({.path = "schedule.sequential.max_wall_time", .type = KeyType::duration, .default_text = "\"2h\"",
       .doc = "budget in wall time", .range = closed(1000, 30LL * 86'400'000)});
  add({.path = "schedule.sequential.look_every", .type = KeyType::integer, .default_text = "5",
       .doc = "blocks added between two looks at the data", .range = closed(1, 10000)});
  add({.path = "schedule.sequential.correction", .type = KeyType::string, .default_text = "\"obrien-fleming\"",
       .doc = "how 1-confidence is split over the looks: Lan-DeMets group-sequential boundaries "
              "(obrien-fleming, pocock) or one share per look (pocock-spending, bonferroni) (plan/looks.hpp)",
       .choices = {"obrien-fleming", "pocock", "pocock-spending", "bonferroni"}});

  add({.path = "analysis", .type = KeyType::table, .doc = "how the verdict is reached"});
  add({.path = "analysis.margin", .type = KeyType::number, .default_text = fmt::format("{}", kDefaultMargin),
       .doc = "smallest relative change that matters (0.05: 5 %)", .range = open_range(kMarginRange)});
  add({.path = "analysis.confidence", .type = KeyType::number,
       .default_text = fmt::format("{}", kDefaultConfidence), .doc = "confidence level of the intervals",
       .range = open_range(kConfidenceRange)});
  add({.path = "analysis.seed", .type = KeyType::integer, .default_text = std::to_string(kDefaultAnalysisSeed),
       .doc = "seed of the bootstrap", .range = closed(0, kMaxInt63)});
  add({.path = "analysis.metrics", .type = KeyType::table_list, .default_text = "[]",
       .doc = "metrics to judge, [{ name = \"<workload>.<metric>\", better = ... }] (empty: all)"});
  add({.path = "analysis.metrics[].name", .type = KeyType::string, .default_text = "",
       .doc = "<workload>.<metric>, e.g. \"dd-write.bandwidth\"", .required = true});
  add({.path = "analysis.metrics[].better", .type = KeyType::string, .default_text = "unset",
       .doc = "direction of improvement (unset: the metric's own)", .choices = {"higher", "lower"}});
  return t;
}

std::string format_bound(KeyType type, double value) {
  if (type == KeyType::size) return format_size(static_cast<std::uint64_t>(value));
  if (type == KeyType::duration) {
    return format_duration(std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(value)));
  }
  if (type == KeyType::number) return fmt::format("{}", value);
  return fmt::format("{}", static_cast<std::int64_t>(value));
}

}  // namespace

const std::vector<KeySpec>& key_table() {
  static const std::vector<KeySpec> table = build_table();
  return table;
}

const KeySpec* find_key(std::string_view pattern) {
  const auto& table = key_table();
  const auto it = std::find_if(table.begin(), table.end(), [&](const KeySpec& k) { return k.path == pattern; });
  return it == table.end() ? nullptr : &*it;
}

std::string key_pattern(std::string_view concrete_path) {
  // Built by appending string_views: GCC 12 at -O2 reports a false -Wrestrict when a
  // std::string is assigned a literal or concatenated here.
  std::string out;
  std::size_t i = 0;
  std::size_t component = 0;
  bool after_sides = false;
  while (i <= concrete_path.size()) {
    std::size_t end = concrete_path.find('.', i);
    if (end == std::string_view::npos) end = concrete_path.size();
    std::string_view part = concrete_path.substr(i, end - i);
    if (component > 0) out.push_back('.');
    if (after_sides) {
      out.push_back('*');
    } else if (const auto bracket = part.find('['); bracket != std::string_view::npos) {
      out.append(part.substr(0, bracket));
      out.append("[]");
    } else {
      out.append(part);
    }
    after_sides = component == 0 && part == "sides";
    ++component;
    i = end + 1;
  }
  return out;
}

std::string describe_type(KeyType type) {
  switch (type) {
    case KeyType::string: return "a string";
    case KeyType::boolean: return "true or false";
    case KeyType::integer: return "an integer";
    case KeyType::number: return "a number";
    case KeyType::size: return "a size such as \"8M\"";
    case KeyType::duration: return "a duration such as \"60s\"";
    case KeyType::string_list: return "a list of strings";
    case KeyType::integer_list: return "a list of integers";
    case KeyType::string_table: return "a table of strings";
    case KeyType::table: return "a table";
    case KeyType::table_list: return "a list of tables";
  }
  return "a value";
}

std::string describe_allowed(const KeySpec& spec) {
  if (!spec.choices.empty()) return fmt::format("{}", fmt::join(spec.choices, "|"));
  if (!spec.range) return "";
  const KeyRange& r = *spec.range;
  if (spec.type == KeyType::number && (r.min_open || r.max_open)) {
    return fmt::format("{} {} x {} {}", format_bound(spec.type, r.min), r.min_open ? "<" : "<=",
                       r.max_open ? "<" : "<=", format_bound(spec.type, r.max));
  }
  if (r.max >= kMaxInt63) return fmt::format(">= {}", format_bound(spec.type, r.min));
  return fmt::format("{}..{}", format_bound(spec.type, r.min), format_bound(spec.type, r.max));
}

std::string describe_key_table() {
  std::size_t width = 0;
  for (const KeySpec& k : key_table()) width = std::max(width, k.path.size());
  std::string out;
  for (const KeySpec& k : key_table()) {
    if (k.type == KeyType::table || k.type == KeyType::table_list) {
      out += fmt::format("\n[{}]  {}\n", k.path, k.doc);
      if (k.type == KeyType::table) continue;
    }
    std::string detail = k.required ? "required" : "default " + k.default_text;
    if (const std::string allowed = describe_allowed(k); !allowed.empty()) detail += "; " + allowed;
    if (!k.only_for.empty()) detail += "; " + k.only_for + " only";
    out += fmt::format("  {:<{}}  {}\n  {:<{}}  ({}; {})\n", k.path, width, k.doc, "", width,
                       describe_type(k.type), detail);
  }
  return out;
}

}  // namespace abvm
