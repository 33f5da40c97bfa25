#include "core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <limits>
#include <utility>

#include "core/error.hpp"

namespace abvm {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "<digits><rest>"; false when there are no leading digits or the number overflows.
bool split_number(std::string_view text, std::uint64_t& number, std::string_view& rest) {
  std::size_t i = 0;
  number = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    number = number * 10 + digit;
    ++i;
  }
  rest = text.substr(i);
  return i > 0;
}

bool multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
  out = a * b;
  return true;
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  const auto fail = [&] {
    return Error(fmt::format(
        "invalid size '{}': write a whole number of bytes with an optional K, M, G or T suffix "
        "(binary: 1K = 1024), e.g. \"512K\", \"8M\", \"1G\"",
        text));
  };
  std::uint64_t number = 0;
  std::string_view rest;
  if (!split_number(text, number, rest)) throw fail();
  const std::string unit = lower(rest);
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 10> units{{
      {"", 1}, {"b", 1},
      {"k", 1ULL << 10}, {"kib", 1ULL << 10},
      {"m", 1ULL << 20}, {"mib", 1ULL << 20},
      {"g", 1ULL << 30}, {"gib", 1ULL << 30},
      {"t", 1ULL << 40}, {"tib", 1ULL << 40},
  }};
  for (const auto& [name, factor] : units) {
    if (unit == name) {
      std::uint64_t bytes = 0;
      if (!multiply(number, factor, bytes)) throw fail();
      return bytes;
    }
  }
  throw fail();
}

std::chrono::milliseconds parse_duration(std::string_view text) {
  const auto fail = [&] {
    return Error(fmt::format(
        "invalid duration '{}': write a whole number with a unit ms, s, m or h, e.g. \"500ms\", "
        "\"60s\", \"2m\", \"1h\"",
        text));
  };
  std::uint64_t number = 0;
  std::string_view rest;
  if (!split_number(text, number, rest)) throw fail();
  const std::string unit = lower(rest);
  std::uint64_t factor = 0;
  if (unit == "ms") factor = 1;
  else if (unit == "s") factor = 1000;
  else if (unit == "m") factor = 60'000;
  else if (unit == "h") factor = 3'600'000;
  else throw fail();
  std::uint64_t ms = 0;
  if (!multiply(number, factor, ms) ||
      ms > static_cast<std::uint64_t>(std::numeric_limits<std::chrono::milliseconds::rep>::max())) {
    throw fail();
  }
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(ms));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::pair<char, unsigned>, 4> units{{{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};
  if (bytes == 0) return "0";
  for (const auto& [suffix, shift] : units) {
    const std::uint64_t factor = 1ULL << shift;
    if (bytes % factor == 0) return fmt::format("{}{}", bytes / factor, suffix);
  }
  return fmt::format("{}", bytes);
}

std::string format_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return fmt::format("{}h", ms / 3'600'000);
  if (ms % 60'000 == 0) return fmt::format("{}m", ms / 60'000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

}  // namespace abvm
