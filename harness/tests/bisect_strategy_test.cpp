// The search of abvm bisect (bisect/strategy.hpp), driven by oracles: each step's finding from the
// true ratio of its two kernels, as a perfect A/B experiment would give it. Covers every culprit
// position of short and long series, two culprits, the indifference of unknown steps (ranges),
// the step and boot budgets, the outcomes without a culprit, and a replay that does not follow
// the search.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "bisect/strategy.hpp"

namespace abvm {
namespace {

// Patch i multiplies the speed by effect[i] (1-based; 1.0: harmless). A step is slower when its
// kernel is at least 2 % slower than its reference, not slower when it is within 1 %.
struct Series {
  std::vector<double> effect;  // index 0 unused
  std::set<int> unknown_kernels;  // kernels whose steps come out unknown whatever they measure

  explicit Series(int n) : effect(static_cast<std::size_t>(n) + 1, 1.0) {}
  int patches() const { return static_cast<int>(effect.size()) - 1; }
  double speed(int k) const {
    double s = 1;
    for (int i = 1; i <= k; ++i) s *= effect[static_cast<std::size_t>(i)];
    return s;
  }
  StepFinding finding(const StepQuestion& q) const {
    if (unknown_kernels.contains(q.kernel)) return StepFinding::unknown;
    const double ratio = speed(q.kernel) / speed(q.reference);
    if (ratio < 0.98) return StepFinding::slower;
    if (ratio > 0.99) return StepFinding::not_slower;
    return StepFinding::unknown;
  }
};

struct Search {
  BisectState state;
  std::vector<StepAnswer> answers;
};

// Runs the search to its end against the series' oracle.
Search bisect(const Series& s, int max_steps = 0, std::function<bool(const std::vector<StepAnswer>&)> budget_spent = {}) {
  const BisectShape shape{.patches = s.patches(), .max_steps = max_steps > 0 ? max_steps : default_max_steps(s.patches())};
  Search r;
  for (;;) {
    r.state = bisect_state(shape, r.answers, budget_spent && budget_spent(r.answers));
    if (!r.state.next) return r;
    EXPECT_LT(r.answers.size(), 200u) << "the search does not end";
    if (r.answers.size() >= 200u) return r;
    r.answers.push_back({*r.state.next, s.finding(*r.state.next)});
  }
}

TEST(BisectStrategy, NamesEveryCulpritPositionOfEveryLengthUpTo33WithinLog2Steps) {
  for (int n = 1; n <= 33; ++n) {
    for (int c = 1; c <= n; ++c) {
      Series s(n);
      s.effect[static_cast<std::size_t>(c)] = 0.8;
      const Search r = bisect(s);
      ASSERT_EQ(r.state.outcome, BisectOutcome::culprits) << n << " patches, culprit " << c;
      ASSERT_EQ(r.state.culprits.size(), 1u) << n << " patches, culprit " << c;
      EXPECT_EQ(r.state.culprits[0], (CulpritRange{.first = c, .last = c, .reference = 0})) << n << " " << c;
      EXPECT_FALSE(r.state.rest_unsettled);
      EXPECT_EQ(r.state.end, SearchEnd::searched);
      // The confirmation, a binary search, and (unless the culprit is last) the rest against it.
      const int depth = static_cast<int>(std::ceil(std::log2(n) - 1e-9));
      EXPECT_LE(static_cast<int>(r.answers.size()), 1 + depth + (c < n ? 1 : 0)) << n << " " << c;
      EXPECT_EQ(r.answers.front().question, (StepQuestion{.kernel = n, .reference = 0}));
      if (c < n) {
        EXPECT_EQ(r.answers.back().question, (StepQuestion{.kernel = n, .reference = c}));
      }
      std::set<std::pair<int, int>> asked;
      for (const auto& a : r.answers) {
        EXPECT_TRUE(asked.insert({a.question.kernel, a.question.reference}).second) << "asked twice";
      }
    }
  }
}

TEST(BisectStrategy, TheFourPatchControlAsksKernels4Then2Then3ThenTheRestAgainst3) {
  Series s(4);
  s.effect[3] = 0.57;
  const Search r = bisect(s);
  const std::vector<StepQuestion> asked = {{4, 0}, {2, 0}, {3, 0}, {4, 3}};
  ASSERT_EQ(r.answers.size(), asked.size());
  for (std::size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(r.answers[i].question, asked[i]) << i;
  EXPECT_EQ(r.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0}}));
}

TEST(BisectStrategy, TwoCulpritsAreBothNamedEachAgainstTheKernelBeforeItsShare) {
  Series s(16);
  s.effect[3] = 0.9;
  s.effect[11] = 0.93;
  const Search r = bisect(s);
  ASSERT_EQ(r.state.outcome, BisectOutcome::culprits);
  EXPECT_EQ(r.state.culprits, (std::vector<CulpritRange>{{.first = 3, .last = 3, .reference = 0},
                                                         {.first = 11, .last = 11, .reference = 3}}));
  EXPECT_FALSE(r.state.rest_unsettled);
  EXPECT_LE(static_cast<int>(r.answers.size()), default_max_steps(16));
  EXPECT_EQ(r.answers.back().question, (StepQuestion{.kernel = 16, .reference = 11}));
}

TEST(BisectStrategy, ThreeCulpritsNeedMoreStepsThanTheDefaultAndTheLastShareIsLeftUnsettled) {
  Series s(8);
  s.effect[2] = s.effect[5] = s.effect[7] = 0.9;
  const Search r = bisect(s, 7);
  ASSERT_EQ(r.state.outcome, BisectOutcome::culprits);
  EXPECT_EQ(r.answers.size(), 7u);
  EXPECT_EQ(r.state.end, SearchEnd::out_of_steps);
  // Patch 2 is named; the second search (against kernel 2) got as far as patches 4-5 when its
  // steps ran out, and the share of patch 7 was never asked about.
  EXPECT_EQ(r.state.culprits, (std::vector<CulpritRange>{{.first = 2, .last = 2, .reference = 0},
                                                         {.first = 4, .last = 5, .reference = 2}}));
  EXPECT_TRUE(r.state.rest_unsettled);
}

TEST(BisectStrategy, AnUnknownKernelLeavesTheNarrowestRangeThatHoldsTheCulprit) {
  Series s(8);
  s.effect[5] = 0.8;
  s.unknown_kernels = {4};
  const Search r = bisect(s);
  ASSERT_EQ(r.state.culprits.size(), 1u);
  EXPECT_EQ(r.state.culprits[0], (CulpritRange{.first = 4, .last = 5, .reference = 0, .unknown = {4}}));
  EXPECT_FALSE(r.state.culprits[0].exact());
  // The search went on around kernel 4 (3 not slower, 5 slower), then asked about the rest.
  EXPECT_EQ(r.answers.back().question, (StepQuestion{.kernel = 8, .reference = 5}));
}

TEST(BisectStrategy, APatchInsideTheIndifferenceZoneIsNeitherBlamedNorCleared) {
  Series s(4);
  s.effect[2] = 0.985;  // 1.5 % slower: between "not slower" (1 %) and "slower" (2 %)
  s.effect[4] = 0.8;
  const Search r = bisect(s);
  // Kernels 2 and 3 are 1.5 % slower: unknown. Kernel 1 is not slower, kernel 4 is: the range is
  // patches 2-4, and patch 4 (20 %) is not named alone although it is the real culprit.
  EXPECT_EQ(r.state.culprits, (std::vector<CulpritRange>{{.first = 2, .last = 4, .reference = 0, .unknown = {2, 3}}}));
}

TEST(BisectStrategy, TheWholeSeriesNotSlowerEndsAfterOneStepWithNoRegression) {
  const Search r = bisect(Series(6));
  EXPECT_EQ(r.state.outcome, BisectOutcome::no_regression);
  EXPECT_EQ(r.answers.size(), 1u);
  EXPECT_TRUE(r.state.culprits.empty());
}

TEST(BisectStrategy, AnUnknownConfirmationIsUnsettled) {
  Series s(6);
  s.unknown_kernels = {6};
  const Search r = bisect(s);
  EXPECT_EQ(r.state.outcome, BisectOutcome::unsettled);
  EXPECT_EQ(r.answers.size(), 1u);
}

TEST(BisectStrategy, AnUnknownRestAfterTheCulpritIsSaidToBeUnsettled) {
  Series s(4);
  s.effect[2] = 0.8;
  s.unknown_kernels = {};
  const BisectShape shape{.patches = 4, .max_steps = 7};
  const std::vector<StepAnswer> answers = {{{4, 0}, StepFinding::slower},
                                           {{2, 0}, StepFinding::slower},
                                           {{1, 0}, StepFinding::not_slower},
                                           {{4, 2}, StepFinding::unknown}};
  const BisectState st = bisect_state(shape, answers);
  EXPECT_EQ(st.outcome, BisectOutcome::culprits);
  EXPECT_EQ(st.culprits, (std::vector<CulpritRange>{{.first = 2, .last = 2, .reference = 0}}));
  EXPECT_TRUE(st.rest_unsettled);
  EXPECT_FALSE(st.next);
}

TEST(BisectStrategy, RunningStatesSayWhatIsSearchedAndWhatComesNext) {
  const BisectShape shape{.patches = 8, .max_steps = 9};
  BisectState st = bisect_state(shape, {});
  EXPECT_EQ(st.outcome, BisectOutcome::running);
  EXPECT_EQ(st.next, (StepQuestion{.kernel = 8, .reference = 0}));
  const std::vector<StepAnswer> one = {{{8, 0}, StepFinding::slower}};
  st = bisect_state(shape, one);
  EXPECT_EQ(st.next, (StepQuestion{.kernel = 4, .reference = 0}));
  ASSERT_TRUE(st.searching);
  EXPECT_EQ(*st.searching, (CulpritRange{.first = 1, .last = 8, .reference = 0}));
}

TEST(BisectStrategy, RunningOutOfStepsOrBudgetEndsWithTheRangeSoFar) {
  Series s(16);
  s.effect[7] = 0.8;
  Search r = bisect(s, 2);
  EXPECT_EQ(r.state.end, SearchEnd::out_of_steps);
  ASSERT_EQ(r.state.culprits.size(), 1u);
  EXPECT_EQ(r.state.culprits[0], (CulpritRange{.first = 1, .last = 8, .reference = 0}));
  EXPECT_TRUE(r.state.rest_unsettled);

  r = bisect(s, 0, [](const std::vector<StepAnswer>& a) { return a.size() >= 3; });
  EXPECT_EQ(r.state.end, SearchEnd::out_of_budget);
  EXPECT_EQ(r.answers.size(), 3u);
  ASSERT_EQ(r.state.culprits.size(), 1u);
  EXPECT_EQ(r.state.culprits[0], (CulpritRange{.first = 5, .last = 8, .reference = 0}));

  r = bisect(s, 0, [](const std::vector<StepAnswer>&) { return true; });
  EXPECT_EQ(r.state.outcome, BisectOutcome::unsettled);
  EXPECT_TRUE(r.answers.empty());
}

TEST(BisectStrategy, AReplayThatDoesNotFollowTheSearchIsRefusedNamingTheStep) {
  const BisectShape shape{.patches = 8, .max_steps = 9};
  const std::vector<StepAnswer> answers = {{{8, 0}, StepFinding::slower}, {{5, 0}, StepFinding::slower}};
  try {
    bisect_state(shape, answers);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "step 2 compared kernel 5 with kernel 0, but the bisection asks about kernel 4 against kernel 0 "
                 "there: the findings do not belong to this series or search");
  }
  EXPECT_THROW(bisect_state({.patches = 0, .max_steps = 3}, {}), std::invalid_argument);
}

TEST(BisectStrategy, TheErrorBudgetIsShared) {
  EXPECT_EQ(default_max_steps(1), 3);
  EXPECT_EQ(default_max_steps(2), 5);
  EXPECT_EQ(default_max_steps(4), 7);
  EXPECT_EQ(default_max_steps(5), 9);
  EXPECT_EQ(default_max_steps(64), 15);
  EXPECT_DOUBLE_EQ(step_confidence(0.95, 7), 1 - 0.05 / 7);
  EXPECT_DOUBLE_EQ(step_confidence(0.95, 1), 0.95);
  EXPECT_THROW(step_confidence(1.0, 3), std::invalid_argument);
  EXPECT_EQ(step_finding_from_string("not-slower"), StepFinding::not_slower);
  EXPECT_EQ(step_finding_from_string("slow"), std::nullopt);
}

}  // namespace
}  // namespace abvm
