#pragma once
// Number formatting shared by the report writers: values in their unit, scaled for people.
#include <string>

namespace abvm {

// "4.41 GB/s", "812 µs", "1.23e+04 IOPS": SI prefixes for B/s and B, time prefixes for ns/us/ms/s,
// plain %.4g otherwise. NaN prints as "-".
std::string format_value(double value, const std::string& unit);

}  // namespace abvm
