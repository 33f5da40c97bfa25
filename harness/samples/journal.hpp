#pragma once
// The run journal: abvm's own results, one JSON object per line, appended by the orchestrator
// to <results dir>/journal.jsonl as each run finishes (core/files.hpp append_line_durable), so
// a killed experiment loses at most the line being written.
//
//   {"journal_version":1, "trial":"t0007", "side":"A", "boot":"t0007", "run":0, "order":14,
//    "block":3, "workload":"dd-write", "outcome":"ok", "host":"hostname", "accelerator":"tcg",
//    "time":"2026-11-29T20:01:02Z",
//    "metrics":[{"name":"dd-write.bandwidth","unit":"B/s","better":"higher","value":1.2e9}],
//    "detail":"", "guest":{"kernel_release":"6.1.0-41-cloud-amd64",
//                          "module_params":{"virtio_blk.queue_depth":"1"}}}
//
// Every field is required ("block" may be null when the schedule had no A/B blocks), except
// "guest": what the boot's guest reported of itself (uname -r; the module parameters the kernel
// held, guest/records.hpp), absent when it reported nothing and in journals older than it, and
// "timing" and "overlap" (samples/sample.hpp RunTiming, RunOverlap), absent where not recorded:
//
//    "timing":{"go":1764446462.125,"start":1764446462.131,"end":1764446463.402,
//              "load_end":1764446463.517,"clock_error":0.002},
//    "overlap":{"partner":"t0006","run":0.995,"pair":0.981}
//
// when the run ran on the host's clock ("go" null in designs without a barrier; failed runs may
// carry it too) and the share of it its partner run's guest was under load. Both are strict when
// present: finite numbers, start <= end <= load_end, clock_error >= 0, shares in [0, 1], a
// partner named. Version 2 added each run's size, and the sizing block (run/sizing.hpp):
//
//    "size":"bs=8M count=80", "scale":5, "sizing_block":true
//
// the run's length in the tool's words (config/workload.hpp run_size), the factor it was sized by
// (1: as the experiment wrote it), and whether it ran in the block the sizes were taken from: that
// block is set aside when a later run of any workload ran at another scale (a reader before version 2
// would analyse it with the rest). All three are optional (absent in version 1 and where nothing
// was sized); "scale" >= 1. Version 3 added what each run cost (samples/cost.hpp RunCost) and the cost
// metrics made of it, which readers before it would judge like the others:
//
//    "cost":{"tool_bytes":671088640,"tool_runs":3,"guest_cpu":0.42,"guest_ticks":{"busy":42,"all":210},
//            "fio_ctx":1203,"host":{"cpu":2.1,"cpu_clock":"schedstat","user":1.7,"system":0.4,"vcpu":1.9,
//                                   "disk_bytes":2013265920,"disk_requests":240},
//            "host_missing":"virDomainListGetStats: ..."}
//
// every part but "tool_bytes" optional (absent where not measured; "host_missing" says why the host's
// part is), all numbers finite and >= 0; "cpu_clock" (libvirt, schedstat or ticks: how "cpu" was
// counted) and "threads_ended" (QEMU threads that ended in the window, when any) came later within
// version 3, and are absent from lines written before them. Fields
// a reader does not know are ignored: adding a field does not change journal_version; any
// change an older reader would misread does, and readers reject versions newer than theirs.
// Only "ok" runs carry metrics (at least one); any other outcome carries none and says
// why in "detail".
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/jsonl.hpp"
#include "samples/cost.hpp"
#include "samples/dd.hpp"
#include "samples/fio.hpp"
#include "samples/sample.hpp"

namespace abvm {

inline constexpr int kJournalVersion = 3;

struct JournalMetric {
  std::string name;     // "<workload>.bandwidth", "<workload>.<job>.<dir>.iops", ...
  std::string unit;     // "B/s", "IOPS", "ns"
  Better better = Better::higher;
  double value = 0;     // finite
};

struct JournalEntry {
  int journal_version = kJournalVersion;
  std::string trial;                 // trial id, e.g. "t0007"
  Side side = Side::a;
  std::string boot;                  // boot id (runs of one boot are not independent)
  int run = 0;                       // 0-based index of the run within its boot
  std::int64_t order = 0;            // 0-based position in the overall order (both sides)
  std::optional<int> block;          // A/B block number, if the schedule used blocks
  std::string workload;              // workload name from the experiment
  Outcome outcome = Outcome::ok;
  std::string host;
  Accelerator accelerator = Accelerator::tcg;
  std::string time;                  // UTC, ISO 8601: "2026-11-29T20:01:02Z"
  std::vector<JournalMetric> metrics;
  std::string detail;                // free text, for failures
  // The boot's guest, as it reported itself ("guest"; empty when absent).
  std::string kernel_release;
  std::map<std::string, std::string> module_params;  // "virtio_blk.queue_depth" -> "1"
  // What the side is checked against (run/trial.hpp guest_facts): "kernel_version" -> "#1 SMP ...",
  // "virtio_f_access_platform" -> "negotiated", "dma_api_in_use" -> "reported", ...
  std::map<std::string, std::string> facts;
  // When the run ran and how much its partner overlapped it ("timing", "overlap"; nullopt when
  // not recorded).
  using RunTiming = abvm::RunTiming;
  using RunOverlap = abvm::RunOverlap;
  std::optional<RunTiming> timing;
  std::optional<RunOverlap> overlap;
  // Its length ("size", "scale"; "" and 0 when not recorded) and whether its block sized the runs.
  std::string size;
  std::uint64_t scale = 0;
  bool sizing_block = false;
  // What it cost ("cost"; nullopt in journals before version 3 and for runs that did not finish).
  std::optional<RunCost> cost;
};

// What is wrong with a run's timing or overlap, in the words of a journal error ("must have start
// <= end <= load_end, not ..."), or nullopt when it is valid. The writer and the reader both ask.
std::optional<std::string> timing_problem(const RunTiming& timing);
std::optional<std::string> overlap_problem(const RunOverlap& overlap);

// One line of JSON, without a newline. Throws Error when a metric value is not finite (the
// orchestrator should record such a run as invalid-output instead) or when the timing or the
// overlap is not valid (timing_problem, overlap_problem): no line is written that reads back
// as an error.
std::string to_journal_line(const JournalEntry& entry);

// Strict: a missing or mistyped field, an unknown outcome or side, metrics on a failed run,
// an invalid timing or overlap, or a journal_version newer than kJournalVersion -> Error
// "source:line_no: ..." naming it.
JournalEntry parse_journal_line(std::string_view line, std::string_view source,
                                std::size_t line_no);

// The readers parse_journal_line reads a line with (core/json_read.hpp), each strict as above.
class JsonField;
void read_json(const JsonField& f, JournalEntry& entry);
void read_json(const JsonField& f, JournalMetric& metric);
void read_json(const JsonField& f, RunTiming& timing);
void read_json(const JsonField& f, RunOverlap& overlap);
void read_json(const JsonField& f, RunCost& cost);
void read_json(const JsonField& f, GuestTicks& ticks);
void read_json(const JsonField& f, HostWindowCost& host);

// Called with a plain-words message when read_journal ignores something.
using JournalWarning = JsonlWarning;

// Reads a whole journal. The one thing tolerated is a last line that is both unterminated
// (no '\n') and unparsable: a writer killed mid-line. It is ignored and `warn` is told.
// Anything else wrong (including a bad line that is terminated) throws Error.
std::vector<JournalEntry> read_journal(const std::filesystem::path& path,
                                       const JournalWarning& warn = {});

// Metrics of one dd run of `workload`: "<workload>.bandwidth" (B/s, higher).
std::vector<JournalMetric> dd_metrics(std::string_view workload, const DdRun& run);

// Metrics of one fio run of `workload`, per job and direction with I/O:
//   <prefix>.<dir>.bandwidth (B/s, higher)   <prefix>.<dir>.iops (IOPS, higher)
//   <prefix>.<dir>.clat_mean (ns, lower)     <prefix>.<dir>.clat_p50 / .clat_p99 (ns, lower;
//                                            only when fio computed those percentiles)
// where <prefix> is "<workload>.<job>", or just "<workload>" when the run has exactly one job
// and that job is named like the workload (the usual case: the name stays short and stable).
// Jobs with an error are skipped: check them with describe_fio_error and record the run as
// workload-failed instead.
std::vector<JournalMetric> fio_metrics(std::string_view workload, const FioDocument& run);

// Cost metrics of one run of `workload` (samples/cost.hpp): <workload>.guest_cpu_per_gib (s/GiB),
// .host_cpu_per_gib (s/GiB) and, when `per_request` (fio), .host_cpu_per_req (us/req), all lower is
// better; a figure without its data, or with no CPU, byte or request counted, is left out.
std::vector<JournalMetric> cost_metrics(std::string_view workload, const RunCost& cost, bool per_request);

}  // namespace abvm
