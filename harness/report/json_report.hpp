#pragma once
// The JSON report (schema_version 1, analysis.json): a pure function of the report model
// (verdict/report_model.hpp), which report/report_data.hpp reads back to the same model. CI jobs
// and the HTML report read it, so the fields named in report/schema.json are stable; new fields
// may be added.
#include <nlohmann/json.hpp>
#include <string>

#include "verdict/report_model.hpp"

namespace abvm {

nlohmann::json json_report(const ReportModel& report);

// Serialised with two-space indentation and a trailing newline. NaN becomes null.
std::string json_report_text(const ReportModel& report);

}  // namespace abvm
