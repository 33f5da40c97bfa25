#pragma once
// Progress while an experiment runs: trials done and left, the current side, elapsed and
// estimated remaining time, and the running effect estimate. On a terminal one line is
// rewritten in place ('\r'); otherwise (CI logs, files) each update is a plain line.
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace abvm {

struct ProgressState {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string current;                  // "t0007 B (dma-api)", empty between trials
  double elapsed_seconds = 0;
  std::optional<double> remaining_seconds;  // unknown before the first trial of a session
  std::string effect;                   // e.g. "dd-write.bandwidth B/A 0.953", may be empty
  std::string last;                     // outcome of the trial just finished, e.g. "t0006 A ok 4.1 s"
};

// "12:34" / "1:02:03": minutes and seconds, hours when needed.
std::string format_clock(double seconds);

// One line, without line ends, e.g.
// "[7/20] running t0007 B (dma-api) | 0:52 elapsed, ~1:36 left | dd-write.bandwidth B/A 0.953"
std::string format_progress(const ProgressState& state);

class ProgressPrinter {
 public:
  // `tty`: rewrite one line in place; else print a line per update.
  ProgressPrinter(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  void update(const ProgressState& state);
  // A message that must stay visible (a failed trial, a warning): clears the progress line first.
  void message(const std::string& text);
  // Ends the in-place line, if any.
  void finish();

 private:
  std::FILE* out_;
  bool tty_;
  std::size_t width_ = 0;               // length of the line on screen (tty)
};

}  // namespace abvm
