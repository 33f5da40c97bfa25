#pragma once
// GNU dd's summary lines -> runs.
//
// Accepts any text that holds dd summary lines, one per run, e.g. the standard error of
// several `dd ... oflag=direct` runs with other text in between:
//   8589934592 bytes (8.6 GB, 8.0 GiB) copied, 1.95557 s, 4.4 GB/s     coreutils >= 8.24
//   100 bytes copied, 7.2458e-05 s, 1.4 MB/s                          under 1000 bytes
//   1 byte copied, 3.3359e-05 s, 30.0 kB/s
//   8589934592 bytes copied, 1.95557 s                                no rate field
//   8589934592 bytes (8.6 GB) copied, 1.95557 seconds, 4.4 GB/s       coreutils < 8.24
// The rate field may use any unit ("kB/s", "MiB/s", "Infinity B/s"); it is checked for shape
// and otherwise ignored, because it is rounded to two digits: bandwidth is bytes / seconds.
// "records in/out" lines are read to notice partial records ("1024+1 records in").
// status=progress updates (carriage-return separated, whole seconds) are not runs.
//
// Every line that starts with digits followed by " byte"/" bytes" is taken to be a summary
// line and must parse completely: a garbled or cut-off summary is an error, never skipped.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

struct DdRun {
  std::uint64_t bytes = 0;
  double seconds = 0;
  double bandwidth = 0;          // bytes / seconds, in B/s
  std::size_t line = 0;          // 1-based line of the summary line
  // The run's "records in"/"records out" lines counted partial records ("N+M" with M > 0):
  // a short read or a block size that does not divide the data. The run is still measured
  // (bytes are what was copied), but the user should know. Holds the first such line, as
  // printed ("1024+1 records in"), or is empty.
  std::string partial_records;
};

// Throws Error "source:line: ..." on a malformed summary line or a time that is not a
// positive finite number, and "source: ..." when the text holds no summary line at all.
std::vector<DdRun> parse_dd(std::string_view text, std::string_view source);

// True when some line looks like a dd summary line (for format auto-detection; no throw).
bool looks_like_dd(std::string_view text);

}  // namespace abvm
