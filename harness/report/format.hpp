#pragma once
// Number formatting shared by the report writers: values in their unit, scaled for people.
#include <cstdint>
#include <optional>
#include <string>

#include "samples/sample.hpp"
#include "verdict/report_model.hpp"

namespace abvm {

// "4.41 GB/s", "812 µs", "1.23e+04 IOPS": SI prefixes for B/s and B, time prefixes for ns/us/ms/s,
// plain %.4g otherwise. NaN prints as "-".
std::string format_value(double value, const std::string& unit);

// How much a metric's pairs of runs overlapped and how far apart they started, in one line for the
// terminal and the HTML:
//   "overlap of A's and B's runs: min 62.0 %, median 99.6 % over 24 pairs; starts apart: median 3 ms,
//    max 380 ms; 2 started more than 50 ms apart beyond the clock errors, left out"
// Without max_start_skew_ms nothing is left out (a design whose runs alternate by intent, or an
// unknown design); a report of abvm before issue 26 says its overlap threshold as it was.
std::string overlap_words(const ReportOverlap& overlap);

// What a report calls a workload with no valid run on either side (samples/sample.hpp MissingData):
// its name, or the metrics asked of it.
std::string missing_title(const MissingData& missing);

// That workload in one line, for every reporter (terminal, HTML, JUnit):
//   "dd-read: no valid run on either side (every run failed: 2 on A, 2 on B): inconclusive"
//   "dd-read.iops: no run of dd-read reported it (its runs report dd-read.bandwidth): inconclusive"
std::string missing_words(const MissingData& missing);

}  // namespace abvm
