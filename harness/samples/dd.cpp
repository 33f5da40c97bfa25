#include "samples/dd.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

constexpr std::string_view kExpected =
    "expected \"N bytes (H, H) copied, S s, R UNIT/s\" as GNU dd prints it";

bool starts_with_digit(std::string_view s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s.front())) != 0;
}

// "<digits> byte" at the start, followed by "s", a space or the end: the lines parse_dd owns.
bool is_summary_candidate(std::string_view line) {
  line = text::trim(line);
  if (!starts_with_digit(line)) return false;
  std::size_t i = 0;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) ++i;
  std::string_view rest = line.substr(i);
  if (!rest.starts_with(" byte")) return false;
  rest.remove_prefix(5);
  if (rest.starts_with("s")) rest.remove_prefix(1);
  return rest.empty() || rest.front() == ' ';
}

// A line of dd's progress output: updates separated by '\r' (CRLF endings are already gone).
bool is_progress(std::string_view line) { return line.find('\r') != std::string_view::npos; }

struct Parsed {
  std::uint64_t bytes = 0;
  std::string seconds_text;
  std::optional<double> seconds;  // empty when the text is not a number at all
};

// Parses one candidate line; nullopt when it does not follow dd's grammar.
std::optional<Parsed> parse_summary(std::string_view line) {
  line = text::trim(line);
  Parsed p;
  std::size_t sp = line.find(' ');
  auto bytes = text::parse_uint(line.substr(0, sp));
  if (!bytes) return std::nullopt;
  p.bytes = *bytes;
  line.remove_prefix(sp + 1);
  if (line.starts_with("bytes")) line.remove_prefix(5);
  else if (line.starts_with("byte")) line.remove_prefix(4);
  else return std::nullopt;
  // Optional human-readable part: " (8.6 GB, 8.0 GiB)" or the older " (8.6 GB)".
  if (line.starts_with(" (")) {
    std::size_t close = line.find(')');
    if (close == std::string_view::npos) return std::nullopt;
    line.remove_prefix(close + 1);
  }
  if (!line.starts_with(" copied, ")) return std::nullopt;
  line.remove_prefix(9);
  std::size_t unit_sp = line.find(' ');
  if (unit_sp == std::string_view::npos) return std::nullopt;
  p.seconds_text = std::string(line.substr(0, unit_sp));
  line.remove_prefix(unit_sp + 1);
  if (line.starts_with("seconds")) line.remove_prefix(7);
  else if (line.starts_with("s")) line.remove_prefix(1);
  else return std::nullopt;
  if (!line.empty()) {
    // The rate: ", 4.4 GB/s", ", 1.0 MiB/s", ", Infinity B/s".
    if (!line.starts_with(", ") || !line.ends_with("/s") || line.size() < 5) return std::nullopt;
  }
  // dd prints seconds in the C locale, but a decimal comma ("1,95557") comes from others.
  std::string number = p.seconds_text;
  for (char& c : number) if (c == ',') c = '.';
  p.seconds = text::parse_double(number);
  return p;
}

// "1024+1 records in" -> true when the part after '+' is not zero.
bool is_partial_records_line(std::string_view line) {
  line = text::trim(line);
  if (!line.ends_with(" records in") && !line.ends_with(" records out")) return false;
  std::size_t plus = line.find('+');
  std::size_t sp = line.find(' ');
  if (plus == std::string_view::npos || sp == std::string_view::npos || plus > sp) return false;
  auto partial = text::parse_uint(line.substr(plus + 1, sp - plus - 1));
  return partial && *partial > 0;
}

}  // namespace

bool looks_like_dd(std::string_view text) {
  // A summary line holds " byte": a text without it (1M plain numbers) needs no look at each line.
  if (text.find(" byte") == std::string_view::npos) return false;
  for (const auto& line : text::split_lines(text))
    if (!is_progress(line.text) && is_summary_candidate(line.text)) return true;
  return false;
}

std::vector<DdRun> parse_dd(std::string_view text, std::string_view source) {
  std::vector<DdRun> runs;
  std::string pending_partial;  // partial-records line seen since the previous summary
  bool saw_records = false;
  for (const auto& [line, number] : text::split_lines(text)) {
    if (is_progress(line)) continue;
    if (is_partial_records_line(line) && pending_partial.empty())
      pending_partial = std::string(text::trim(line));
    if (line.find(" records in") != std::string_view::npos) saw_records = true;
    if (!is_summary_candidate(line)) continue;

    auto parsed = parse_summary(line);
    if (!parsed)
      throw Error(located(source, number, fmt::format("malformed dd summary line \"{}\": {}",
                                                      text::trim(line), kExpected)));
    if (!parsed->seconds || !std::isfinite(*parsed->seconds) || *parsed->seconds <= 0)
      throw Error(located(
          source, number,
          fmt::format("dd reports a time of \"{} s\"; a run must take a positive, finite time "
                      "(use a larger count= so that each run lasts at least a second)",
                      parsed->seconds_text)));
    DdRun run;
    run.bytes = parsed->bytes;
    run.seconds = *parsed->seconds;
    run.bandwidth = static_cast<double>(run.bytes) / run.seconds;
    run.line = number;
    run.partial_records = std::move(pending_partial);
    pending_partial.clear();
    runs.push_back(std::move(run));
  }
  if (runs.empty()) {
    if (saw_records)
      throw Error(located(source, 0,
                          "dd \"records in/out\" lines but no summary line (\"N bytes ... copied, "
                          "S s, ...\"): this dd does not print one (busybox?); use GNU dd, or "
                          "give the times as plain numbers with --format numbers"));
    throw Error(located(source, 0,
                        "no dd summary line (\"N bytes ... copied, S s, ...\"): pass the "
                        "standard error of dd (dd ... 2>FILE), or choose another --format"));
  }
  return runs;
}

}  // namespace abvm
