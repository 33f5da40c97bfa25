#include "plan/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace abvm {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): a fixed, portable mixer, so that a recorded seed gives
// the same order with any compiler or standard library (std::uniform_int_distribution does not).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Each block's order depends only on (seed, block), which is what makes extension stable.
bool a_first(std::uint64_t seed, int block) {
  return (splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(block))) >> 63) == 0;
}

std::string trial_id(int position) { return fmt::format("t{:04d}", position); }

// Block `block`'s workload order (Fisher-Yates on (seed, block)); empty when not drawn.
std::vector<int> workload_order(const Plan& plan, int block) {
  if (plan.workloads <= 0) return {};
  std::vector<int> order(static_cast<std::size_t>(plan.workloads));
  for (int i = 0; i < plan.workloads; ++i) order[static_cast<std::size_t>(i)] = i;
  std::uint64_t x = splitmix64(plan.seed ^ splitmix64(0x776F726B6C6F6164ULL ^ static_cast<std::uint64_t>(block)));
  for (std::size_t i = order.size(); i > 1; --i) {
    x = splitmix64(x);
    std::swap(order[i - 1], order[x % i]);
  }
  return order;
}

void push(Plan& plan, Side side, int block) {
  const int position = static_cast<int>(plan.trials.size());
  plan.trials.push_back({trial_id(position), side, block, position, workload_order(plan, block)});
}

}  // namespace

Plan make_plan(const Experiment& experiment, std::uint64_t seed) {
  Plan plan;
  plan.experiment = experiment.name;
  plan.label_a = experiment.a.label;
  plan.label_b = experiment.b.label;
  plan.order = experiment.schedule.order;
  plan.design = experiment.schedule.design;
  plan.cpu_sets = experiment.schedule.cpu_sets;
  plan.seed = seed;
  if (experiment.schedule.draw_workload_order) plan.workloads = static_cast<int>(experiment.workloads.size());
  return extend_plan(plan, experiment.schedule.boots_per_side);
}

Plan extend_plan(const Plan& plan, int extra_blocks) {
  if (extra_blocks < 0) throw std::invalid_argument("extend_plan: negative number of blocks");
  Plan out = plan;
  const int first = plan.blocks;
  out.blocks = plan.blocks + extra_blocks;
  if (plan.order == ScheduleOrder::sequential) {
    for (int b = first; b < out.blocks; ++b) push(out, Side::a, b);
    for (int b = first; b < out.blocks; ++b) push(out, Side::b, b);
    return out;
  }
  for (int b = first; b < out.blocks; ++b) {
    const bool a = a_first(plan.seed, b);
    push(out, a ? Side::a : Side::b, b);
    if (traits(plan.design).trials_per_block == 2) push(out, a ? Side::b : Side::a, b);
  }
  return out;
}

std::string describe_plan(const Plan& plan) {
  std::string out = fmt::format("plan for {}: {} trials, {} boots per side, order {}, design {}{}, seed {}\n",
                                plan.experiment, plan.trials.size(), plan.blocks, to_string(plan.order),
                                to_string(plan.design),
                                plan.cpu_sets.empty() ? "" : fmt::format(" on host CPUs {}", fmt::join(plan.cpu_sets, " | ")), plan.seed);
  const bool both = traits(plan.design).both_sides_per_trial;
  const bool drawn = plan.workloads > 0;
  out += fmt::format("{:<7} {:>5}  {}{}\n", "trial", "block", drawn ? "workloads  " : "",
                     both ? "sides (first runs first)" : "side");
  for (const Trial& t : plan.trials) {
    const Side other = t.side == Side::a ? Side::b : Side::a;
    const auto label = [&](Side s) { return fmt::format("{} ({})", to_string(s), s == Side::a ? plan.label_a : plan.label_b); };
    const std::string order = drawn ? fmt::format("{:<11}", fmt::format("{}", fmt::join(t.workload_order, " "))) : "";
    out += fmt::format("{:<7} {:>5}  {}{}\n", t.id, t.block, order, both ? label(t.side) + " + " + label(other) : label(t.side));
  }
  return out;
}

nlohmann::json plan_to_json(const Plan& plan) {
  nlohmann::json trials = nlohmann::json::array();
  for (const Trial& t : plan.trials) {
    trials.push_back({{"id", t.id}, {"side", to_string(t.side)}, {"block", t.block}, {"position", t.position}});
    if (!t.workload_order.empty()) trials.back()["workload_order"] = t.workload_order;
  }
  nlohmann::json out = {{"plan_schema_version", kPlanSchemaVersion},
                         {"experiment", plan.experiment},
                         {"labels", {{"A", plan.label_a}, {"B", plan.label_b}}},
                         {"order", to_string(plan.order)},
                         {"design", to_string(plan.design)},
                         {"cpu_sets", plan.cpu_sets},
                         {"seed", plan.seed},
                         {"blocks", plan.blocks},
                         {"trials", trials}};
  if (plan.workloads > 0) out["drawn_workload_orders"] = plan.workloads;
  if (plan.set_aside_blocks > 0) out["set_aside_blocks"] = plan.set_aside_blocks;
  return out;
}

Plan plan_from_json(const nlohmann::json& json) {
  const auto bad = [](const std::string& what) {
    return Error(fmt::format("plan.json: {}: the results directory is damaged; start a new run", what));
  };
  try {
    const int version = json.at("plan_schema_version").get<int>();
    if (version > kPlanSchemaVersion) {
      throw Error(fmt::format("plan.json: schema version {} is newer than this abvm understands ({}): "
                              "resume with a newer abvm", version, kPlanSchemaVersion));
    }
    Plan plan;
    plan.experiment = json.at("experiment").get<std::string>();
    plan.label_a = json.at("labels").at("A").get<std::string>();
    plan.label_b = json.at("labels").at("B").get<std::string>();
    const std::string order = json.at("order").get<std::string>();
    if (order != "interleaved" && order != "sequential") throw bad(fmt::format("unknown order '{}'", order));
    plan.order = order == "sequential" ? ScheduleOrder::sequential : ScheduleOrder::interleaved;
    // Plans written before designs existed ran sequential blocks, unpinned.
    const std::string design = json.value("design", to_string(Design::sequential_blocks));
    const auto parsed_design = design_from_string(design);
    if (!parsed_design) throw bad(fmt::format("unknown design '{}'", design));
    plan.design = *parsed_design;
    // Plans of one CPU set wrote it as "cpu_set" ("" unpinned).
    if (json.contains("cpu_sets")) {
      plan.cpu_sets = json.at("cpu_sets").get<std::vector<std::string>>();
    } else if (const std::string one = json.value("cpu_set", ""); !one.empty()) {
      plan.cpu_sets = {one};
    }
    plan.seed = json.at("seed").get<std::uint64_t>();
    plan.workloads = json.value("drawn_workload_orders", 0);
    plan.blocks = json.at("blocks").get<int>();
    plan.set_aside_blocks = json.value("set_aside_blocks", 0);
    if (plan.set_aside_blocks < 0 || plan.set_aside_blocks > plan.blocks) {
      throw bad(fmt::format("{} set-aside blocks of {}", plan.set_aside_blocks, plan.blocks));
    }
    for (const auto& t : json.at("trials")) {
      Trial trial;
      trial.id = t.at("id").get<std::string>();
      const std::string side = t.at("side").get<std::string>();
      const auto parsed_side = parse_side(side);
      if (!parsed_side) throw bad(fmt::format("trial {} has side '{}'", trial.id, side));
      trial.side = *parsed_side;
      trial.block = t.at("block").get<int>();
      trial.position = t.at("position").get<int>();
      trial.workload_order = t.value("workload_order", std::vector<int>{});
      if (trial.workload_order != workload_order(plan, trial.block)) {
        throw bad(fmt::format("trial {} has a workload order the seed does not give", trial.id));
      }
      const int expected = static_cast<int>(plan.trials.size());
      if (trial.position != expected || trial.id != trial_id(expected)) {
        throw bad(fmt::format("trial {} at position {} is out of order", trial.id, expected));
      }
      if (trial.block < 0 || trial.block >= plan.blocks) throw bad(fmt::format("trial {} has block {}", trial.id, trial.block));
      plan.trials.push_back(std::move(trial));
    }
    if (plan.trials.size() != static_cast<std::size_t>(traits(plan.design).trials_per_block * plan.blocks)) {
      throw bad(fmt::format("{} trials for {} blocks", plan.trials.size(), plan.blocks));
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw bad(e.what());
  }
}

}  // namespace abvm
