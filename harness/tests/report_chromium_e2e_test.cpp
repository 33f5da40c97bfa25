// The HTML report in a real browser: headless Chromium (Debian's `chromium`) opens the report of
// the demo results directory from disk, takes a screenshot (kept as a test artifact), and a copy
// with a measuring script injected (the report itself has none) proves that the verdict and every
// plot are rendered with a non-zero size. Own binary, label "guest" (slow, needs a browser).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "environment_skip.hpp"
#include "core/process.hpp"
#include "report_test_support.hpp"

using namespace abvm;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> chromium_argv(const fs::path& profile) {
  const auto chromium = find_program("chromium");
  return {chromium ? chromium->string() : "chromium",
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--hide-scrollbars",
          "--user-data-dir=" + profile.string(),
          "--window-size=1280,2400"};
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<unsigned char>(s[at]) << 24) | (static_cast<unsigned char>(s[at + 1]) << 16) |
         (static_cast<unsigned char>(s[at + 2]) << 8) | static_cast<unsigned char>(s[at + 3]);
}

// Measures in the browser what a reader would see; the result lands in the dumped DOM.
const char* kMeasure = R"(<script>
window.addEventListener('load', function () {
  function box(el) {
    var r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return {top: r.top, width: r.width, height: r.height, visible: cs.display !== 'none' && cs.visibility !== 'hidden'};
  }
  var v = document.getElementById('verdict');
  var out = {verdict: v ? box(v) : null, verdictText: v ? v.innerText : '', images: []};
  document.querySelectorAll('figure img').forEach(function (img) {
    var b = box(img);
    b.naturalWidth = img.naturalWidth; b.naturalHeight = img.naturalHeight; b.complete = img.complete;
    out.images.push(b);
  });
  var pre = document.createElement('pre');
  pre.id = 'abvm-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
)";

}  // namespace

TEST(ReportChromium, VerdictAndEveryPlotAreVisible) {
  if (!find_program("chromium")) ABVM_SKIP_WITHOUT("chromium is not installed (harness/setup.sh installs it)");
  if (run_process({"/usr/bin/python3", "-c", "import matplotlib"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("python3-matplotlib is not installed (harness/setup.sh installs it)");
  }
  ReportTempDir tmp;
  const fs::path dir = tmp / "results-demo";
  fs::copy(report_data("report/results-demo"), dir, fs::copy_options::recursive);
  auto r = run_process({ABVM_BINARY, "analyze", dir.string(), "--json", (dir / "analysis.json").string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 4) << r.err;
  r = run_process({ABVM_BINARY, "report", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path report = dir / "report.html";

  // The screenshot of the report as shipped: kept next to the test binary (or ABVM_ARTIFACT_DIR).
  const char* artifacts = std::getenv("ABVM_ARTIFACT_DIR");
  const fs::path shot =
      fs::absolute(fs::path(artifacts != nullptr ? artifacts : ".") / "report_chromium_screenshot.png").lexically_normal();
  fs::remove(shot);
  auto argv = chromium_argv(tmp / "profile-shot");
  argv.push_back("--screenshot=" + shot.string());
  argv.push_back("file://" + report.string());
  r = run_process(argv, {.timeout = std::chrono::seconds(180)});
  ASSERT_FALSE(r.timed_out) << "chromium did not finish: " << r.err;
  ASSERT_TRUE(fs::exists(shot)) << describe_command(argv) << "\n" << r.err;
  std::cout << "screenshot: " << shot.string() << "\n";
  RecordProperty("screenshot", shot.string());
  const std::string png = read_file(shot);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(be32(png, 16), 1280u);
  EXPECT_EQ(be32(png, 20), 2400u);
  EXPECT_GT(png.size(), 100000u) << "a screenshot this small is (nearly) blank";

  // The same report with the measuring script, dumped after load.
  std::string html = read_file(report);
  html.insert(html.rfind("</body>"), kMeasure);
  const fs::path measured = dir / "report-measured.html";
  write_file_atomic(measured, html);
  argv = chromium_argv(tmp / "profile-dom");
  argv.push_back("--virtual-time-budget=5000");
  argv.push_back("--dump-dom");
  argv.push_back("file://" + measured.string());
  r = run_process(argv, {.timeout = std::chrono::seconds(180)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.out, match, std::regex("<pre id=\"abvm-measure\">([^<]*)</pre>"))) << r.out.substr(0, 2000);
  std::string text = match[1].str();
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  }
  const auto m = nlohmann::json::parse(text);
  ASSERT_FALSE(m["verdict"].is_null());
  EXPECT_TRUE(m["verdict"]["visible"].get<bool>());
  EXPECT_GT(m["verdict"]["height"].get<double>(), 20);
  EXPECT_LT(m["verdict"]["top"].get<double>(), 400) << "the verdict belongs at the top";
  EXPECT_THAT(m["verdictText"].get<std::string>(), HasSubstr("Verdict:"));
  ASSERT_EQ(m["images"].size(), 8u);
  for (const auto& img : m["images"]) {
    EXPECT_TRUE(img["complete"].get<bool>());
    EXPECT_TRUE(img["visible"].get<bool>());
    EXPECT_EQ(img["naturalWidth"].get<int>(), 640);
    EXPECT_GT(img["naturalHeight"].get<int>(), 100);
    EXPECT_GT(img["width"].get<double>(), 300);
    EXPECT_GT(img["height"].get<double>(), 50);
  }
}
