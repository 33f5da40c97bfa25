#pragma once
// JUnit XML for CI systems (GitHub/GitLab/Jenkins JUnit readers): one <testcase> per metric,
// <failure> on regression, <skipped> with the reason on inconclusive, passed otherwise; valid
// against the Ant/Jenkins JUnit schema (harness/tests/data/report/junit.xsd). A pure writer over
// the report model (verdict/report_model.hpp), built with pugixml; the caller writes the bytes.
#include <string>
#include <string_view>

#include "verdict/report_model.hpp"

namespace abvm {

struct JunitOptions {
  std::string suite = "abvm";   // testsuite name, e.g. the experiment's name
};

// `text` without the control characters XML 1.0 forbids (console logs hold them) and with U+FFFD
// for each byte that is not UTF-8; pugixml escapes the markup characters.
std::string xml_text(std::string_view text);

std::string junit_report(const ReportModel& report, const JunitOptions& options = {});

}  // namespace abvm
