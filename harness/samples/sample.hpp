#pragma once
// Samples: the measurements every later stage works on. A sample is one run's value of one
// metric, and it knows which side it belongs to, where it stood in the overall run order,
// and (when known) which boot it came from: runs that share a boot are not independent,
// so the analysis aggregates them per boot.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/vocabulary.hpp"

namespace abvm {

// When a measured run ran, on the host's clock (Unix epoch seconds), mapped from the guest's clock
// per boot: the evidence that A and B were measured under the same conditions. Where designs run
// A and B at once, the faster guest keeps a filler load going after its measured run until its
// partner's run ends (load_end), so that neither side measures alone. Invariant (the journal
// checks it): start <= end <= load_end, every number finite, clock_error >= 0.
struct RunTiming {
  std::optional<double> go;   // when the host said go for this run (designs with a barrier); nullopt otherwise
  double start = 0, end = 0;  // the measured run
  double load_end = 0;        // when this guest's load stopped (after a faster run, when its filler
                              // ended; == end without one)
  std::optional<double> fill; // when its filler began (a moment after end: the gap is not load);
                              // unset: the load went on from end to load_end
  double clock_error = 0;     // half-width (s) of the guest-to-host clock mapping's uncertainty

  bool operator==(const RunTiming&) const = default;
};

// How much of a run its partner run's guest was under load (measured run or filler). The partner
// is the run of the same block and workload with the same run index on the other side.
struct RunOverlap {
  std::string partner;        // the partner's trial id
  double run = 0;             // share (0..1) of this run's [start,end] during which the partner was under load
  double pair = 0;            // min of the two runs' shares: what the pair is judged by (same value on both lines)

  bool operator==(const RunOverlap&) const = default;
};

// What a journal knows of a run besides its values: the same for the samples of each of its metrics.
// Plain input files know none of it.
struct RunFacts {
  std::optional<std::string> boot;     // boot (trial) id when known
  int run_in_boot = 0;                 // 0-based index of the run within its boot
  std::optional<int> block;            // A/B block number when the schedule interleaved blocks
  std::string host;                    // the host that ran it, when known (a pool's blocks differ)
  // When the run ran (journals that record it; nullopt otherwise), for the plots, and the overlap
  // of its pair (RunOverlap::pair): designs whose runs are meant to overlap leave out the pairs
  // that overlapped too little (verdict/analysis.hpp AnalysisOptions::min_overlap).
  std::optional<RunTiming> timing;
  std::optional<double> overlap;
};

// Where values came from and what is known of their run: one shared copy per input file (its path,
// no facts) or per journal run ("trial t0003 run 1" and the run's facts), which every value of it
// points at. A name per value cost 2M allocations and ~100 MB at 2 x 1M values, and a pointer each
// for the name and the facts 24 bytes a value (harness/bench/analyze_size.sh).
struct SampleOrigin {
  std::string name;                    // for messages: a file's path, or "trial t0003 run 1"
  RunFacts facts;                      // all unknown for a file's values
};

inline std::shared_ptr<const SampleOrigin> sample_origin(std::string name, RunFacts facts = {}) {
  return std::make_shared<const SampleOrigin>(SampleOrigin{std::move(name), std::move(facts)});
}

// One run's value of one metric. 40 bytes: 2 x 1M values read from files hold 80 MB of them
// (64 bytes and 128 MB with a pointer each for the source and the facts; 224 bytes and 448 MB
// with the run's facts in each sample).
struct Sample {
  double value = 0;
  // 0-based position of this run in the overall order of the experiment (both sides).
  // For plain input files without order information it is the index within its side.
  std::int64_t order = 0;
  std::uint32_t line = 0;              // 1-based line of the value in the file origin->name; 0: the name says it all
  bool order_known = false;            // true when order comes from an interleaved schedule
  std::shared_ptr<const SampleOrigin> origin;  // null: nothing known (a value made in code)

  // Where the value came from, for messages: "file:line", "trial t0003 run 1", "" when unknown.
  std::string source() const {
    if (!origin || origin->name.empty()) return {};
    return line == 0 ? origin->name : origin->name + ":" + std::to_string(line);
  }
  // The run's facts; all unknown without any.
  const RunFacts& run() const {
    static const RunFacts none;
    return origin ? origin->facts : none;
  }
};
static_assert(sizeof(Sample) <= 40, "2 x 1M samples are 80 MB: keep a Sample this small");

// A line number as Sample::line keeps it (a file of more than 4G lines says line 0: its name alone).
inline std::uint32_t sample_line(std::size_t line) {
  return line <= UINT32_MAX ? static_cast<std::uint32_t>(line) : 0;
}

// One metric of a comparison: the same named quantity measured on both sides.
struct MetricSamples {
  std::string name;                    // e.g. "dd.write.bandwidth", "fio.seqwrite.write.iops"
  std::string unit;                    // e.g. "B/s", "IOPS", "ns"
  Better better = Better::higher;
  std::vector<Sample> a;
  std::vector<Sample> b;
  // False: reported with its effect and interval, but no part of the verdict (a cost metric the
  // experiment's [analysis] metrics does not name, samples/select.hpp).
  bool judged = true;
};

// Something that failed instead of producing a sample; counted and reported, never averaged in.
struct FailedRun {
  Side side = Side::a;
  std::string what;                    // e.g. "fio job 'seqwrite' reported error 5"
  std::string outcome;                 // e.g. "workload-failed", "panic", "timeout"
  std::string source;                  // "file:line" or trial id
  bool operator==(const FailedRun&) const = default;
};

// A workload whose runs gave no metric on either side: every run of it failed (or, from an experiment's
// [analysis] metrics, a metric asked for that no run reported). It has no MetricSamples at all, so
// without this record it would be silently absent from the verdict (issue 20); the verdict stage
// makes it inconclusive and says why.
struct MissingData {
  std::string workload;
  std::vector<std::string> metrics;    // the metrics asked of it ([analysis] metrics); empty: all of them
  std::size_t runs_a = 0, runs_b = 0;  // its runs per side in the input (all failed)
  std::string first_failure;           // the first failed run's FailedRun::what ("" when it never ran)
  std::vector<std::string> reported;   // a metric asked for that no run reported: the metrics its runs do report
  bool operator==(const MissingData&) const = default;
};

// How long one workload's measured runs were on one side (run/sizing.hpp): the size they ran
// with in the tool's words ("bs=8M count=80"; "" when the journal did not record it) and the
// median of their times on the host's clock (nullopt without timings).
struct RunLength {
  std::string workload;
  std::string size;
  std::optional<double> median_seconds;
  std::size_t runs = 0;                // the ok runs the median is over
  bool operator==(const RunLength&) const = default;
};

// Where a side was measured: two sides measured on different hosts or accelerators
// are compared with a warning.
struct SideContext {
  std::vector<std::string> hosts;
  std::vector<Accelerator> accelerators;
  // What the side's guests reported of their module parameters: parameter ("virtio_blk.queue_depth")
  // -> value -> number of boots that reported it. Proves what a side set (e.g. through
  // cmdline_append) reached the driver; empty for inputs without guest reports.
  std::map<std::string, std::map<std::string, int>> module_params;
  // The same for the facts the side is checked against (samples/journal.hpp JournalEntry::facts):
  // "virtio_f_access_platform" -> {"negotiated": 12}, counted over every boot that reported them.
  std::map<std::string, std::map<std::string, int>> facts;
  // Each workload's run length on this side, in first-seen order (journals only).
  std::vector<RunLength> run_lengths;
  bool operator==(const SideContext&) const = default;
};

struct SampleSet {
  std::vector<MetricSamples> metrics;     // in first-seen order
  std::vector<FailedRun> failures;
  std::vector<MissingData> missing;       // workloads (or metrics asked for) with no valid run on either side
  SideContext context_a;
  SideContext context_b;
  // Things about the input the user should hear of that are not failures, in plain words with
  // their location, e.g. a dd run with partial records or an unfinished last journal line.
  std::vector<std::string> notes;
};

}  // namespace abvm
