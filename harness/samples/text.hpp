#pragma once
// Small text helpers shared by the input parsers of this stage (not a public API of abvm).
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace abvm::text {

struct Line {
  std::string_view text;   // without the '\n' (and without a trailing '\r' from CRLF files)
  std::size_t number = 0;  // 1-based
};

// Splits on '\n'. A final line without '\n' is kept; an empty text gives no lines.
std::vector<Line> split_lines(std::string_view text);

std::string_view trim(std::string_view s);

// The whole of `s` as a double (a leading '+' allowed), or nothing. NaN and infinities are
// returned as parsed: callers decide whether they are acceptable.
std::optional<double> parse_double(std::string_view s);

// The whole of `s` as an unsigned 64-bit integer (digits only), or nothing (also on overflow).
std::optional<unsigned long long> parse_uint(std::string_view s);

}  // namespace abvm::text
