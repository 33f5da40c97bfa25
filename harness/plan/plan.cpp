#include "plan/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/json_read.hpp"

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

std::string json_expected(const Design*) {
  std::vector<std::string> names;
  for (const DesignTraits& t : kDesignTraits) names.push_back(fmt::format("\"{}\"", t.name));
  return fmt::format("one of {}", fmt::join(names, ", "));
}

void read_json(const JsonField& f, Design& design) { design = f.word<Design>(design_from_string, json_expected(&design)); }

void read_json(const JsonField& f, Trial& trial) {
  trial.id = f.required<std::string>("id");
  trial.side = f.required<Side>("side");
  trial.block = f.required<int>("block");
  trial.position = f.required<int>("position");
  trial.workload_order = f.value_or<std::vector<int>>("workload_order", {});
}

namespace {

// The plan's trials, each checked against what the plan's seed and blocks give.
void read_trials(const JsonField& f, Plan& plan) {
  for (const JsonField& t : f.member("trials", "a list").elements()) {
    Trial trial = t.as<Trial>();
    // The length first: the seed's order is computed only for a trial whose order could be it.
    const auto drawn = static_cast<std::size_t>(plan.workloads);
    if (trial.workload_order.size() != drawn || trial.workload_order != workload_order(plan, trial.block)) {
      t.invalid(fmt::format("(trial {}) has a workload order the seed does not give", trial.id));
    }
    const int expected = static_cast<int>(plan.trials.size());
    if (trial.position != expected || trial.id != trial_id(expected)) {
      t.invalid(fmt::format("(trial {}) at position {} is out of order", trial.id, expected));
    }
    if (trial.block < 0 || trial.block >= plan.blocks) t.invalid(fmt::format("(trial {}) has block {}", trial.id, trial.block));
    plan.trials.push_back(std::move(trial));
  }
  const auto per_block = static_cast<std::size_t>(traits(plan.design).trials_per_block);
  if (plan.trials.size() != per_block * static_cast<std::size_t>(plan.blocks)) {
    f.fail(fmt::format("{} trials for {} blocks", plan.trials.size(), plan.blocks));
  }
}

}  // namespace

void read_json(const JsonField& f, Plan& plan) {
  const int version = f.required<int>("plan_schema_version");
  if (version > kPlanSchemaVersion) {
    f.refuse(fmt::format("schema version {} is newer than this abvm understands ({}): resume with a newer abvm", version,
                         kPlanSchemaVersion));
  }
  plan.experiment = f.required<std::string>("experiment");
  const JsonField labels = f.member("labels", "an object");
  plan.label_a = labels.required<std::string>("A");
  plan.label_b = labels.required<std::string>("B");
  const JsonField order = f.member("order", "\"interleaved\" or \"sequential\"");
  const std::string word = order.as<std::string>();
  if (word != "interleaved" && word != "sequential") order.expected("\"interleaved\" or \"sequential\"");
  plan.order = word == "sequential" ? ScheduleOrder::sequential : ScheduleOrder::interleaved;
  // Plans written before designs existed ran sequential blocks, unpinned.
  plan.design = f.value_or<Design>("design", Design::sequential_blocks);
  // Plans of one CPU set wrote it as "cpu_set" ("" unpinned).
  if (f.has("cpu_sets")) {
    plan.cpu_sets = f.required<std::vector<std::string>>("cpu_sets");
  } else if (const std::string one = f.value_or<std::string>("cpu_set", ""); !one.empty()) {
    plan.cpu_sets = {one};
  }
  plan.seed = f.required<std::uint64_t>("seed");
  if (const auto drawn = f.find("drawn_workload_orders")) {
    plan.workloads = drawn->as<int>();
    if (plan.workloads < 1) drawn->invalid(fmt::format("must be >= 1 (absent: none drawn), not {}", plan.workloads));
  }
  const JsonField blocks = f.member("blocks", "an integer");
  plan.blocks = blocks.as<int>();
  if (plan.blocks < 0) blocks.invalid(fmt::format("must be >= 0, not {}", plan.blocks));
  const auto set_aside = f.find("set_aside_blocks");
  plan.set_aside_blocks = set_aside ? set_aside->as<int>() : 0;
  if (plan.set_aside_blocks < 0 || plan.set_aside_blocks > plan.blocks) {
    set_aside->invalid(fmt::format("must be between 0 and the {} blocks, not {}", plan.blocks, plan.set_aside_blocks));
  }
  read_trials(f, plan);
}

Plan plan_from_json(const nlohmann::json& json, const std::string& file) {
  const JsonSource source{.file = file, .remedy = kDamagedResultsDir};
  return JsonField(json, source).as<Plan>();
}

}  // namespace abvm
