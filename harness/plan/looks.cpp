#include "plan/looks.hpp"

#include <cmath>
#include <stdexcept>

namespace abvm {

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
  const double k = static_cast<double>(at.size());
  const auto spent = [&](int boots) {
    const double t = static_cast<double>(boots) / max_boots;
    return s.overall_alpha * std::log(1 + (std::exp(1.0) - 1) * t);
  };
  double before = 0;
  for (std::size_t i = 0; i < at.size(); ++i) {
    double alpha = s.overall_alpha / k;
    if (correction == LookCorrection::pocock_spending) {
      const double now = spent(at[i]);
      alpha = now - before;
      before = now;
    }
    s.looks.push_back({static_cast<int>(i), at[i], alpha, 1 - alpha});
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

const Look* look_at(const LookSchedule& schedule, int boots_per_side) {
  for (const Look& look : schedule.looks) {
    if (look.boots_per_side == boots_per_side) return &look;
  }
  return nullptr;
}

}  // namespace abvm
