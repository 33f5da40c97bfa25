#include "samples/text.hpp"

#include <charconv>

namespace abvm::text {

void Lines::iterator::next() {
  if (last_ || rest_.empty()) {
    at_end_ = true;
    return;
  }
  const std::size_t nl = rest_.find('\n');
  std::string_view line = rest_.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  line_ = {line, line_.number + 1};
  last_ = nl == std::string_view::npos;
  if (!last_) rest_.remove_prefix(nl + 1);
}

Lines split_lines(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return Lines(text);
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n\v\f";
  std::size_t b = s.find_first_not_of(space);
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(space);
  return s.substr(b, e - b + 1);
}

ParsedNumber parse_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return {};
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (end != s.data() + s.size()) return {};
  if (ec == std::errc::result_out_of_range) return {NumberStatus::out_of_range, 0};
  if (ec != std::errc{}) return {};
  return {NumberStatus::ok, v};
}

std::optional<double> parse_double(std::string_view s) {
  const ParsedNumber p = parse_number(s);
  if (p.status != NumberStatus::ok) return std::nullopt;
  return p.value;
}

std::optional<unsigned long long> parse_uint(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace abvm::text
