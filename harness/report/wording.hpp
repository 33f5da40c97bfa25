#pragma once
// The report's sentences: what the analysis found (verdict/findings.hpp) and its headline per
// metric, in the words every output shows (the terminal, analysis.json's "headline", "warnings"
// and "notes", the HTML, JUnit). Said here once: two outputs cannot word one fact differently.
#include <string>
#include <vector>

#include "verdict/analysis.hpp"
#include "verdict/findings.hpp"
#include "verdict/report_model.hpp"

namespace abvm {

// One finding in words, e.g. "Few boots: A has 6, B has 6. Rank-based intervals need ...".
std::string sentence(const MetricFinding& finding);
std::string sentence(const ExperimentFinding& finding);

// The sentences of the findings of one severity, in the order found.
std::vector<std::string> sentences(const std::vector<MetricFinding>& findings, Severity severity);
std::vector<std::string> sentences(const std::vector<ExperimentFinding>& findings, Severity severity);

// What a reader of the verdict word alone must also see (issue 20): a no_change whose interval
// excludes 1 ("a significant shift, inside the ±5.0 % margin"), or an inconclusive whose shift is
// significant but estimated inside the margin while its interval reaches past it. "" otherwise.
// Every output says it in these words: the headline, the terminal's verdict lines, the HTML.
std::string margin_qualifier(Verdict verdict, const OrientedEffect& effect, double margin);

// The metric's verdict in one sentence, e.g.
//   "B is 4.9 % worse than A in dd-read.bandwidth (B/A 0.951; 95 % CI -7.1 % to -2.6 %, >0 is better): regression"
// or, with nothing to compare, why: "bw: no valid runs on side B: inconclusive".
std::string headline(const ReportMetric& metric, double margin);

}  // namespace abvm
