#include "report/format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>

namespace abvm {

std::string format_value(double value, const std::string& unit) {
  if (std::isnan(value)) return "-";
  if (unit == "B/s" || unit == "B") {
    static constexpr std::array<const char*, 5> prefixes = {"", "k", "M", "G", "T"};
    double v = value;
    std::size_t i = 0;
    while (std::abs(v) >= 1000 && i + 1 < prefixes.size()) {
      v /= 1000;
      ++i;
    }
    return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
  }
  if (unit == "ns" || unit == "us" || unit == "ms" || unit == "s") {
    double ns = unit == "ns" ? value : unit == "us" ? value * 1e3 : unit == "ms" ? value * 1e6 : value * 1e9;
    if (std::abs(ns) < 1e3) return fmt::format("{:.3g} ns", ns);
    if (std::abs(ns) < 1e6) return fmt::format("{:.3g} us", ns / 1e3);
    if (std::abs(ns) < 1e9) return fmt::format("{:.3g} ms", ns / 1e6);
    return fmt::format("{:.3g} s", ns / 1e9);
  }
  if (unit.empty()) return fmt::format("{:.4g}", value);
  return fmt::format("{:.4g} {}", value, unit);
}

std::string overlap_words(std::uint64_t pairs, double min, double median, std::uint64_t voided,
                          std::optional<double> threshold) {
  const auto share = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f} %", v * 100) : std::string("-"); };
  std::string out = fmt::format("overlap of A's and B's runs: min {}, median {} over {} pair{}", share(min),
                                share(median), pairs, pairs == 1 ? "" : "s");
  if (!threshold) return out + "; nothing left out (no minimum asked: only co-scheduled runs must overlap)";
  const std::string required = fmt::format("{:.3g} %", *threshold * 100);
  if (voided == 0) return out + fmt::format("; none below the {} required", required);
  return out + fmt::format("; {} below the {} required, left out", voided, required);
}

std::string missing_title(const MissingData& d) {
  return d.metrics.empty() ? d.workload : fmt::format("{}", fmt::join(d.metrics, ", "));
}

std::string missing_words(const MissingData& d) {
  const std::string title = missing_title(d);
  if (!d.reported.empty()) {
    return fmt::format("{}: no run of {} reported {} (its runs report {}): inconclusive", title, d.workload,
                       d.metrics.size() == 1 ? "it" : "them", fmt::join(d.reported, ", "));
  }
  if (d.first_failure.empty()) return fmt::format("{}: no run in the results: inconclusive", title);
  return fmt::format("{}: no valid run on either side (every run failed: {} on A, {} on B): inconclusive", title,
                     d.runs_a, d.runs_b);
}

}  // namespace abvm
