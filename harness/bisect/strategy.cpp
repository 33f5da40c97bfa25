#include "bisect/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace abvm {

const char* to_string(StepFinding finding) {
  switch (finding) {
    case StepFinding::slower: return "slower";
    case StepFinding::not_slower: return "not-slower";
    case StepFinding::unknown: return "unknown";
  }
  return "?";
}

std::optional<StepFinding> step_finding_from_string(std::string_view text) {
  for (StepFinding f : {StepFinding::slower, StepFinding::not_slower, StepFinding::unknown}) {
    if (text == to_string(f)) return f;
  }
  return std::nullopt;
}

const char* to_string(BisectOutcome outcome) {
  switch (outcome) {
    case BisectOutcome::running: return "running";
    case BisectOutcome::no_regression: return "no-regression";
    case BisectOutcome::unsettled: return "unsettled";
    case BisectOutcome::culprits: return "culprits";
  }
  return "?";
}

const char* to_string(SearchEnd end) {
  switch (end) {
    case SearchEnd::searched: return "searched";
    case SearchEnd::out_of_steps: return "out-of-steps";
    case SearchEnd::out_of_budget: return "out-of-budget";
  }
  return "?";
}

int default_max_steps(int patches) {
  if (patches < 1) throw std::invalid_argument("a series has at least one patch");
  const int depth = static_cast<int>(std::ceil(std::log2(static_cast<double>(patches)) - 1e-9));
  return 3 + 2 * depth;
}

double step_confidence(double confidence, int max_steps) {
  if (!(confidence > 0 && confidence < 1) || max_steps < 1) {
    throw std::invalid_argument("step_confidence: confidence must be in (0, 1) and max_steps at least 1");
  }
  return 1 - (1 - confidence) / max_steps;
}

namespace {

// The answers in order, handed out one question at a time. When they are used up, the question
// becomes the next step, or the bisection ends because no step may run any more.
class Replay {
 public:
  Replay(const BisectShape& shape, std::span<const StepAnswer> answers, bool budget_spent)
      : shape_(shape), answers_(answers), budget_spent_(budget_spent) {}

  std::optional<StepFinding> ask(const StepQuestion& q) {
    if (used_ < answers_.size()) {
      const StepAnswer& a = answers_[used_];
      if (!(a.question == q)) {
        throw std::invalid_argument(fmt::format(
            "step {} compared kernel {} with kernel {}, but the bisection asks about kernel {} against kernel {} "
            "there: the findings do not belong to this series or search",
            used_ + 1, a.question.kernel, a.question.reference, q.kernel, q.reference));
      }
      ++used_;
      return a.finding;
    }
    if (budget_spent_) {
      end_ = SearchEnd::out_of_budget;
    } else if (static_cast<int>(answers_.size()) >= shape_.max_steps) {
      end_ = SearchEnd::out_of_steps;
    } else {
      next_ = q;
    }
    return std::nullopt;
  }

  const std::optional<StepQuestion>& next() const { return next_; }
  SearchEnd end() const { return end_; }

 private:
  const BisectShape& shape_;
  std::span<const StepAnswer> answers_;
  bool budget_spent_;
  std::size_t used_ = 0;
  std::optional<StepQuestion> next_;
  SearchEnd end_ = SearchEnd::searched;
};

// One round's binary search for the first kernel in (lo, hi] slower than the reference.
struct Search {
  int reference = 0, lo = 0, hi = 0;
  std::vector<int> unknown;

  // The untested kernel in (lo, hi) nearest the middle (the lower one of two), or nullopt.
  std::optional<int> probe() const {
    std::optional<int> best;
    const double middle = (lo + hi) / 2.0;
    for (int k = lo + 1; k < hi; ++k) {
      if (std::find(unknown.begin(), unknown.end(), k) != unknown.end()) continue;
      if (!best || std::abs(k - middle) < std::abs(*best - middle)) best = k;
    }
    return best;
  }

  CulpritRange range() const {
    CulpritRange r{.first = lo + 1, .last = hi, .reference = reference};
    for (int k : unknown) {
      if (k > lo && k < hi) r.unknown.push_back(k);
    }
    std::sort(r.unknown.begin(), r.unknown.end());
    return r;
  }
};

// The state when the answers ran out at a question: running with it as the next step, or ended.
BisectState stopped_at(const Replay& replay, BisectState s) {
  if (replay.next()) {
    s.outcome = BisectOutcome::running;
    s.next = replay.next();
  } else {
    s.end = replay.end();
  }
  return s;
}

// A round's binary search after its tip was found slower: the culprit range it ends with, or
// nullopt when the answers ran out inside it (then `s` says what is next, or how it ended).
std::optional<CulpritRange> search_round(Replay& replay, int reference, int patches, BisectState& s) {
  Search search{.reference = reference, .lo = reference, .hi = patches};
  while (const auto k = search.probe()) {
    const auto finding = replay.ask({*k, reference});
    if (!finding) {
      if (replay.next()) {
        s = stopped_at(replay, s);
        s.searching = search.range();
      } else {
        s.culprits.push_back(search.range());
        s.outcome = BisectOutcome::culprits;
        s.rest_unsettled = search.hi < patches;
        s.end = replay.end();
      }
      return std::nullopt;
    }
    if (*finding == StepFinding::slower) search.hi = *k;
    if (*finding == StepFinding::not_slower) search.lo = *k;
    if (*finding == StepFinding::unknown) search.unknown.push_back(*k);
  }
  return search.range();
}

}  // namespace

BisectState bisect_state(const BisectShape& shape, std::span<const StepAnswer> answers, bool budget_spent) {
  if (shape.patches < 1 || shape.max_steps < 1) {
    throw std::invalid_argument("bisect_state: a series has at least one patch and a bisection at least one step");
  }
  Replay replay(shape, answers, budget_spent);
  BisectState s;
  s.outcome = BisectOutcome::culprits;
  for (int reference = 0; reference < shape.patches;) {
    const auto tip = replay.ask({shape.patches, reference});
    const bool first_round = s.culprits.empty();
    if (!tip) {
      s = stopped_at(replay, s);
      if (s.outcome != BisectOutcome::running) {
        s.outcome = first_round ? BisectOutcome::unsettled : BisectOutcome::culprits;
        s.rest_unsettled = !first_round;
      }
      return s;
    }
    if (*tip != StepFinding::slower) {
      if (first_round) s.outcome = *tip == StepFinding::not_slower ? BisectOutcome::no_regression : BisectOutcome::unsettled;
      s.rest_unsettled = !first_round && *tip == StepFinding::unknown;
      return s;
    }
    const auto culprit = search_round(replay, reference, shape.patches, s);
    if (!culprit) return s;
    s.culprits.push_back(*culprit);
    reference = culprit->last;
  }
  return s;  // the last culprit is the series' last patch: nothing after it to ask about
}

}  // namespace abvm
