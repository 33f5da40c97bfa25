#include "samples/numbers.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

std::string_view strip_comment(std::string_view line) {
  std::size_t hash = line.find('#');
  return text::trim(line.substr(0, hash));
}

}  // namespace

std::vector<NumberValue> parse_numbers(std::string_view text, std::string_view source) {
  std::vector<NumberValue> values;
  for (const auto& [line, number] : text::split_lines(text)) {
    std::string_view field = strip_comment(line);
    if (field.empty()) continue;
    auto v = text::parse_double(field);
    if (!v)
      throw Error(located(source, number,
                          fmt::format("\"{}\" is not a number: write one value per line "
                                      "('#' starts a comment)",
                                      field)));
    if (!std::isfinite(*v))
      throw Error(located(source, number,
                          fmt::format("\"{}\" is not a finite number: remove the line or "
                                      "replace it with the measured value",
                                      field)));
    values.push_back({*v, number});
  }
  if (values.empty())
    throw Error(located(source, 0, "no values: write one number per line"));
  return values;
}

bool looks_like_numbers(std::string_view text, std::size_t* first_bad) {
  bool any = false;
  for (const auto& [line, number] : text::split_lines(text)) {
    std::string_view field = strip_comment(line);
    if (field.empty()) continue;
    auto v = text::parse_double(field);
    // "nan" and "inf" count as number-shaped so that parse_numbers names the line.
    if (!v) {
      if (first_bad) *first_bad = number;
      return false;
    }
    any = true;
  }
  if (!any && first_bad) *first_bad = 0;
  return any;
}

}  // namespace abvm
