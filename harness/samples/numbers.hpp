#pragma once
// Plain numbers: one value per line. Blank lines and '#' comments (whole-line or after the
// value) are allowed. The values carry no unit or direction: those come from the command line.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

struct NumberValue {
  double value = 0;
  std::size_t line = 0;   // 1-based
};

// A text read once as plain numbers, for both functions below and for format detection, which keeps
// it (a file of 1M numbers was parsed twice, once to detect its format): the number-shaped lines up
// to the first that is not one, and what parse_numbers makes of them.
struct NumbersRead {
  std::vector<NumberValue> values;   // parse_numbers' values; empty with an error
  std::size_t numbers = 0;           // number-shaped lines before first_bad (NaN, inf, 1e400 included)
  std::size_t first_bad = 0;         // the first line that is not number-shaped; 0: none is
  std::string error;                 // the message parse_numbers throws ("" when it returns the values)
};
NumbersRead read_numbers(std::string_view text, std::string_view source);

// The values, or Error(read.error).
std::vector<NumberValue> values_or_throw(NumbersRead&& read);

// Throws Error "source:line: ..." for a line that is not a finite number (NaN, inf, garbage,
// two values on one line; "out of range" for 1e400 or 1e-400), and "source: ..." when there is
// no value at all. A UTF-8 byte-order mark at the start is skipped.
std::vector<NumberValue> parse_numbers(std::string_view text, std::string_view source);

// True when the text holds at least one number-shaped line (NaN, inf and out-of-range values included, so that
// parse_numbers reports them) and every other line is blank or a comment
// (for format auto-detection; no throw). On false, *first_bad (if given) is the first line
// that is not a number (0 when the text holds no value).
bool looks_like_numbers(std::string_view text, std::size_t* first_bad = nullptr);

}  // namespace abvm
