#include "samples/numbers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

std::string_view strip_comment(std::string_view line) {
  std::size_t hash = line.find('#');
  return text::trim(line.substr(0, hash));
}

}  // namespace

NumbersRead read_numbers(std::string_view text, std::string_view source) {
  NumbersRead read;
  // Room for a value a line at once: growing by doubling copied and faulted in 1M values' pages twice.
  read.values.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  for (const auto& [line, number] : text::split_lines(text)) {
    std::string_view field = strip_comment(line);
    if (field.empty()) continue;
    const text::ParsedNumber parsed = text::parse_number(field);
    std::string problem;
    if (parsed.status == text::NumberStatus::out_of_range)
      problem = fmt::format("\"{}\" is out of range: a value must lie between about 4.9e-324 and "
                            "1.8e308 in magnitude; check its unit",
                            field);
    else if (parsed.status == text::NumberStatus::not_a_number)
      problem = fmt::format("\"{}\" is not a number: write one value per line ('#' starts a comment)", field);
    else if (!std::isfinite(parsed.value))
      problem = fmt::format("\"{}\" is not a finite number: remove the line or replace it with the measured value",
                            field);
    if (!problem.empty() && read.error.empty()) {
      read.error = located(source, number, problem);
      read.values.clear();  // parse_numbers gives none of them
      read.values.shrink_to_fit();
    }
    // "nan", "inf" and out-of-range numbers count as number-shaped so that parse_numbers names
    // the line.
    if (parsed.status == text::NumberStatus::not_a_number) {
      read.first_bad = number;
      return read;
    }
    ++read.numbers;
    if (read.error.empty()) read.values.push_back({parsed.value, number});
  }
  if (read.numbers == 0) read.error = located(source, 0, "no values: write one number per line");
  return read;
}

std::vector<NumberValue> parse_numbers(std::string_view text, std::string_view source) {
  return values_or_throw(read_numbers(text, source));
}

std::vector<NumberValue> values_or_throw(NumbersRead&& read) {
  if (!read.error.empty()) throw Error(read.error);
  return std::move(read.values);
}

bool looks_like_numbers(std::string_view text, std::size_t* first_bad) {
  const NumbersRead read = read_numbers(text, "");
  const bool numbers = read.first_bad == 0 && read.numbers > 0;
  if (!numbers && first_bad) *first_bad = read.first_bad;
  return numbers;
}

}  // namespace abvm
