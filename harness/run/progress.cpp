#include "run/progress.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace abvm {

std::string format_clock(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_progress(const ProgressState& st) {
  std::string line = fmt::format("[{}/{}]", st.done, st.total);
  if (!st.running.empty()) line += fmt::format(" running {}", fmt::join(st.running, ", "));
  if (!st.last.empty()) line += " | last " + st.last;
  line += fmt::format(" | {} elapsed", format_clock(st.elapsed_seconds));
  if (st.remaining_seconds) line += fmt::format(", ~{} left", format_clock(*st.remaining_seconds));
  if (!st.effect.empty()) line += " | " + st.effect;
  return line;
}

std::optional<double> estimate_remaining(const std::vector<double>& block_seconds, std::size_t waiting,
                                         const std::vector<double>& running_elapsed, std::size_t lanes) {
  if (block_seconds.empty() || lanes == 0) return std::nullopt;
  const double mean = std::accumulate(block_seconds.begin(), block_seconds.end(), 0.0) /
                      static_cast<double>(block_seconds.size());
  double work = mean * static_cast<double>(waiting);
  double longest = waiting > 0 ? mean : 0.0;  // a block is not shared between lanes
  for (const double ran : running_elapsed) {
    work += std::max(0.0, mean - ran);
    longest = std::max(longest, mean - ran);
  }
  return std::max(work / static_cast<double>(lanes), longest);
}

void ProgressPrinter::update(const ProgressState& state) {
  const std::string line = format_progress(state);
  if (tty_) {
    // Pad over the previous, possibly longer, line.
    std::fprintf(out_, "\r%s%s", line.c_str(), std::string(width_ > line.size() ? width_ - line.size() : 0, ' ').c_str());
    width_ = line.size();
  } else {
    std::fprintf(out_, "abvm: %s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressPrinter::message(const std::string& text) {
  if (tty_ && width_ > 0) {
    std::fprintf(out_, "\r%s\r", std::string(width_, ' ').c_str());
    width_ = 0;
  }
  std::fprintf(out_, "abvm: %s\n", text.c_str());
  std::fflush(out_);
}

void ProgressPrinter::finish() {
  if (tty_ && width_ > 0) std::fprintf(out_, "\n");
  width_ = 0;
  std::fflush(out_);
}

}  // namespace abvm
