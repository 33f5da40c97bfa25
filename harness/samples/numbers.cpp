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
    const text::ParsedNumber parsed = text::parse_number(field);
    if (parsed.status == text::NumberStatus::out_of_range)
      throw Error(located(source, number,
                          fmt::format("\"{}\" is out of range: a value must lie between about 4.9e-324 and "
                                      "1.8e308 in magnitude; check its unit",
                                      field)));
    auto v = parsed.status == text::NumberStatus::ok ? std::optional<double>(parsed.value) : std::nullopt;
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
    // "nan", "inf" and out-of-range numbers count as number-shaped so that parse_numbers names
    // the line.
    if (text::parse_number(field).status == text::NumberStatus::not_a_number) {
      if (first_bad) *first_bad = number;
      return false;
    }
    any = true;
  }
  if (!any && first_bad) *first_bad = 0;
  return any;
}

}  // namespace abvm
