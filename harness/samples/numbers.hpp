#pragma once
// Plain numbers: one value per line. Blank lines and '#' comments (whole-line or after the
// value) are allowed. The values carry no unit or direction: those come from the command line.
#include <cstddef>
#include <string_view>
#include <vector>

namespace abvm {

struct NumberValue {
  double value = 0;
  std::size_t line = 0;   // 1-based
};

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
