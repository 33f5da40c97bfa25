#pragma once
// Internal to guest/: the first half of parse_guest_console (guest/record_scanner.cpp): the
// records of one nonce found anywhere in the console, each checked by its checksum and rebuilt
// where kernel text split its line. guest/report_reader.hpp reads them into a GuestReport.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "guest/records.hpp"

namespace abvm::detail {

// The only spelling of the record format's marker (and its version). Format 2 (issue 27) added the
// CPU and NEXT records: an agent of format 1 (kFormerMarker) reports no run's cost.
inline constexpr std::string_view kMarker = "ABVM2:";
inline constexpr std::string_view kFormerMarker = "ABVM1:";

struct Record {
  std::uint64_t seq = 0;
  std::string type;
  std::string payload;
};

// The records of `nonce` in `console` by sequence number, and in `problems` what could not be
// trusted; `work` counts what that cost (linear in the console's size).
std::map<std::uint64_t, Record> collect_records(std::string_view console, std::string_view nonce, ParseWork& work,
                                                std::vector<std::string>& problems);

}  // namespace abvm::detail
