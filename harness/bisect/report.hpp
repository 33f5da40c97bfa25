#pragma once
// What a bisection found, for people and programs. Pure writers: each turns the plan, the
// ledger and the strategy's state into bytes; the caller writes them.
//   bisect.json    report/bisect_schema.json (schema_version 1)
//   summary.txt    the terminal summary: every step with its finding and effect, then the answer
//   bisect.html    one self-contained page (report/template.html): the answer, the error budget,
//                  the effect of every tested step against its reference with its interval along
//                  the series (inline SVG), every step with a link to its own report.html
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bisect/directory.hpp"
#include "bisect/strategy.hpp"

namespace abvm {

struct BisectReport {
  const BisectPlan& plan;
  const std::vector<StepRecord>& steps;
  const BisectState& state;
  bool interrupted = false;     // stopped mid-step: `abvm bisect --resume` goes on
};

// The answer in one or two sentences, e.g. "Patch 3 (0003-...) makes it slower: kernel 3 against
// kernel 2 ...".
std::string bisect_sentence(const BisectReport& report);

nlohmann::json bisect_json(const BisectReport& report);

// Serialised with two-space indentation and a trailing newline.
std::string bisect_json_text(const BisectReport& report);

std::string bisect_summary(const BisectReport& report);

// `template_html` holds {{title}} and {{body}} (report/html.hpp load_html_template()).
std::string bisect_html(const BisectReport& report, const std::string& template_html);

// As `abvm run`'s: 1 when the series is slower (a culprit, or a range holding it, is named), 0
// when it is not slower by more than the margin, 4 when that could not be settled.
int bisect_exit_code(const BisectState& state);

}  // namespace abvm
