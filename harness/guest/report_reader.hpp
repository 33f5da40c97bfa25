#pragma once
// Internal to guest/: the second half of parse_guest_console (guest/report_reader.cpp): the
// checked records (guest/record_scanner.hpp) read, in sequence order, into a GuestReport, with
// what they lack or get wrong in its problems.
#include <cstdint>
#include <map>

#include "guest/record_scanner.hpp"
#include "guest/records.hpp"

namespace abvm::detail {

// Reads `records` into `report`, which holds the scanner's problems already.
void read_report(const std::map<std::uint64_t, Record>& records, GuestReport& report);

}  // namespace abvm::detail
