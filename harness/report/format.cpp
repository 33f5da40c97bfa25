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

std::string overlap_words(const ReportOverlap& o) {
  const auto share = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f} %", v * 100) : std::string("-"); };
  std::string out = fmt::format("overlap of A's and B's runs: min {}, median {} over {} pair{}", share(o.min),
                                share(o.median), o.pairs, o.pairs == 1 ? "" : "s");
  if (std::isfinite(o.skew_median_ms) && std::isfinite(o.skew_max_ms)) {
    out += fmt::format("; starts apart: median {:.3g} ms, max {:.3g} ms", o.skew_median_ms, o.skew_max_ms);
  }
  if (o.threshold) {  // a report of abvm before issue 26: its overlap rule as it said it
    const std::string required = fmt::format("{:.3g} %", *o.threshold * 100);
    if (o.voided == 0) return out + fmt::format("; none below the {} required", required);
    return out + fmt::format("; {} below the {} required, left out", o.voided, required);
  }
  if (!o.max_start_skew_ms) return out + "; nothing left out (only co-scheduled runs must start together)";
  if (o.voided == 0) {
    return out + fmt::format("; none started more than {:.3g} ms apart: nothing left out", *o.max_start_skew_ms);
  }
  return out + fmt::format("; {} started more than {:.3g} ms apart beyond the clock errors, left out", o.voided,
                           *o.max_start_skew_ms);
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
