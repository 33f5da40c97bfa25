#pragma once
// The JSON report (schema_version 1): a pure function of the analysis. CI jobs and the HTML report
// read it, so the fields named in report/schema.json are stable; new fields may be added.
#include <nlohmann/json.hpp>
#include <string>

#include "verdict/analysis.hpp"

namespace abvm {

// What the caller knows about where the data came from (input files or a results directory).
struct ReportSource {
  std::string kind;                 // "files" or "results"
  std::vector<std::string> a, b;    // input files per side (kind "files")
  std::string results_dir;          // kind "results"
  std::string a_label = "A", b_label = "B";
  // kind "results": the run's design ("sequential-blocks", "co-scheduled") and, for sequential
  // stopping, the look that decided and its level (run.json's stop_reason); "" when not known.
  std::string design, decided_by;
};

// Runs listed per side and metric in "runs": a reader (the plots, a CI job) needs a picture of
// the runs, not all of 2 x 1,000,000 of them (the journal keeps every run). Beyond the limit the
// listing is an evenly spaced selection over the input order; each listed run carries its "index"
// (what "outliers" refers to) and the side says how many runs it left out ("runs_omitted"). The
// outlier lists hold their first kMaxListedRuns indices ("outliers_omitted": the rest).
inline constexpr std::size_t kMaxListedRuns = 2000;

nlohmann::json json_report(const Analysis& analysis, const ReportSource& source);

// Serialised with two-space indentation and a trailing newline. NaN becomes null.
std::string json_report_text(const Analysis& analysis, const ReportSource& source);

}  // namespace abvm
