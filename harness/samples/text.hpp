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

// Splits on '\n'. A final line without '\n' is kept; an empty text gives no lines. A UTF-8
// byte-order mark at the start of the text (editors on Windows write one) is skipped.
std::vector<Line> split_lines(std::string_view text);

std::string_view trim(std::string_view s);

// The one number parser of the input formats. The whole of `s` as a double (a leading '+'
// allowed): ok with the value (denormals included; NaN and infinities as parsed: callers decide
// whether they are acceptable), out_of_range for a number too large or too small in magnitude for
// a double (1e400, 1e-400), not_a_number otherwise.
enum class NumberStatus { ok, out_of_range, not_a_number };
struct ParsedNumber {
  NumberStatus status = NumberStatus::not_a_number;
  double value = 0;
};
ParsedNumber parse_number(std::string_view s);

// parse_number's value when ok, else nothing.
std::optional<double> parse_double(std::string_view s);

// The whole of `s` as an unsigned 64-bit integer (digits only), or nothing (also on overflow).
std::optional<unsigned long long> parse_uint(std::string_view s);

}  // namespace abvm::text
