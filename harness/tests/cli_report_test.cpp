// End-to-end tests of `abvm report`, `abvm analyze --html/--junit` and `abvm compare`: the real
// binary on the fixture results directories (data/report/README.md) and the seed.
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "environment_skip.hpp"
#include "cli/compare.hpp"
#include "core/error.hpp"
#include "core/process.hpp"
#include "report/html.hpp"
#include "report_test_support.hpp"
#include "samples/load.hpp"

using namespace abvm;
using abvm::test::report_data;
using abvm::test::ReportTempDir;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

ProcessResult abvm_cmd(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), ABVM_BINARY);
  return run_process(args, {.extra_env = std::move(env)});
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

bool have_matplotlib() { return run_process({"/usr/bin/python3", "-c", "import matplotlib"}).exit_code == 0; }

// A copy of the demo results directory with its analysis.json made by `abvm analyze`.
fs::path demo_dir(const ReportTempDir& tmp) {
  const fs::path dir = tmp / "results-demo";
  fs::copy(report_data("report/results-demo"), dir, fs::copy_options::recursive);
  const auto r = abvm_cmd({"analyze", dir.string(), "--json", (dir / "analysis.json").string()});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.exit_code, 3) << r.err;
  return dir;
}

fs::path python_without_matplotlib(const ReportTempDir& tmp) {
  const auto python = tmp / "python-without-matplotlib";
  std::ofstream(python) << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  fs::permissions(python, fs::perms::owner_all);
  return python;
}

}  // namespace

TEST(CliReport, WritesASelfContainedReportWithPlotsEscapingAndConsoleLinks) {
  if (!have_matplotlib()) ABVM_SKIP_WITHOUT("python3-matplotlib is not installed (harness/setup.sh installs it)");
  ReportTempDir tmp;
  const fs::path dir = demo_dir(tmp);
  const auto r = abvm_cmd({"report", dir.string(), "--junit", (tmp / "junit.xml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, (dir / "report.html").string() + "\n");
  EXPECT_EQ(r.err, "");
  const std::string h = read_file(dir / "report.html");
  EXPECT_THAT(h, HasSubstr("<h1>demo-report</h1>"));
  EXPECT_THAT(h, HasSubstr("&lt;b&gt;markup&lt;/b&gt;"));
  EXPECT_THAT(h, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; (B)"));
  EXPECT_THAT(h, Not(HasSubstr("<script")));
  EXPECT_THAT(h, HasSubstr("What differs: device.iommu_platform."));
  EXPECT_THAT(h, HasSubstr("class=\"warning tcg\""));
  EXPECT_THAT(h, HasSubstr("/dev/kvm is missing"));
  EXPECT_EQ(count(h, "<img src=\"data:image/png;base64,"), 8);
  EXPECT_THAT(h, HasSubstr("<a href=\"trials/t0005/console.log\">console.log</a>"));
  const std::string x = read_file(tmp / "junit.xml");
  EXPECT_EQ(count(x, "<testcase "), 2);
  EXPECT_THAT(x, HasSubstr("<testsuite name=\"demo-report\""));
}

TEST(CliReport, WithoutMatplotlibTheReportStillRendersAndSaysWhy) {
  ReportTempDir tmp;
  const fs::path dir = demo_dir(tmp);
  const auto r = abvm_cmd({"report", dir.string(), "-o", (tmp / "r.html").string()},
                          {"ABVM_PYTHON=" + python_without_matplotlib(tmp).string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("abvm: warning: plot all missing: matplotlib cannot be imported"));
  const std::string h = read_file(tmp / "r.html");
  EXPECT_THAT(h, HasSubstr("No plots: matplotlib cannot be imported"));
  EXPECT_EQ(count(h, "<img "), 0);
  EXPECT_THAT(h, HasSubstr("id=\"verdict\""));
  EXPECT_EQ(count(h, "<section class=\"metric\""), 2);
}

TEST(CliReport, NoAnalysisJsonSaysHowToMakeIt) {
  ReportTempDir tmp;
  fs::copy(report_data("report/results-demo"), tmp / "d", fs::copy_options::recursive);
  const auto r = abvm_cmd({"report", (tmp / "d").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("analysis.json: not found; make it with 'abvm analyze"));
  const auto r2 = abvm_cmd({"report", (tmp / "nothing").string()});
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_THAT(r2.err, HasSubstr("not a directory"));
}

// The HTML report reads typed data: a field missing from (or mistyped in) analysis.json is an
// error naming the file and the field, never a blank or a NaN in the report.
TEST(CliReport, ADamagedAnalysisJsonNamesTheFieldAndWritesNoReport) {
  ReportTempDir tmp;
  const fs::path dir = demo_dir(tmp);
  const fs::path analysis = dir / "analysis.json";
  const auto good = nlohmann::json::parse(read_file(analysis));
  const std::string remake =
      fmt::format("; regenerate it with 'abvm analyze {} --json {}'\n", dir.string(), analysis.string());

  auto damaged = good;
  damaged["metrics"][1]["effect"].erase("ci_low");
  write_file_atomic(analysis, damaged.dump(2));
  auto r = abvm_cmd({"report", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "abvm: error: " + analysis.string() + ": field \"metrics[1].effect.ci_low\" is missing (a number or null)" + remake);
  EXPECT_FALSE(fs::exists(dir / "report.html"));

  damaged = good;
  damaged["metrics"][0]["a"]["median"] = "fast";
  write_file_atomic(analysis, damaged.dump(2));
  r = abvm_cmd({"report", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "abvm: error: " + analysis.string() + ": field \"metrics[0].a.median\" must be a number or null, not \"fast\"" +
                       remake);
  EXPECT_FALSE(fs::exists(dir / "report.html"));

  // environment.json is read as strictly; its null governor ("no cpufreq") is fine.
  write_file_atomic(analysis, good.dump(2));
  auto env = nlohmann::json::parse(read_file(dir / "environment.json"));
  env.erase("accelerator");
  write_file_atomic(dir / "environment.json", env.dump(2));
  r = abvm_cmd({"report", dir.string()}, {"ABVM_PYTHON=/nonexistent"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir / "environment.json").string() + ": field \"accelerator\" is missing (\"kvm\" or \"tcg\"); abvm run writes it"));
}

TEST(CliReport, AnalyzeWritesHtmlAndJunitForTheSeedAndKeepsItsExitCode) {
  ReportTempDir tmp;
  const std::string seed = std::string(ABVM_TEST_DATA) + "/seed/";
  const auto r = abvm_cmd({"analyze", "--a", seed + "dd-without-patches.txt", "--b", seed + "dd-with-patches.txt",
                           "--html", (tmp / "seed.html").string(), "--junit", (tmp / "seed.xml").string()},
                          {"ABVM_PYTHON=" + python_without_matplotlib(tmp).string()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const std::string h = read_file(tmp / "seed.html");
  EXPECT_THAT(h, HasSubstr("<h1>dd-without-patches.txt vs dd-with-patches.txt</h1>"));
  EXPECT_THAT(h, HasSubstr("Verdict: <strong>inconclusive</strong>"));
  EXPECT_THAT(h, HasSubstr("B is 4.9 % slower than A in dd.bandwidth"));
  const std::string x = read_file(tmp / "seed.xml");
  EXPECT_THAT(x, HasSubstr("<skipped message=\"B is 4.9 % slower than A in dd.bandwidth"));
}

TEST(CliReport, CompareFindsTheNewRunsRegressionAgainstTheBaseline) {
  ReportTempDir tmp;
  const auto r = abvm_cmd({"compare", report_data("report/results-slower").string(),
                           report_data("report/results-demo").string(), "--json", (tmp / "c.json").string(),
                           "--junit", (tmp / "c.xml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(read_file(tmp / "c.json"));
  EXPECT_EQ(j["metrics"].size(), 2u);
  EXPECT_EQ(j["verdict"], "regression");
  // Latency of B: 1/0.75 in results-slower against 1/0.93 in results-demo, about 1.24.
  EXPECT_EQ(j["metrics"][1]["name"], "fio-seqwrite.write.clat_mean");
  EXPECT_EQ(j["metrics"][1]["verdict"], "regression");
  EXPECT_NEAR(j["metrics"][1]["effect"]["estimate"].get<double>(), 0.93 / 0.75, 0.03);
  // dd bandwidth of B: 0.75 x 4.4 GB/s against 0.93 x 4.4 GB/s (about 0.81) inside the dominant
  // mode; the slow-host boots (3 of 8 in the baseline, 1 of 8 in the new run) keep it open.
  EXPECT_NEAR(j["metrics"][0]["mode_test"]["dominant_mode_effect"]["estimate"].get<double>(), 0.75 / 0.93, 0.03);
  EXPECT_EQ(j["source"]["a_label"], "baseline results-demo");
  EXPECT_EQ(j["source"]["b_label"], "new results-slower");
  EXPECT_THAT(read_file(tmp / "c.xml"), HasSubstr("<failure type=\"regression\""));
  // Side A is the same kernel in both runs.
  const auto same = abvm_cmd({"compare", report_data("report/results-slower").string(),
                              report_data("report/results-demo").string(), "--side", "A", "--json",
                              (tmp / "a.json").string()});
  const auto ja = nlohmann::json::parse(read_file(tmp / "a.json"));
  EXPECT_NE(ja["metrics"][0]["verdict"], "regression") << same.out;
  EXPECT_NEAR(ja["metrics"][0]["effect"]["estimate"].get<double>(), 1.0, 0.03);
}

// A copy of a results directory whose every dd-write run says it ran `size` (journal version 2).
fs::path sized_copy(const ReportTempDir& tmp, const std::string& name, const std::string& size) {
  const fs::path dir = tmp / name;
  fs::create_directories(dir);
  std::string journal;
  std::istringstream in(read_file(report_data("report/results-demo") / "journal.jsonl"));
  for (std::string line; std::getline(in, line);) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    j["journal_version"] = 2;
    if (j["workload"] == "dd-write") j["size"] = size;
    journal += j.dump() + "\n";
  }
  write_file_atomic(dir / "journal.jsonl", journal);
  return dir;
}

TEST(CliReport, CompareRefusesDirectoriesWhoseRunsRanAtDifferentSizes) {
  ReportTempDir tmp;
  const fs::path base = sized_copy(tmp, "base", "bs=8M count=16"), fresh = sized_copy(tmp, "fresh", "bs=8M count=80");
  const auto r = abvm_cmd({"compare", fresh.string(), base.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("workload \"dd-write\" ran bs=8M count=80 in " + fresh.string() + " but bs=8M count=16 in " +
                               base.string() + ": runs of different sizes are not comparable"));
  // The same sizes compare, and the report shows them.
  const auto same = abvm_cmd({"compare", sized_copy(tmp, "again", "bs=8M count=16").string(), base.string()});
  EXPECT_NE(same.exit_code, 2) << same.err;
  EXPECT_THAT(same.out, HasSubstr("run lengths:\n  dd-write: bs=8M count=16, median run not timed on A, not timed on B\n"));
}

TEST(CliReport, CompareSamplesKeepsBootsApartAndOrdersTheNewRunAfterTheBaseline) {
  const SampleSet base = load_results_dir(report_data("report/results-demo"));
  const SampleSet fresh = load_results_dir(report_data("report/results-slower"));
  std::vector<std::string> dropped;
  const SampleSet s = cli::compare_samples(base, fresh, Side::b, dropped);
  EXPECT_TRUE(dropped.empty());
  ASSERT_EQ(s.metrics.size(), 2u);
  const MetricSamples& m = s.metrics[0];
  EXPECT_EQ(m.a.size(), base.metrics[0].b.size());
  EXPECT_EQ(m.b.size(), fresh.metrics[0].b.size());
  std::int64_t last_a = 0;
  for (const auto& x : m.a) {
    EXPECT_EQ(x.run().boot->rfind("baseline:", 0), 0u);
    EXPECT_FALSE(x.run().block.has_value());
    last_a = std::max(last_a, x.order);
  }
  for (const auto& x : m.b) {
    EXPECT_EQ(x.run().boot->rfind("new:", 0), 0u);
    EXPECT_GT(x.order, last_a);
  }
  // A metric in one directory only is dropped and named.
  SampleSet fewer = fresh;
  fewer.metrics.pop_back();
  dropped.clear();
  EXPECT_EQ(cli::compare_samples(base, fewer, Side::b, dropped).metrics.size(), 1u);
  EXPECT_EQ(dropped, std::vector<std::string>{"fio-seqwrite.write.clat_mean"});
  fewer.metrics.clear();
  EXPECT_THROW(cli::compare_samples(base, fewer, Side::b, dropped), Error);

  // Runs that recorded their pair's overlap and timing: the pairs stay behind in their own run.
  const SampleSet co = load_results_dir(report_data("report/results-co-scheduled"));
  ASSERT_TRUE(co.metrics[0].b[0].run().overlap.has_value());
  const SampleSet across = cli::compare_samples(co, co, Side::b, dropped);
  for (const auto* side : {&across.metrics[0].a, &across.metrics[0].b}) {
    for (const Sample& x : *side) {
      EXPECT_FALSE(x.run().overlap.has_value());
      EXPECT_FALSE(x.run().timing.has_value());
    }
  }
}

namespace {

// The first line of each test case's output in a JUnit file, in order: the metric's sentence (as
// XML writes it: the sentences of these tests hold no character it escapes).
std::vector<std::string> junit_sentences(const std::string& xml) {
  std::vector<std::string> out;
  const std::string tag = "<system-out>";
  for (auto at = xml.find(tag); at != std::string::npos; at = xml.find(tag, at + 1)) {
    const auto from = at + tag.size();
    out.push_back(xml.substr(from, xml.find('\n', from) - from));
  }
  return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// `text` with its i-th line that starts with `prefix` replaced by `lines[i]`.
std::string lines_replaced(const std::string& text, const std::string& prefix, const std::vector<std::string>& lines) {
  std::string out;
  std::size_t i = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out += (line.starts_with(prefix) && i < lines.size() ? lines[i++] : line) + "\n";
  }
  EXPECT_EQ(i, lines.size()) << "every line replaced";
  return out;
}

}  // namespace

// Issue 21: every reporter takes one model now, and a results directory's outputs are as they
// were before (harness/tests/data/report/before-issue-21/, made by abvm at e9b857e), but for the
// metric's sentence, on purpose. Only the path of the copy the analysis ran on and the tool's
// version may differ besides.
TEST(CliReport, OutputsAreAsBeforeTheOneModel) {
  ReportTempDir tmp;
  for (const std::string name : {"results-slower", "results-co-scheduled", "results-demo"}) {
    SCOPED_TRACE(name);
    const fs::path dir = tmp / name;
    fs::copy(report_data("report/" + name), dir, fs::copy_options::recursive);
    const fs::path before = report_data("report/before-issue-21");
    const auto r = abvm_cmd({"analyze", dir.string(), "--json", (tmp / "a.json").string(), "--junit",
                             (tmp / "junit.xml").string()});
    ASSERT_EQ(r.exit_code, 1) << r.err;
    auto now = nlohmann::json::parse(read_file(tmp / "a.json"));
    auto then = nlohmann::json::parse(read_file(before / (name + ".analysis.json")));
    // Changed on purpose (issue 21): one sentence per metric (report/wording.hpp headline) where
    // analysis.json's headline, the terminal's verdict line and JUnit's sentence said it three ways.
    // It is JUnit's sentence of before with the side it compares with: made here from what abvm
    // printed before, not from what it prints now (these verdicts are all unpaired regressions,
    // with nothing to qualify and no runs needed).
    const std::string old_junit = read_file(before / (name + ".junit.xml"));
    const std::vector<std::string> old_sentences = junit_sentences(old_junit);
    ASSERT_EQ(old_sentences.size(), then["metrics"].size());
    std::string junit = old_junit;
    std::vector<std::string> verdict_lines;
    for (std::size_t i = 0; i < old_sentences.size(); ++i) {
      const std::string metric = then["metrics"][i]["name"];
      ASSERT_EQ(then["metrics"][i]["verdict"], "regression");
      const std::string sentence = replaced(old_sentences[i], " in " + metric + " (", " than A in " + metric + " (");
      ASSERT_NE(sentence, old_sentences[i]);
      then["metrics"][i]["headline"] = sentence;
      junit = replaced(junit, old_sentences[i], sentence);
      verdict_lines.push_back("  " + sentence);
    }
    std::string summary = lines_replaced(read_file(before / (name + ".summary.txt")), "  verdict: ", verdict_lines);
    // Changed on purpose (issue 26): the overlap line also gives the start skews (read off the
    // journal with Python: abs(A.start - B.start) per block and run: median 3 ms, dd's largest 371 ms)
    // and says what leaves pairs out now; nothing is left out here (the directory has no manifest,
    // so no design's rule applies), as before.
    summary = replaced(summary, "over 24 pairs; nothing left out (no minimum asked: only co-scheduled runs must overlap)",
                       "over 24 pairs; starts apart: median 3 ms, max 371 ms; nothing left out (only co-scheduled "
                       "runs must start together)");
    summary = replaced(summary, "over 8 pairs; nothing left out (no minimum asked: only co-scheduled runs must overlap)",
                       "over 8 pairs; starts apart: median 3 ms, max 3 ms; nothing left out (only co-scheduled runs "
                       "must start together)");
    // Changed on purpose (issue 26): results-slower's fio latency has two modes of 8 boots each,
    // one side in each. Such a tie went to the lower values (A's), which favoured a lower-is-better
    // metric's regressions; it goes to the narrower mode now (B's: 297-314 us against 221-238 us),
    // and no mode is worse than it. The verdict is the effect's regression, as before.
    const std::string mode_note = "B spends significantly more runs than A in modes worse than the dominant one "
                                  "(Fisher one-sided p = 7.77e-05 < 0.0125).";
    if (name == "results-slower") {
      summary = replaced(summary, "  modes: [221 us .. 238 us: A 100%, B 0%, dominant] [297 us .. 314 us: A 0%, B 100%]",
                         "  modes: [221 us .. 238 us: A 100%, B 0%] [297 us .. 314 us: A 0%, B 100%, dominant]");
      summary = replaced(summary, "  mode fractions: Fisher p = 0.000155 (B more in worse modes: p = 7.77e-05)",
                         "  mode fractions: Fisher p = 1 (B more in worse modes: p = 1)");
      summary = replaced(summary, "  note: " + mode_note + "\n", "");
      junit = replaced(junit, "note: " + replaced(mode_note, "<", "&lt;") + "\n", "");
      auto& clat = then["metrics"][1];
      ASSERT_EQ(clat["name"], "fio-seqwrite.write.clat_mean");
      ASSERT_EQ(clat["modes"][0]["dominant"], true);
      clat["modes"][0]["dominant"] = false;
      clat["modes"][1]["dominant"] = true;
      clat["mode_test"]["b_more_in_worse"] = false;
      clat["mode_test"]["p_b_more_in_worse"] = 1.0;
      clat["mode_test"]["p_two_sided"] = 1.0;
      clat["notes"] = nlohmann::json::array();
    }
    // Added on purpose (issue 26): each workload's run length, from the runs' timings.
    std::string out = r.out;
    if (const std::size_t at = out.find("\nrun lengths:\n"); at != std::string::npos) {
      out.erase(at, out.find("\n\n", at + 1) + 1 - at);
    }
    EXPECT_EQ(out, summary);
    EXPECT_EQ(read_file(tmp / "junit.xml"), junit);
    for (auto* j : {&now, &then}) {
      (*j)["source"].erase("results_dir");
      (*j)["tool"].erase("version");
    }
    // Added on purpose (issue 21 item 2): the typed facts behind "warnings" and "notes".
    now.erase("findings");
    for (auto& m : now["metrics"]) m.erase("findings");
    for (const char* side : {"a", "b"}) now["context"][side].erase("run_lengths");
    // Added on purpose (issue 26): the estimate over every pair, here the effect itself (nothing
    // is left out); the overlap's start skews and its rule in place of the old threshold (null then,
    // null now: nothing left out).
    for (auto& m : then["metrics"]) {
      m["all_pairs_effect"] = m["effect"];
      if (!m.contains("overlap")) continue;
      ASSERT_TRUE(m["overlap"]["threshold"].is_null());
      m["overlap"].erase("threshold");
      m["overlap"]["max_start_skew_ms"] = nullptr;
    }
    // Added on purpose (issue 27): whether a metric is judged (a cost metric is reported, and
    // judged only when [analysis] metrics names it); these fixtures have no cost metrics.
    for (auto& m : now["metrics"]) {
      EXPECT_EQ(m["judged"], true) << m["name"];
      m.erase("judged");
    }
    for (auto& m : now["metrics"]) {
      if (!m.contains("overlap")) continue;
      EXPECT_NEAR(m["overlap"]["start_skew_median_ms"].get<double>(), 3.000021, 1e-5);
      const double largest = m["name"] == "dd-write.bandwidth" ? 371.191978 : 3.000021;
      EXPECT_NEAR(m["overlap"]["start_skew_max_ms"].get<double>(), largest, 1e-5);
      m["overlap"].erase("start_skew_median_ms");
      m["overlap"].erase("start_skew_max_ms");
    }
    EXPECT_EQ(now.dump(), then.dump());
  }
}

// Issue 21: a metric's verdict is one sentence (report/wording.hpp headline), and every output
// shows it: analysis.json's headline, the terminal summary, JUnit and report.html as `abvm analyze`
// writes them at once, and report.html and JUnit as `abvm report` writes them from analysis.json.
TEST(CliReport, EveryOutputShowsTheSameSentenceOfEachMetric) {
  ReportTempDir tmp;
  const std::string seed = std::string(ABVM_TEST_DATA) + "/seed/";
  const std::vector<std::pair<std::string, std::vector<std::string>>> inputs = {
      {"results-demo", {(tmp / "results-demo").string()}},
      {"results-co-scheduled", {(tmp / "results-co-scheduled").string()}},
      {"results-slower", {(tmp / "results-slower").string()}},
      {"files", {"--a", seed + "dd-without-patches.txt", "--b", seed + "dd-with-patches.txt"}}};
  const std::string no_plots = "ABVM_PYTHON=/nonexistent/python3";
  for (const auto& [name, args] : inputs) {
    SCOPED_TRACE(name);
    const fs::path json = tmp / (name + ".json"), junit = tmp / (name + ".xml"), html = tmp / (name + ".html");
    std::vector<std::string> analyze = {"analyze"};
    analyze.insert(analyze.end(), args.begin(), args.end());
    analyze.insert(analyze.end(), {"--json", json.string(), "--junit", junit.string(), "--html", html.string()});
    if (name != "files") fs::copy(report_data("report/" + name), tmp / name, fs::copy_options::recursive);
    const auto r = abvm_cmd(analyze, {no_plots});
    ASSERT_TRUE(r.exit_code == 1 || r.exit_code == 4) << r.err;
    std::vector<std::pair<std::string, std::string>> reports = {{read_file(html), read_file(junit)}};
    if (name != "files") {
      fs::copy_file(json, tmp / name / "analysis.json");
      const auto again = abvm_cmd({"report", (tmp / name).string(), "--junit", (tmp / "again.xml").string()}, {no_plots});
      ASSERT_EQ(again.exit_code, 0) << again.err;
      reports.emplace_back(read_file(tmp / name / "report.html"), read_file(tmp / "again.xml"));
    }
    const auto metrics = nlohmann::json::parse(read_file(json))["metrics"];
    ASSERT_FALSE(metrics.empty());
    std::vector<std::string> sentences;
    for (const auto& m : metrics) sentences.push_back(m["headline"]);
    for (const std::string& sentence : sentences) {
      EXPECT_EQ(count(r.out, "\n  " + sentence + "\n"), 1) << sentence << "\n" << r.out;
      for (const auto& [h, x] : reports) {
        EXPECT_EQ(count(h, "<p class=\"sentence\">" + html_escape(sentence) + "</p>"), 1) << sentence;
        EXPECT_EQ(count(h, "\">" + html_escape(sentence) + "</a></li>"), 1) << sentence;
      }
    }
    for (const auto& [h, x] : reports) EXPECT_EQ(junit_sentences(x), sentences);
  }
}
