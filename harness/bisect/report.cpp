#include "bisect/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "report/html.hpp"

namespace abvm {
using json = nlohmann::json;

namespace {

const SeriesPatch& patch(const BisectPlan& plan, int index) {
  return plan.patches.at(static_cast<std::size_t>(index - 1));
}

// The step that asked `q`, or nullptr.
const StepRecord* step_of(const std::vector<StepRecord>& steps, const StepQuestion& q) {
  const auto it = std::find_if(steps.begin(), steps.end(), [&](const StepRecord& s) { return s.question == q; });
  return it == steps.end() ? nullptr : &*it;
}

// "dd-write.bandwidth B/A 0.571 [0.522, 0.613] (paired, 99.29 %)"; "" without effects.
std::string effects_text(const StepRecord& s) {
  std::string out;
  for (const auto& e : s.judgement.effects) {
    out += fmt::format("{}{} B/A {:.3f} [{:.3f}, {:.3f}] ({}, {:.2f} %)", out.empty() ? "" : "; ", e.metric,
                       e.estimate, e.low, e.high, e.estimate_kind, e.confidence * 100);
  }
  return out;
}

std::string kernel_text(const BisectPlan& plan, int k) {
  if (k == 0) return fmt::format("kernel 0 ({}, the base)", kernel_label(plan, 0));
  return fmt::format("kernel {} ({})", k, kernel_label(plan, k));
}

std::string patches_text(const BisectPlan& plan, const CulpritRange& r) {
  if (r.exact()) return fmt::format("patch {} ({})", r.first, patch(plan, r.first).name);
  std::string names;
  for (int i = r.first; i <= r.last; ++i) names += (names.empty() ? "" : ", ") + patch(plan, i).name;
  return fmt::format("one of patches {}-{} ({})", r.first, r.last, names);
}

std::string end_text(SearchEnd end) {
  switch (end) {
    case SearchEnd::searched: return "";
    case SearchEnd::out_of_steps: return " (the bisection used all the steps its error budget allows)";
    case SearchEnd::out_of_budget: return " (the boot budget, --max-boots, is spent)";
  }
  return "";
}

// One culprit in words, with the step that showed it and the figures of that step.
std::string culprit_sentence(const BisectReport& r, const CulpritRange& c) {
  const StepRecord* proof = step_of(r.steps, {.kernel = c.last, .reference = c.reference});
  std::string out = fmt::format("{} makes it slower", patches_text(r.plan, c));
  if (proof != nullptr) {
    out += fmt::format(" ({} against {}: {})", kernel_text(r.plan, c.last), kernel_text(r.plan, c.reference),
                       effects_text(*proof));
  }
  if (!c.exact()) {
    std::string unknown;
    for (int k : c.unknown) unknown += (unknown.empty() ? "" : ", ") + std::to_string(k);
    out += unknown.empty() ? "; the search ended before it was narrowed to one patch" + end_text(r.state.end)
                           : fmt::format("; the steps of kernel(s) {} stayed unknown, so this is the narrowest range "
                                         "that holds it",
                                         unknown);
  }
  return out;
}


}  // namespace

std::string bisect_sentence(const BisectReport& r) {
  const BisectState& s = r.state;
  const int n = static_cast<int>(r.plan.patches.size());
  const StepRecord* tip = step_of(r.steps, {.kernel = n, .reference = 0});
  const std::string figures = tip != nullptr && !tip->judgement.effects.empty() ? " (" + effects_text(*tip) + ")" : "";
  switch (s.outcome) {
    case BisectOutcome::running:
      return fmt::format("Not finished{}: {} step(s) done; continue with 'abvm bisect --resume DIR'.",
                         r.interrupted ? " (interrupted)" : "", r.steps.size());
    case BisectOutcome::no_regression:
      return fmt::format("The whole series is not slower than the base by more than {:.0f} %{}: no patch to blame.",
                         r.plan.margin * 100, figures);
    case BisectOutcome::unsettled:
      return fmt::format("Whether the whole series is slower than the base could not be settled{}{}: no patch "
                         "named.",
                         figures, end_text(s.end));
    case BisectOutcome::culprits: break;
  }
  std::string out;
  for (const auto& c : s.culprits) {
    std::string sentence = culprit_sentence(r, c);
    sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
    out += (out.empty() ? "" : " ") + sentence + ".";
  }
  if (s.culprits.size() > 1) out += fmt::format(" Each of these {} adds a significant share of its own.", s.culprits.size());
  if (s.rest_unsettled) {
    out += fmt::format(" Whether the patches after patch {} add a further share could not be settled{}.",
                       s.culprits.back().last, end_text(s.end));
  } else if (s.culprits.back().last < n) {
    out += fmt::format(" The patches after patch {} add no share of their own (not slower by more than {:.0f} %).",
                       s.culprits.back().last, r.plan.margin * 100);
  }
  return out;
}

int bisect_exit_code(const BisectState& state) {
  switch (state.outcome) {
    case BisectOutcome::culprits: return static_cast<int>(ExitCode::regression);
    case BisectOutcome::no_regression: return static_cast<int>(ExitCode::ok);
    case BisectOutcome::unsettled:
    case BisectOutcome::running: return static_cast<int>(ExitCode::inconclusive);
  }
  return static_cast<int>(ExitCode::inconclusive);
}

namespace {

json range_json(const BisectPlan& plan, const CulpritRange& c) {
  json names = json::array();
  for (int i = c.first; i <= c.last; ++i) names.push_back(patch(plan, i).name);
  return {{"first", c.first}, {"last", c.last},       {"exact", c.exact()},
          {"patches", names}, {"reference", c.reference}, {"unknown_kernels", c.unknown}};
}

json step_json(const BisectPlan& plan, const StepRecord& s) {
  json j = step_record_json(s);
  j["kernel_label"] = kernel_label(plan, s.question.kernel);
  j["reference_label"] = kernel_label(plan, s.question.reference);
  j["report"] = s.results_dir.empty() || s.boots_per_side == 0 ? "" : s.results_dir + "/report.html";
  return j;
}

}  // namespace

json bisect_json(const BisectReport& r) {
  const BisectPlan& p = r.plan;
  json series = json::array();
  for (const auto& s : p.patches) {
    series.push_back({{"index", s.index}, {"name", s.name}, {"sha256", s.sha256}, {"commit", s.commit},
                      {"kernel_label", kernel_label(p, s.index)}});
  }
  json culprits = json::array();
  for (const auto& c : r.state.culprits) {
    json j = range_json(p, c);
    const StepRecord* proof = step_of(r.steps, {.kernel = c.last, .reference = c.reference});
    j["step"] = proof != nullptr ? json(proof->step) : json(nullptr);
    culprits.push_back(j);
  }
  json steps = json::array();
  for (const auto& s : r.steps) steps.push_back(step_json(p, s));
  json next = r.state.next ? json{{"kernel", r.state.next->kernel}, {"reference", r.state.next->reference}} : json(nullptr);
  return {{"schema_version", 1},
          {"tool", {{"name", "abvm"}, {"version", ABVM_VERSION}}},
          {"experiment",
           {{"name", p.experiment}, {"config", p.config.string()}, {"base_recipe", p.base_recipe},
            {"tip_recipe", p.tip_recipe}, {"base_label", p.base_label}, {"started", p.started}}},
          {"series", series},
          {"error_budget",
           {{"confidence", p.confidence}, {"margin", p.margin}, {"max_steps", p.max_steps},
            {"step_confidence", p.step_confidence}, {"correction", "bonferroni-over-steps"}}},
          {"max_boots_per_side", p.max_boots_per_side ? json(*p.max_boots_per_side) : json(nullptr)},
          {"seed", p.seed},
          {"status", r.state.outcome == BisectOutcome::running ? (r.interrupted ? "interrupted" : "running") : "finished"},
          {"outcome", to_string(r.state.outcome)},
          {"end", to_string(r.state.end)},
          {"sentence", bisect_sentence(r)},
          {"culprits", culprits},
          {"rest_unsettled", r.state.rest_unsettled},
          {"searching", r.state.searching ? range_json(p, *r.state.searching) : json(nullptr)},
          {"next", next},
          {"boots_per_side", [&] {
             int n = 0;
             for (const auto& s : r.steps) n += s.boots_per_side;
             return n;
           }()},
          {"steps", steps}};
}

std::string bisect_json_text(const BisectReport& r) { return bisect_json(r).dump(2) + "\n"; }

std::string bisect_summary(const BisectReport& r) {
  const BisectPlan& p = r.plan;
  std::string out = fmt::format(
      "abvm bisect {}: {} patch(es) of {} on {}\n"
      "error budget: {:.0f} % overall, Bonferroni over at most {} steps: each step at {:.2f} %; margin {:.0f} %\n\n",
      p.experiment, p.patches.size(), p.tip_recipe, p.base_recipe, p.confidence * 100, p.max_steps,
      p.step_confidence * 100, p.margin * 100);
  for (const auto& s : r.steps) {
    out += fmt::format("step {}: {} against {}: {}, {} boots per side\n  {}\n  {}\n", s.step,
                       kernel_text(p, s.question.kernel), kernel_text(p, s.question.reference),
                       to_string(s.judgement.finding), s.boots_per_side, s.judgement.reason,
                       s.results_dir.empty() ? "(no results directory)" : s.results_dir);
  }
  int boots = 0;
  for (const auto& s : r.steps) boots += s.boots_per_side;
  out += fmt::format("\n{}\n{} boots per side over {} step(s)\n", bisect_sentence(r), boots, r.steps.size());
  return out;
}

}  // namespace abvm
