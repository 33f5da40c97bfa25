#pragma once
// fio's JSON output (--output-format=json and json+) -> per-job, per-direction figures.
//
// A text may hold several documents (one per fio run, e.g. a shell loop appending to one
// file) with other lines before and between them: fio prints job descriptions and warnings
// ("note: both iodepth >= 1 and ...") on the same streams. A document starts at a line whose
// first non-blank character is '{' and ends at its matching '}'.
// json+ adds histogram "bins" to clat_ns; they are ignored.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

struct FioDirection {
  std::string direction;                       // "read", "write" or "trim"
  std::uint64_t io_bytes = 0;                  // > 0: idle directions are not listed
  double bandwidth = 0;                        // bw_bytes, B/s
  double iops = 0;
  double clat_mean_ns = 0;                     // completion latency (clat_ns.mean)
  // clat_ns.percentile as percentile -> ns, e.g. {50.0, 296960}; empty when fio was told not
  // to compute percentiles (clat_percentiles=0).
  std::map<double, double> clat_percentiles_ns;
};

// What a job cost its guest, as fio reports it: the CPU time of the job's own threads (getrusage) as
// shares of the job's run time, and its context switches.
struct FioCpu {
  double usr_pct = 0;                          // "usr_cpu"
  double sys_pct = 0;                          // "sys_cpu"
  double runtime_ms = 0;                       // "job_runtime": what the shares are of
  std::uint64_t ctx = 0;                       // "ctx"
  double seconds() const { return (usr_pct + sys_pct) / 100 * runtime_ms / 1000; }
};

struct FioJob {
  std::string name;                            // "jobname"
  // fio's "error" (an errno value). A job with an error is a failed run: its directions are
  // left empty so that nothing of it can be averaged in.
  int error = 0;
  std::vector<FioDirection> directions;
  // nullopt when fio left any of the four fields out (before 3.x no "job_runtime").
  std::optional<FioCpu> cpu;
};

struct FioDocument {
  std::size_t line = 0;                        // 1-based line where the document starts
  std::string fio_version;                     // "fio-3.33"
  std::vector<FioJob> jobs;                    // in fio's order
};

// Throws Error "source:line: ..." (line = where the document starts) for a truncated or
// invalid document or a missing/mistyped field, and "source: ..." when there is no document.
std::vector<FioDocument> parse_fio(std::string_view text, std::string_view source);

// True when the text holds a line starting with '{' and mentions "fio version" or "jobs"
// (for format auto-detection; no throw).
bool looks_like_fio(std::string_view text);

// "fio job 'fulljob' reported error 28 (No space left on device)".
std::string describe_fio_error(const FioJob& job);

}  // namespace abvm
