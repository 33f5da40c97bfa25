#include "bisect/step_experiment.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace abvm {

std::uint64_t step_seed(std::uint64_t bisect_seed, int step) {
  // splitmix64 of (seed, step): neighbouring steps get unrelated trial orders.
  std::uint64_t z = bisect_seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(step);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  z &= 0x7fffffffffffffffULL;
  return z == 0 ? 1 : z;
}

int first_look_boots(const Experiment& e) { return e.schedule.boots_per_side; }

namespace {

toml::table& table_in(toml::table& parent, std::string_view key) {
  if (!parent.contains(key)) parent.insert(key, toml::table{});
  toml::table* t = parent[key].as_table();
  if (t == nullptr) throw Error(fmt::format("internal: '{}' of a loaded experiment is not a table", key));
  return *t;
}

void set_side(toml::table& sides, Side side, const std::string& kernel, const std::string& label) {
  toml::table& t = table_in(sides, to_string(side));
  t.insert_or_assign("kernel", kernel);
  t.insert_or_assign("label", label);
}

}  // namespace

std::string step_experiment_text(const Experiment& e, const BisectDir& dir, const BisectPlan& plan,
                                 const StepSetup& setup) {
  toml::table root;
  try {
    root = toml::parse(e.source_text, e.source);
  } catch (const toml::parse_error& ex) {
    throw Error(fmt::format("internal: {} no longer parses: {}", e.source, ex.description()));
  }
  const StepQuestion& q = setup.question;
  root.insert_or_assign("name", BisectDir::step_name(e.name, setup.step));
  root.insert_or_assign("description",
                        fmt::format("abvm bisect {}, step {}: kernel {} ({}) against kernel {} ({})",
                                    dir.root().filename().string(), setup.step, q.kernel, kernel_label(plan, q.kernel),
                                    q.reference, kernel_label(plan, q.reference)));
  toml::table& sides = table_in(root, "sides");
  set_side(sides, Side::a, dir.kernel_recipe(q.reference).string(), kernel_label(plan, q.reference));
  set_side(sides, Side::b, dir.kernel_recipe(q.kernel).string(), kernel_label(plan, q.kernel));
  toml::table& schedule = table_in(root, "schedule");
  schedule.insert_or_assign("seed", static_cast<std::int64_t>(setup.seed));
  if (setup.max_boots_per_side && e.schedule.sequential.enabled) {
    const int budget = std::min(e.schedule.sequential.max_boots_per_side, *setup.max_boots_per_side);
    table_in(schedule, "sequential").insert_or_assign("max_boots_per_side", std::max(budget, first_look_boots(e)));
  }
  table_in(root, "analysis").insert_or_assign("confidence", plan.step_confidence);
  std::ostringstream out;
  out << "# Step " << setup.step << " of the bisection in " << dir.root().string() << ", written by abvm bisect from "
      << e.source << ": kernel " << q.kernel << " against kernel " << q.reference << ", at the level "
      << plan.step_confidence << " (the bisection's error rate shared over at most " << plan.max_steps
      << " steps).\n"
      << toml::toml_formatter{root} << "\n";
  return out.str();
}

Experiment step_experiment(const Experiment& e, const BisectDir& dir, const BisectPlan& plan, const StepSetup& setup) {
  return load_experiment_text(step_experiment_text(e, dir, plan, setup),
                              fmt::format("{} (step {})", e.source, setup.step), plan.config_dir);
}

}  // namespace abvm
