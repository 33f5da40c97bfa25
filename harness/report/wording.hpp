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
// Every output says it in these words, in the headline and the verdict line.
std::string margin_qualifier(Verdict verdict, const OrientedEffect& effect, double margin);

// A side as every output names it: "dma-api (B)" when it has a label of its own, else "B".
std::string labelled(const std::string& letter, const std::string& label);

// The metric's verdict in one sentence, the one every output shows (analysis.json's "headline",
// the terminal, the HTML, JUnit), with the sides as the report's source names them, e.g.
//   "dma-api (B) is 7.8 % slower than direct (A) in dd-write.bandwidth (paired, 97.5 % CI 3.9 to
//    72.4 % slower): regression"
// with margin_qualifier's words after the verdict and, when inconclusive, what would likely settle
// it; with nothing to compare, why: "bw: no valid runs on side B: inconclusive".
std::string headline(const ReportMetric& metric, const ReportModel& report);

// What a metric reported but not judged (ReportMetric::judged) says beside its figures.
extern const char* const kNotJudgedWords;

// The experiment's verdict with what stands behind it, the line the terminal and the HTML end and
// begin with: "no_change (bw: a significant shift, inside the ±5.0 % margin)", and a mismatch of
// the sides said with it.
std::string verdict_headline(const ReportModel& report);

// Each workload's run length (samples/sample.hpp RunLength), both sides in one line:
// "dd-write: bs=8M count=80, median run 1.21 s on A, 1.25 s on B"; a side's own size is named when
// the sides differ. Empty when the input recorded none (plain files).
std::vector<std::string> run_length_lines(const SideContext& a, const SideContext& b);

}  // namespace abvm
