#pragma once
// Number formatting shared by the report writers: values in their unit, scaled for people.
#include <cstdint>
#include <optional>
#include <string>

#include "samples/sample.hpp"

namespace abvm {

// "4.41 GB/s", "812 µs", "1.23e+04 IOPS": SI prefixes for B/s and B, time prefixes for ns/us/ms/s,
// plain %.4g otherwise. NaN prints as "-".
std::string format_value(double value, const std::string& unit);

// How much a metric's pairs of runs overlapped, in one line for the terminal and the HTML:
//   "overlap of A's and B's runs: min 62.0 %, median 99.6 % over 24 pairs; 2 below the 95 % required, left out"
// `threshold` nullopt: no minimum was asked (a design whose runs alternate by intent, or an unknown
// design), and nothing is left out.
std::string overlap_words(std::uint64_t pairs, double min, double median, std::uint64_t voided,
                          std::optional<double> threshold);

// What a report calls a workload with no valid run on either side (samples/sample.hpp MissingData):
// its name, or the metrics asked of it.
std::string missing_title(const MissingData& missing);

// That workload in one line, for every reporter (terminal, HTML, JUnit):
//   "dd-read: no valid run on either side (every run failed: 2 on A, 2 on B): inconclusive"
//   "dd-read.iops: no run of dd-read reported it (its runs report dd-read.bandwidth): inconclusive"
std::string missing_words(const MissingData& missing);

}  // namespace abvm
