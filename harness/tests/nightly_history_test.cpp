// nightly/history: one line per night keyed by the tree's URL, branch, A, B and the experiment's
// hash; a night written again replaces its line; the last good commit; lines keyed by a local path
// (before the key was the URL) read as their URL's; the kept anchor; strict reading.
#include "nightly/history.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const std::string kUrl = "https://example.org/t.git";

NightRecord night(const std::string& a, const std::string& b, const std::string& outcome, bool good) {
  return {.url = kUrl, .branch = "master", .a = a, .b = b, .experiment_sha256 = "e1", .night = b + "-night",
          .date = "2026-12-04T02:17:00Z", .experiment = "x", .a_reason = "last_good", .a_why = "why", .commits = {{.commit = b, .subject = "s", .merge = false}},
          .outcome = outcome, .exit_code = outcome == "regression" ? 1 : 0, .good = good, .margin = 0.05,
          .metrics = {{.name = "dd-write.bandwidth", .unit = "B/s", .better = "higher", .estimate = 0.97,
                       .low = 0.95, .high = 0.99, .verdict = outcome}},
          .abvm_version = "0", .host = "h"};
}

class NightlyHistoryTest : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / fmt::format("abvm-nightly-history-{}-{}", ::getpid(),
                                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
  History h{dir};
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(NightlyHistoryTest, ANightWrittenAgainReplacesItsLine) {
  h.put(night("a", "b", "interrupted", false));
  h.put(night("b", "c", "no_change", true));
  NightRecord again = night("a", "b", "no_change", true);
  h.put(again);
  const auto lines = h.read();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].outcome, "no_change");
  EXPECT_EQ(lines[1].b, "c");
  again.experiment_sha256 = "e2";  // another experiment: another night
  h.put(again);
  EXPECT_EQ(h.read().size(), 3u);
}

TEST_F(NightlyHistoryTest, TheLastGoodCommitIsTheNewestGoodB) {
  EXPECT_EQ(last_good(h.read(), kUrl, "master"), std::nullopt);
  h.put(night("a", "b", "no_change", true));
  h.put(night("b", "c", "regression", false));
  EXPECT_EQ(last_good(h.read(), kUrl, "master"), "b");
  EXPECT_EQ(last_good(h.read(), kUrl, "other"), std::nullopt);
  EXPECT_EQ(ran_nights(h.read(), kUrl, "master").size(), 2u);
  EXPECT_EQ(last_good(h.read(), "https://example.org/fork.git", "master"), std::nullopt) << "another tree";
}

// The line as abvm wrote it up to 4eaa00a: the key's tree the local path the night ran in.
std::string old_line(const NightRecord& r, const std::string& path) {
  nlohmann::json j = to_json(r);
  j["key"]["tree"] = path;
  return j.dump() + "\n";
}

TEST_F(NightlyHistoryTest, ALineKeyedByItsLocalPathIsOfTheTreeItsUrlNames) {
  fs::create_directories(dir);
  // Two nights from two clones of one tree, keyed by where each was cloned.
  write_file_atomic(h.file(), old_line(night("a", "b", "no_change", true), "/builds/1/linux") +
                                  old_line(night("b", "c", "no_change", true), "/builds/2/linux"));
  const auto lines = h.read();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].url, kUrl);
  EXPECT_EQ(lines[1].url, kUrl);
  EXPECT_EQ(last_good(lines, kUrl, "master"), "c") << "the newest good night, of either clone";
  EXPECT_EQ(ran_nights(lines, kUrl, "master").size(), 2u);
  // Tonight, from a third path, measures b..c again: its line replaces the old one, keyed by the URL.
  h.put(night("b", "c", "regression", false));
  const auto after = h.read();
  ASSERT_EQ(after.size(), 2u) << read_file(h.file());
  EXPECT_EQ(after[1].outcome, "regression");
  EXPECT_EQ(last_good(after, kUrl, "master"), "b");
  std::istringstream file(read_file(h.file()));
  for (std::string line; std::getline(file, line);) {
    EXPECT_EQ(nlohmann::json::parse(line)["key"]["tree"], kUrl) << line;
  }
}

// An old history in which two clones each measured the same night (neither found the other's
// last good commit): written again, the night is one line.
TEST_F(NightlyHistoryTest, TheSameNightFromTwoOldClonesBecomesOneLine) {
  fs::create_directories(dir);
  write_file_atomic(h.file(), old_line(night("a", "b", "no_change", true), "/builds/1/linux") +
                                  old_line(night("a", "b", "no_change", true), "/builds/2/linux"));
  h.put(night("a", "b", "improvement", true));
  const auto lines = h.read();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].outcome, "improvement");
}

TEST_F(NightlyHistoryTest, AKeyTreeThatIsNeitherTheUrlNorALocalPathIsDamage) {
  fs::create_directories(dir);
  write_file_atomic(h.file(), old_line(night("a", "b", "no_change", true), "https://example.org/fork.git"));
  try {
    h.read();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), h.file().string() + ":1: field \"key.tree\" is \"https://example.org/fork.git\", "
                                                          "neither the line's url \"" + kUrl + "\" nor a local path");
  }
}

TEST_F(NightlyHistoryTest, EveryFieldSurvivesTheRoundTrip) {
  NightRecord r = night("a", "b", "regression", false);
  r.bisection = BisectionResult{.outcome = "culprits", .end = "searched",
                                .culprits = {{{{.commit = "c3", .subject = "bounce", .merge = false}}}},
                                .dir = "nights/x/bisect", .report = "nights/x/bisect/bisect.html", .steps = 3,
                                .boots_per_side = 30};
  r.drift = DriftResult{.a = "a0", .verdict = "no_change", .metrics = r.metrics, .report = "r.html"};
  r.unchanged_checks = 2;
  r.anchor = "a0";
  h.put(r);
  const NightRecord back = h.read().at(0);
  EXPECT_EQ(to_json(back), to_json(r));
  ASSERT_TRUE(back.bisection);
  EXPECT_EQ(back.bisection->culprits.at(0).commits.at(0).subject, "bounce");
}

// A cost metric the experiment did not name is reported, not judged: the line keeps that beside
// its own verdict; a line written before it did reads every metric as judged (as it was shown then).
TEST_F(NightlyHistoryTest, AMetricReportedNotJudgedStaysSoAndAnOlderLineIsJudged) {
  NightRecord r = night("a", "b", "no_change", true);
  r.metrics.push_back({.name = "dd-write.host_cpu_per_gib", .unit = "s/GiB", .better = "lower", .estimate = 6.5,
                       .low = 6.0, .high = 7.05, .verdict = "regression", .judged = false});
  h.put(r);
  const NightRecord back = h.read().at(0);
  ASSERT_EQ(back.metrics.size(), 2u);
  EXPECT_TRUE(back.metrics[0].judged);
  EXPECT_FALSE(back.metrics[1].judged);
  EXPECT_EQ(back.metrics[1].verdict, "regression");

  nlohmann::json older = to_json(r);
  for (auto& m : older["metrics"]) m.erase("judged");
  write_file_atomic(h.file(), older.dump() + "\n");
  const NightRecord old = h.read().at(0);
  ASSERT_EQ(old.metrics.size(), 2u);
  EXPECT_TRUE(old.metrics[0].judged);
  EXPECT_TRUE(old.metrics[1].judged) << "a line from before judged was kept reads as it was shown: judged";
}

// The anchor a night builds from is the newest the tree's lines recorded (a night that built
// nothing records none); a line written before the anchor was kept reads without one.
TEST_F(NightlyHistoryTest, TheKeptAnchorIsTheNewestRecordedAndAnOlderLineHasNone) {
  NightRecord first = night("a", "b", "no_change", true), second = night("b", "c", "no_change", true);
  first.anchor = "a0";
  h.put(first);
  h.put(second);  // built nothing
  EXPECT_EQ(last_anchor(h.read(), kUrl, "master"), "a0");
  EXPECT_EQ(last_anchor(h.read(), kUrl, "other"), std::nullopt);
  NightRecord fork = night("c", "d", "no_change", true);
  fork.url = "https://example.org/fork.git";
  fork.anchor = "f0";
  h.put(fork);
  EXPECT_EQ(last_anchor(h.read(), kUrl, "master"), "a0") << "another tree's anchor is not this one's";

  nlohmann::json older = to_json(first);
  older.erase("anchor");
  write_file_atomic(h.file(), older.dump() + "\n");
  const auto lines = h.read();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].anchor, "");
  EXPECT_EQ(last_anchor(lines, kUrl, "master"), std::nullopt);
}

TEST_F(NightlyHistoryTest, ADamagedLineIsAnErrorNamingFileLineAndField) {
  h.put(night("a", "b", "no_change", true));
  nlohmann::json j = to_json(night("b", "c", "no_change", true));
  j["key"].erase("branch");
  write_file_atomic(h.file(), read_file(h.file()) + j.dump() + "\n");
  try {
    h.read();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), h.file().string() + ":2: field \"key.branch\" is missing (a string)");
  }
  j = to_json(night("b", "c", "no_change", true));
  j["metrics"][0]["estimate"] = "1.0";
  write_file_atomic(h.file(), j.dump() + "\n");
  try {
    h.read();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), h.file().string() + ":1: field \"metrics[0].estimate\" must be a number, not \"1.0\"");
  }
}

}  // namespace
}  // namespace abvm
