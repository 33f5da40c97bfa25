// nightly/history: one line per night keyed by tree, branch, A, B and the experiment's hash; a
// night written again replaces its line; the last good commit; strict reading.
#include "nightly/history.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

NightRecord night(const std::string& a, const std::string& b, const std::string& outcome, bool good) {
  return {.tree = "/t", .branch = "master", .a = a, .b = b, .experiment_sha256 = "e1", .night = b + "-night",
          .date = "2026-12-04T02:17:00Z", .experiment = "x", .url = "https://example.org/t.git",
          .a_reason = "last_good", .a_why = "why", .commits = {{.commit = b, .subject = "s", .merge = false}},
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
  EXPECT_EQ(last_good(h.read(), "/t", "master"), std::nullopt);
  h.put(night("a", "b", "no_change", true));
  h.put(night("b", "c", "regression", false));
  EXPECT_EQ(last_good(h.read(), "/t", "master"), "b");
  EXPECT_EQ(last_good(h.read(), "/t", "other"), std::nullopt);
  EXPECT_EQ(ran_nights(h.read(), "/t", "master").size(), 2u);
}

TEST_F(NightlyHistoryTest, EveryFieldSurvivesTheRoundTrip) {
  NightRecord r = night("a", "b", "regression", false);
  r.bisection = BisectionResult{.outcome = "culprits", .end = "searched",
                                .culprits = {{{{.commit = "c3", .subject = "bounce", .merge = false}}}},
                                .dir = "nights/x/bisect", .report = "nights/x/bisect/bisect.html", .steps = 3,
                                .boots_per_side = 30};
  r.drift = DriftResult{.a = "a0", .verdict = "no_change", .metrics = r.metrics, .report = "r.html"};
  r.unchanged_checks = 2;
  h.put(r);
  const NightRecord back = h.read().at(0);
  EXPECT_EQ(to_json(back), to_json(r));
  ASSERT_TRUE(back.bisection);
  EXPECT_EQ(back.bisection->culprits.at(0).commits.at(0).subject, "bounce");
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
    EXPECT_NE(std::string(e.what()).find("history.jsonl:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'branch'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace abvm
