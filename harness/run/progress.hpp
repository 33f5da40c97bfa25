#pragma once
// Progress while an experiment runs: trials done and left, the trials whose guests are running
// now, elapsed and estimated remaining time, and the running effect estimate. On a terminal one line is
// rewritten in place ('\r'); otherwise (CI logs, files) each update is a plain line.
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace abvm {

struct ProgressState {
  std::size_t done = 0;
  std::size_t total = 0;
  // The trials whose guests run now, "t0007 B (dma-api)": one at a time in a sequential block,
  // both of a co-scheduled one, one per busy lane in a pool; empty between trials.
  std::vector<std::string> running;
  double elapsed_seconds = 0;
  std::optional<double> remaining_seconds;  // unknown before the first block of a session ends
  std::string effect;                   // e.g. "dd-write.bandwidth B/A 0.953", may be empty
  std::string last;                     // outcome of the trial just finished, e.g. "t0006 A ok 4.1 s"
};

// "12:34" / "1:02:03": minutes and seconds, hours when needed.
std::string format_clock(double seconds);

// One line, without line ends, e.g.
// "[7/20] running t0007 B (dma-api) | 0:52 elapsed, ~1:36 left | dd-write.bandwidth B/A 0.953"
// "[6/20] running t0006 A (direct), t0007 B (dma-api) | 0:52 elapsed" (a co-scheduled block)
std::string format_progress(const ProgressState& state);

// The time left, from the wall times of the blocks measured so far (`block_seconds`; none: unknown):
// each of the `waiting` blocks not started yet takes their mean, each running block the mean less
// what it has run (`running_elapsed`; nothing when it already took longer), and `lanes` lanes
// share that work (blocks run one at a time per lane, and one block is not shared: never less than
// the longest of them).
std::optional<double> estimate_remaining(const std::vector<double>& block_seconds, std::size_t waiting,
                                         const std::vector<double>& running_elapsed, std::size_t lanes);

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
