#include <fmt/format.h>

#include <map>

#include "config/load_sections.hpp"
#include "config/rules.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace {

// One guest holds both sides' disks: the sides may differ in their device options only.
void check_same_guest(const KeyReader& r, const Experiment& e) {
  const auto fail_here = [&](const std::string& why) {
    r.fail(r.line_of("schedule.design"), fmt::format("schedule.design = \"same-guest\" boots one guest with both "
                                                     "sides' disks, so the sides may differ only in device options, "
                                                     "but {}: use another design", why));
  };
  if (e.a.kernel != e.b.kernel) fail_here("their kernels differ");
  if (e.a.cmdline != e.b.cmdline) fail_here("their kernel command lines differ");
  if (!(e.a.machine == e.b.machine)) fail_here("their machine options differ");
  if (r.at("disk.path") != nullptr) fail_here("disk.path names one disk (remove it: abvm creates one per side)");
}

void read_cpu_sets(KeyReader& r, ScheduleSettings& s) {
  const bool one = r.at("schedule.cpu_set") != nullptr, many = r.at("schedule.cpu_sets") != nullptr;
  if (one && many) {
    r.fail(r.line_of("schedule.cpu_sets"), "schedule.cpu_set and schedule.cpu_sets both name the host CPUs: keep "
                                           "cpu_sets (a list; one block runs on each set at once)");
  }
  const std::string key = one ? "schedule.cpu_set" : "schedule.cpu_sets";
  if (one) s.cpu_sets = {*r.get_string(key)};
  if (many) s.cpu_sets = *r.get_strings(key);
  const DesignTraits& design = traits(s.design);
  if (!one && !many && !design.default_cpu_set.empty()) s.cpu_sets = {std::string(design.default_cpu_set)};
  std::map<std::int64_t, std::string> owner;
  for (const auto& set : s.cpu_sets) {
    if (!rules::valid_cpu_set(set)) {
      r.fail(r.line_of(key), fmt::format("key '{}' = {} is not a host CPU set: write CPU numbers and ranges such as "
                                         "\"0\", \"2-3\" or \"0,2\"", key, quote(set)));
    }
    if (std::ssize(rules::cpu_set_members(set)) < design.cpus_per_lane) {
      r.fail(r.line_of(key), fmt::format("key '{}': the CPU set {} holds fewer than the {} CPUs schedule.design = {} "
                                         "needs in each lane, one for each guest that measures while the other does "
                                         "(on one CPU each guest's work delays its partner's: the slower side's runs "
                                         "took 3-4 ms longer); give each set {} CPUs, e.g. \"0-1\", or use "
                                         "design = \"lockstep\"", key, quote(set), design.cpus_per_lane,
                                         quote(design.name), design.cpus_per_lane));
    }
    for (auto cpu : rules::cpu_set_members(set)) {
      if (auto [it, fresh] = owner.emplace(cpu, set); !fresh) {
        r.fail(r.line_of(key), fmt::format("key '{}': CPU {} is in {} and in {}: the lanes' CPU sets must not overlap "
                                           "(each runs its own block at the same time)", key, cpu, quote(it->second),
                                           quote(set)));
      }
    }
  }
  if (s.cpu_sets.size() > 1 && r.at("disk.path") != nullptr) {
    r.fail(r.line_of(key), fmt::format("key '{}' runs {} blocks at once, each on scratch images of its own: remove "
                                       "disk.path and let abvm create them", key, s.cpu_sets.size()));
  }
  std::vector<std::string> quoted;
  for (const auto& set : s.cpu_sets) quoted.push_back(quote(set));
  r.note("schedule.cpu_set", one ? quote(s.cpu_sets[0]) : "unset");
  r.note("schedule.cpu_sets", many ? fmt::format("[{}]", fmt::join(quoted, ", ")) : "unset");
}

// schedule.design, schedule.cpu_set and schedule.cpu_sets (after schedule.order, which the
// designs that pair A with B need, and after the sides, which same-guest compares).
void read_design(KeyReader& r, const Experiment& e, ScheduleSettings& s) {
  if (auto design = r.get_string("schedule.design")) s.design = *design_from_string(*design);  // choices checked
  r.note("schedule.design", quote(to_string(s.design)));
  const std::string name = quote(to_string(s.design));
  if (traits(s.design).pairs_sides && s.order != ScheduleOrder::interleaved) {
    r.fail(r.line_of("schedule.design"), fmt::format("schedule.design = {} pairs each block's A and B boots: it needs "
                                                     "schedule.order = \"interleaved\"; remove the order", name));
  }
  if (traits(s.design).guests_at_once && r.at("disk.path") != nullptr) {
    r.fail(r.line_of("schedule.design"), fmt::format("schedule.design = {} runs two guests at once, each on a scratch "
                                                     "image of its own: remove disk.path and let abvm create them", name));
  }
  if (traits(s.design).both_sides_per_trial) check_same_guest(r, e);
  read_cpu_sets(r, s);
}

}  // namespace

void read_schedule(KeyReader& r, Experiment& e) {
  ScheduleSettings& s = e.schedule;
  s.boots_per_side = r.get_int("schedule.boots_per_side").value_or(s.boots_per_side);
  r.note("schedule.boots_per_side", std::to_string(s.boots_per_side));
  if (auto order = r.get_string("schedule.order")) {
    s.order = *order == "sequential" ? ScheduleOrder::sequential : ScheduleOrder::interleaved;
  }
  r.note("schedule.order", quote(to_string(s.order)));
  if (auto w = r.get_string("schedule.workload_order")) s.draw_workload_order = *w == "drawn";
  r.note("schedule.workload_order", s.draw_workload_order ? "\"drawn\"" : "\"as-listed\"");
  read_design(r, e, s);
  s.max_start_skew = r.get_duration("schedule.max_start_skew").value_or(s.max_start_skew);
  r.note("schedule.max_start_skew", quote(format_duration(s.max_start_skew)));
  // The old overlap rule: read (its range still checked) and left unused, said so where it is shown.
  if (const auto old = r.get_number("schedule.min_overlap")) {
    r.note("schedule.min_overlap", fmt::format("{} (not used: pairs are left out by schedule.max_start_skew only)", *old));
  }
  s.vcpu_swap = r.get_duration("schedule.vcpu_swap").value_or(s.vcpu_swap);
  r.note("schedule.vcpu_swap", quote(format_duration(s.vcpu_swap)));
  if (auto seed = r.get_integer("schedule.seed")) s.seed = static_cast<std::uint64_t>(*seed);
  r.note("schedule.seed", std::to_string(s.seed));
  s.boot_timeout = r.get_duration("schedule.boot_timeout").value_or(s.boot_timeout);
  r.note("schedule.boot_timeout", quote(format_duration(s.boot_timeout)));
  s.run_timeout = r.get_duration("schedule.run_timeout").value_or(s.run_timeout);
  r.note("schedule.run_timeout", quote(format_duration(s.run_timeout)));
  s.min_run_time = r.get_duration("schedule.min_run_time").value_or(s.min_run_time);
  r.note("schedule.min_run_time", quote(format_duration(s.min_run_time)));
  s.allow_identical_sides = r.get_bool("schedule.allow_identical_sides").value_or(false);
  r.note("schedule.allow_identical_sides", render(s.allow_identical_sides));
  s.infra_retries = r.get_int("schedule.infra_retries").value_or(s.infra_retries);
  r.note("schedule.infra_retries", std::to_string(s.infra_retries));
  s.console_limit = r.get_size("schedule.console_limit").value_or(s.console_limit);
  r.note("schedule.console_limit", quote(format_size(s.console_limit)));

  SequentialSettings& q = s.sequential;
  q.enabled = r.get_bool("schedule.sequential.enabled").value_or(q.enabled);
  r.note("schedule.sequential.enabled", render(q.enabled));
  q.max_boots_per_side = r.get_int("schedule.sequential.max_boots_per_side").value_or(q.max_boots_per_side);
  r.note("schedule.sequential.max_boots_per_side", std::to_string(q.max_boots_per_side));
  q.max_wall_time = r.get_duration("schedule.sequential.max_wall_time").value_or(q.max_wall_time);
  r.note("schedule.sequential.max_wall_time", quote(format_duration(q.max_wall_time)));
  q.look_every = r.get_int("schedule.sequential.look_every").value_or(q.look_every);
  r.note("schedule.sequential.look_every", std::to_string(q.look_every));
  if (auto c = r.get_string("schedule.sequential.correction")) {
    // The key table's choices have been checked: one of these matches.
    for (auto k : {LookCorrection::obrien_fleming, LookCorrection::pocock, LookCorrection::pocock_spending,
                   LookCorrection::bonferroni}) {
      if (*c == to_string(k)) q.correction = k;
    }
  }
  r.note("schedule.sequential.correction", quote(to_string(q.correction)));
  if (q.enabled && q.max_boots_per_side < s.boots_per_side) {
    const std::string key = r.at("schedule.sequential.max_boots_per_side") != nullptr
                                  ? "schedule.sequential.max_boots_per_side"
                                  : "schedule.boots_per_side";
    r.fail(r.line_of(key), fmt::format("schedule.sequential.max_boots_per_side = {} is less than "
                                       "schedule.boots_per_side = {}: the budget must allow the first look; "
                                       "raise it or lower boots_per_side",
                                       q.max_boots_per_side, s.boots_per_side));
  }
}

}  // namespace abvm::loader
