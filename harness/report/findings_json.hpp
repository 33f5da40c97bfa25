#pragma once
// analysis.json's "findings" (per metric and at the top level): the typed facts of
// verdict/findings.hpp as objects {"kind": "few_units", "severity": "warning", ...their numbers},
// so that a reader of the file can rebuild them and word them (report/wording.hpp) as abvm does.
// "warnings" and "notes" next to them hold those words.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verdict/findings.hpp"

namespace abvm {

nlohmann::json findings_json(const std::vector<MetricFinding>& findings);
nlohmann::json findings_json(const std::vector<ExperimentFinding>& findings);

// Rebuilds the findings from such an array (core/json_read.hpp). Strict: an unknown kind, a missing
// or mistyped number is an Error naming the file and the field. Finding is MetricFinding or
// ExperimentFinding.
class JsonField;
template <class Finding>
std::vector<Finding> read_findings(const JsonField& findings);

}  // namespace abvm
