#pragma once
// The terminal summary: a compact table per metric (medians, ratio with interval, verdict,
// warnings). Pure: returns the text; the caller prints it.
#include <string>

#include "verdict/report_model.hpp"

namespace abvm {

struct TerminalOptions {
  std::string a_label = "A", b_label = "B";
  bool color = false;   // ANSI colours for the verdict (only when writing to a TTY)
  // Wall time one A/B block took in this run (0: unknown): turns blocks needed into minutes.
  double seconds_per_block = 0;
};

std::string terminal_report(const ReportModel& report, const TerminalOptions& options = {});

}  // namespace abvm
