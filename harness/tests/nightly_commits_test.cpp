// nightly/commits: A and B of a night from small git trees made here, and B as A plus the
// first-parent commits between them (a merge stepped over as one commit), checked by applying the
// patches with `patch -p1` as the kernel build does and comparing the result with B's tree.
#include "nightly/commits.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/process.hpp"
#include "nightly_test_git.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

class NightlyCommitsTest : public ::testing::Test {
 protected:
  fs::path root = fs::temp_directory_path() /
                  fmt::format("abvm-nightly-commits-{}-{}", ::getpid(),
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  test::GitRepo repo{root / "tree"};
  std::string base;
  void SetUp() override { base = repo.commit("base", {{"drivers/block/virtio_blk.c", "int x;\n"}, {"README", "r\n"}}); }
  void TearDown() override { fs::remove_all(root); }

  // B's tree rebuilt from A's with the series, as the kernel build applies it.
  void expect_series_gives(const std::string& a, const std::string& b) {
    const fs::path work = root / "work", want = root / "want";
    for (const auto& [dir, commit] : {std::pair{work, a}, std::pair{want, b}}) {
      fs::remove_all(dir);
      fs::create_directories(dir);
      run_checked({"bash", "-c", fmt::format("git -C {} archive {} | tar -x -C {}", repo.dir().string(), commit,
                                             dir.string())});
    }
    for (const auto& p : first_parent_series(repo.dir(), a, b)) {
      if (p.text.empty()) continue;
      const ProcessResult r = run_process({"patch", "-p1", "--forward", "--batch", "-d", work.string()},
                                          {.stdin_data = p.text});
      ASSERT_EQ(r.exit_code, 0) << p.subject << ": " << r.out << r.err;
    }
    EXPECT_EQ(run_process({"diff", "-r", work.string(), want.string()}).exit_code, 0);
  }
};

TEST_F(NightlyCommitsTest, TheFirstNightComparesTheHeadWithTheBase) {
  const std::string c1 = repo.commit("one", {{"README", "r1\n"}});
  const NightCommits c = choose_commits(repo.dir(), "master", base.substr(0, 8), std::nullopt);
  EXPECT_EQ(c.a, base);
  EXPECT_EQ(c.b, c1);
  EXPECT_EQ(c.reason, BaseReason::base);
}

TEST_F(NightlyCommitsTest, ALaterNightComparesTheHeadWithTheLastGoodCommit) {
  const std::string c1 = repo.commit("one", {{"README", "r1\n"}});
  const std::string c2 = repo.commit("two", {{"README", "r2\n"}});
  const NightCommits c = choose_commits(repo.dir(), "master", base, c1);
  EXPECT_EQ(c.a, c1);
  EXPECT_EQ(c.b, c2);
  EXPECT_EQ(c.reason, BaseReason::last_good);
}

TEST_F(NightlyCommitsTest, ARebasedTreeComparesWithTheMergeBaseAndSaysWhy) {
  const std::string good = repo.commit("old one", {{"README", "old\n"}});
  repo.git({"reset", "-q", "--hard", base});
  const std::string rebased = repo.commit("new one", {{"README", "new\n"}});
  const NightCommits c = choose_commits(repo.dir(), "master", base, good);
  EXPECT_EQ(c.a, base);
  EXPECT_EQ(c.b, rebased);
  EXPECT_EQ(c.reason, BaseReason::merge_base);
  EXPECT_NE(c.why.find("no longer an ancestor"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find(good.substr(0, 12)), std::string::npos) << c.why;
}

TEST_F(NightlyCommitsTest, AMissingBranchOrBaseIsAnErrorNamingIt) {
  try {
    choose_commits(repo.dir(), "no-such-branch", base, std::nullopt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-branch'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(choose_commits(repo.dir(), "master", "v9.9", std::nullopt), Error);
}

// CI checks a tree out one commit deep by default: the last good commit is then not there, which is
// to be fetched, not a history of another tree.
TEST_F(NightlyCommitsTest, AShallowCloneWithoutTheLastGoodCommitSaysToFetchItsHistory) {
  const std::string c1 = repo.commit("one", {{"README", "r1\n"}});
  repo.commit("two", {{"README", "r2\n"}});
  const fs::path shallow = root / "shallow";
  run_checked({"git", "clone", "-q", "--depth", "1", "file://" + repo.dir().string(), shallow.string()});
  try {
    choose_commits(shallow, "master", base, c1);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the last good commit " + c1.substr(0, 12) + " of the history is not in git tree"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("is a shallow clone"), std::string::npos) << m;
    EXPECT_NE(m.find("fetch --unshallow"), std::string::npos) << m;
  }
  run_checked({"git", "-C", shallow.string(), "fetch", "-q", "--unshallow"});
  EXPECT_EQ(choose_commits(shallow, "master", base, c1).a, c1);
}

TEST_F(NightlyCommitsTest, ALastGoodCommitTheTreeHasNeverHadIsNotCalledShallow) {
  try {
    choose_commits(repo.dir(), "master", base, std::string(40, 'a'));
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("is not in git tree"), std::string::npos) << m;
    EXPECT_EQ(m.find("shallow"), std::string::npos) << m;
    EXPECT_NE(m.find("another history directory"), std::string::npos) << m;
  }
}

TEST_F(NightlyCommitsTest, TheSeriesIsTheFirstParentChainAndGivesBsTree) {
  const std::string c1 = repo.commit("one", {{"README", "r1\n"}});
  repo.git({"checkout", "-q", "-b", "topic", base});
  repo.commit("topic one", {{"drivers/block/virtio_blk.c", "int x;\nint y;\n"}});
  repo.commit("topic two", {{"new/file.c", "int z;\n"}});
  repo.git({"checkout", "-q", "master"});
  repo.git({"merge", "-q", "--no-ff", "-m", "Merge topic", "topic"});
  const std::string merge = repo.head();
  const std::string c3 = repo.commit("three", {{"README", "r3\n"}});
  const std::string empty = repo.commit("empty", {});
  const auto series = first_parent_series(repo.dir(), base, empty);
  ASSERT_EQ(series.size(), 4u) << "one, the merge as one commit, three, empty; not the topic's own commits";
  EXPECT_EQ(series[0].commit, c1);
  EXPECT_EQ(series[1].commit, merge);
  EXPECT_TRUE(series[1].merge);
  EXPECT_NE(series[1].text.find("new/file.c"), std::string::npos);
  EXPECT_EQ(series[2].commit, c3);
  EXPECT_EQ(series[2].subject, "three");
  EXPECT_TRUE(series[3].text.empty()) << "an empty commit has no patch";
  expect_series_gives(base, empty);
}

TEST_F(NightlyCommitsTest, AChainThatReachesAThroughAMergeStartsAtThatMerge) {
  // A sits on a topic branch that master merged: the merge's first parent is not a descendant of A.
  repo.git({"checkout", "-q", "-b", "topic"});
  const std::string a = repo.commit("topic", {{"topic.c", "t\n"}});
  repo.git({"checkout", "-q", "master"});
  repo.commit("mainline", {{"README", "m\n"}});
  repo.git({"merge", "-q", "--no-ff", "-m", "Merge topic", "topic"});
  const std::string b = repo.commit("after", {{"README", "after\n"}});
  const auto series = first_parent_series(repo.dir(), a, b);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_TRUE(series[0].merge);
  expect_series_gives(a, b);
}

TEST_F(NightlyCommitsTest, TheSquashedPatchTakesOneCommitToAnother) {
  const std::string c1 = repo.commit("one", {{"README", "r1\n"}});
  EXPECT_NE(squashed_patch(repo.dir(), base, c1).find("+r1"), std::string::npos);
  EXPECT_EQ(squashed_patch(repo.dir(), c1, c1), "");
}

}  // namespace
}  // namespace abvm
