#pragma once
// The search of `abvm bisect`: which kernel of a patch series to compare with which, and what the
// answers so far say. Pure: no I/O, no clock, no statistics. Given the findings of the steps run
// so far, in order, it says which step to run next, or that the bisection is over and what it
// found. `abvm bisect` (bisect/bisection.hpp) feeds it real A/B runs; the benchmark
// (harness/bench/bisect_tool.cpp) feeds it simulated ones. Resuming a bisection is replaying the
// findings of its ledger.
//
// Kernel k (0 <= k <= N) is the base with the first k patches of the series; kernel 0 is the
// base, kernel N the whole series. A step asks one question: is kernel `kernel` slower than
// kernel `reference`? Its finding is one of
//   slower       significantly slower (the step's verdict is regression),
//   not_slower   not slower by more than the margin (every metric's interval lies above
//                1 - margin; bisect/classify.hpp),
//   unknown      neither, within the step's budget (or the step could not be measured).
// Between the two lies an indifference zone: a patch that costs less than the margin may be
// called either way, and a named culprit is the patch where the kernels turn from "not slower by
// more than the margin" to "slower".
//
// The search, in rounds. A round has a reference r (0 in the first round):
//   1. Is the whole series slower than r? (kernel N against r). In the first round this is the
//      confirmation that the series regresses; not_slower ends the bisection ("no regression"),
//      unknown ends it unsettled. In later rounds it asks whether the patches after the last
//      culprit add a share of their own.
//   2. Binary search in (lo, hi], lo = r (not slower, trivially) and hi = N (slower): ask about
//      the untested kernel nearest the middle; slower moves hi down, not_slower moves lo up,
//      unknown leaves the kernel untested-for-good and the next one nearest the middle is tried.
//      When hi = lo + 1 the culprit is patch hi; when every kernel in (lo, hi) is unknown, the
//      answer is the range of patches lo+1..hi, said as such.
//   3. The next round takes the culprit's kernel hi as its reference: a later patch that makes
//      it slower still is a second culprit, with a share of its own measured against the kernel
//      just before it rather than against the base (co-scheduled blocks pair a step's two
//      kernels, so this is the sharpest comparison of that share).
// A bisection runs at most max_steps steps; when they run out, or the caller's boot budget does,
// the round being searched ends with its range.
//
// The error budget (Bonferroni over the steps): every step runs at the level
// 1 - (1 - confidence) / max_steps, its own group-sequential looks spending that step's share
// (plan/looks.hpp). A wrong conclusion needs at least one wrong finding (a slower kernel that is
// not slower at all, or a not_slower kernel that is slower by more than the margin), and by the
// union bound the chance of any wrong finding among at most max_steps steps is at most
// 1 - confidence, whichever steps the search chooses: each step's error rate holds given the
// steps before it, since every step boots its own guests. Holm's step-down would need every
// step's p-value at once; a bisection must decide each step before it knows the next.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace abvm {

// "is kernel `kernel` slower than kernel `reference`?"
struct StepQuestion {
  int kernel = 0;
  int reference = 0;
  bool operator==(const StepQuestion&) const = default;
};

enum class StepFinding { slower, not_slower, unknown };
const char* to_string(StepFinding finding);
// "slower" / "not-slower" / "unknown"; nullopt otherwise.
std::optional<StepFinding> step_finding_from_string(std::string_view text);

struct StepAnswer {
  StepQuestion question;
  StepFinding finding = StepFinding::unknown;
};

// Patches first..last (1-based) hold a culprit, measured against kernel `reference`. first ==
// last names one patch. `unknown` lists the kernels in (first - 1, last) whose steps were
// unknown: they are why the range is not narrower.
struct CulpritRange {
  int first = 0, last = 0;
  int reference = 0;
  std::vector<int> unknown;
  bool exact() const { return first == last; }
  bool operator==(const CulpritRange&) const = default;
};

enum class BisectOutcome {
  running,        // a next step is asked for
  no_regression,  // the whole series is not slower than the base by more than the margin
  unsettled,      // whether the whole series is slower could not be settled
  culprits,       // the series is slower; `culprits` says where
};
const char* to_string(BisectOutcome outcome);

// Why the bisection ended, when it ended before the search did.
enum class SearchEnd { searched, out_of_steps, out_of_budget };
const char* to_string(SearchEnd end);

struct BisectShape {
  int patches = 0;    // N >= 1
  int max_steps = 0;  // >= 1
};

// The steps a bisection of `patches` patches may run by default: enough to confirm the series and
// find two culprits by binary search, and to ask about the rest after each:
// 3 + 2 ceil(log2 N).
int default_max_steps(int patches);

// The level of each step: 1 - (1 - confidence) / max_steps (see above).
double step_confidence(double confidence, int max_steps);

struct BisectState {
  BisectOutcome outcome = BisectOutcome::running;
  std::optional<StepQuestion> next;        // set while running
  std::vector<CulpritRange> culprits;      // in series order, each adding a share of its own
  // The range being narrowed by `next` (running), or nullopt.
  std::optional<CulpritRange> searching;
  // Culprits were found, but whether the patches after the last one add a further share could
  // not be settled (its step was unknown, or the steps or budget ran out first).
  bool rest_unsettled = false;
  SearchEnd end = SearchEnd::searched;
};

// The state after `answers`, which must be the answers to the questions this function asked, in
// order (std::invalid_argument otherwise, naming the first that is not). `budget_spent`: the
// caller can run no more steps (its boot budget is spent), so the state is final.
BisectState bisect_state(const BisectShape& shape, std::span<const StepAnswer> answers, bool budget_spent = false);

}  // namespace abvm
