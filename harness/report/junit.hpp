#pragma once
// JUnit XML for CI systems (GitHub/GitLab/Jenkins JUnit readers): one <testcase> per metric,
// <failure> on regression, <skipped> with the reason on inconclusive, passed otherwise. A pure
// writer over the JSON report (report/schema.json); the caller writes the bytes.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace abvm {

struct JunitOptions {
  std::string suite = "abvm";   // testsuite name, e.g. the experiment's name
};

// Escapes & < > " ' and drops the control characters XML 1.0 forbids (console logs hold them).
std::string xml_escape(std::string_view text);

std::string junit_report(const nlohmann::json& report, const JunitOptions& options = {});

}  // namespace abvm
