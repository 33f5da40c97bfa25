#pragma once
// Consoles a hostile guest could print to make the record parser slow: the worst cases of
// guest/record_scanner.cpp, for the parser's tests (guest_records_parse_test.cpp), its benchmark
// (bench/records_parse_bench.cpp) and the fuzz corpus. The guest knows its nonce, so these use it.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace abvm::test {

enum class Hostile {
  nested_markers,   // one line of "ABVM2:<nonce>:" repeated: every marker inside one run
  record_chars,     // one line of record characters with a marker and a well-formed head
  broken_records,   // heads with a long last field, each followed by tails that fit any split
  shared_tails,     // many heads on one line, all sharing the same tail lines
  far_newlines,     // markers followed by long stretches of spaces and carriage returns
};

inline constexpr std::array<Hostile, 5> kHostileKinds = {Hostile::nested_markers, Hostile::record_chars,
                                                         Hostile::broken_records, Hostile::shared_tails,
                                                         Hostile::far_newlines};

inline std::string_view to_string(Hostile kind) {
  switch (kind) {
    case Hostile::nested_markers: return "nested-markers";
    case Hostile::record_chars: return "record-chars";
    case Hostile::broken_records: return "broken-records";
    case Hostile::shared_tails: return "shared-tails";
    case Hostile::far_newlines: return "far-newlines";
  }
  return "?";
}

// About `bytes` bytes of console (never less) of the given kind.
inline std::string hostile_console(std::string_view nonce, std::size_t bytes, Hostile kind) {
  const std::string head = "ABVM2:" + std::string(nonce) + ":7:OUT:";
  const std::string glue(1024, 'x');           // the longest kernel word a split may hide
  const std::string md5_tail = ":" + std::string(32, 'f');  // the tail of a payload: any split fits
  std::string unit;
  switch (kind) {
    case Hostile::nested_markers: unit = "ABVM2:" + std::string(nonce) + ":"; break;
    case Hostile::record_chars: unit = head + std::string(8192 - head.size(), 'Q'); break;
    case Hostile::broken_records:
      unit = head + glue + "\n";
      for (int i = 0; i < 4; ++i) unit += md5_tail + "\n";
      break;
    case Hostile::shared_tails: unit = head + glue + " "; break;
    case Hostile::far_newlines: unit = head + std::string(2000, ' ') + std::string(2000, '\r'); break;
  }
  std::string out;
  out.reserve(bytes + unit.size() + 256);
  while (out.size() < bytes) {
    out += unit;
    // Lines end now and then, with tails that fit the heads before them.
    if (kind == Hostile::shared_tails && out.size() % (1 << 16) < unit.size()) {
      for (int i = 0; i < 4; ++i) out += "\n" + md5_tail;
      out += "\n";
    }
  }
  return out;
}

}  // namespace abvm::test
