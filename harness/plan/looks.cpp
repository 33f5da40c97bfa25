#include "plan/looks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "plan/group_sequential.hpp"

namespace abvm {

namespace {

// The error rate each look may spend.
std::vector<double> increments(const std::vector<double>& t, double alpha, LookCorrection correction) {
  std::vector<double> spent;
  double before = 0;
  for (double tk : t) {
    if (correction == LookCorrection::bonferroni) {
      spent.push_back(alpha / static_cast<double>(t.size()));
      continue;
    }
    const auto f = correction == LookCorrection::obrien_fleming ? SpendingFunction::obrien_fleming
                                                                 : SpendingFunction::pocock;
    const double now = alpha_spent(f, alpha, tk);
    spent.push_back(std::max(0.0, now - before));
    before = now;
  }
  return spent;
}

// The smallest nominal level a look uses: an O'Brien-Fleming-type look at a small fraction of the
// budget may be entitled to 1e-30, which 1 - alpha cannot hold. Raising it to 1e-12 adds at most
// 1e-12 per look to the error rate; such a look cannot decide anyway.
constexpr double kMinLookAlpha = 1e-12;

}  // namespace

LookSchedule make_look_schedule(int initial_boots, int look_every, int max_boots, double confidence,
                                LookCorrection correction) {
  if (initial_boots < 1 || look_every < 1 || max_boots < initial_boots || !(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("make_look_schedule: impossible arguments");
  }
  LookSchedule s;
  s.correction = correction;
  s.overall_alpha = 1 - confidence;
  std::vector<int> at;
  for (int n = initial_boots; n < max_boots; n += look_every) at.push_back(n);
  at.push_back(max_boots);
  std::vector<double> t;
  for (int n : at) t.push_back(static_cast<double>(n) / max_boots);
  const std::vector<double> spent = increments(t, s.overall_alpha, correction);
  const bool group_sequential = correction == LookCorrection::obrien_fleming || correction == LookCorrection::pocock;
  std::vector<double> c;
  if (group_sequential) c = boundaries_for_increments(t, spent);
  for (std::size_t i = 0; i < at.size(); ++i) {
    // The first look's level is its increment exactly (no correlation to use yet), as is every
    // look's under the union-bound corrections.
    const double boundary = group_sequential ? c[i] : normal_upper_quantile_of(std::max(spent[i], kMinLookAlpha) / 2);
    const double alpha = group_sequential && i > 0 ? 2 * normal_upper_tail(boundary) : spent[i];
    const double level = std::max(alpha, kMinLookAlpha);
    s.looks.push_back({.index = static_cast<int>(i), .boots_per_side = at[i], .fraction = t[i], .spent = spent[i],
                       .boundary = alpha < kMinLookAlpha ? normal_upper_quantile_of(kMinLookAlpha / 2) : boundary,
                       .alpha = level, .confidence = 1 - level});
  }
  return s;
}

LookSchedule make_look_schedule(const Experiment& e) {
  const auto& q = e.schedule.sequential;
  if (!q.enabled) {
    const int n = e.schedule.boots_per_side;
    return make_look_schedule(n, 1, n, e.analysis.confidence, q.correction);
  }
  return make_look_schedule(e.schedule.boots_per_side, q.look_every, q.max_boots_per_side, e.analysis.confidence,
                            q.correction);
}

namespace {

// A percentage with the digits that tell levels near 100 % apart: 99.92 %, 95.77 %, 5 %.
std::string percent(double fraction) {
  std::string s = fmt::format("{:.2f}", fraction * 100);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + " %";
}

}  // namespace

std::string describe_look(const LookSchedule& schedule, const Look& look) {
  return fmt::format("look {} of {} at nominal level {} (boundary {:.3f}), overall error rate {}", look.index + 1,
                     schedule.looks.size(), percent(look.confidence), look.boundary, percent(schedule.overall_alpha));
}

const Look* look_at(const LookSchedule& schedule, int boots_per_side) {
  for (const Look& look : schedule.looks) {
    if (look.boots_per_side == boots_per_side) return &look;
  }
  return nullptr;
}

}  // namespace abvm
