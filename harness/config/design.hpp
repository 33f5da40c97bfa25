#pragma once
// The measurement designs (schedule.design) as facts: everything config, plan, run and verdict ask
// of a design, in one table. How a design behaves when it runs (how a block's trials meet, what
// each guest is told, how its pairs are timed) lives in run/designs/, one file per design.
//
// A new design: a value here with its row in kDesignTraits, its file in run/designs/ and its line in
// run/designs/registry.cpp (harness/ARCHITECTURE.md, "Designs").
#include <cstddef>
#include <optional>
#include <string_view>

namespace abvm {

// How the A and B boots of one block meet the host's noise (plan/plan.hpp):
//   sequential_blocks: one guest at a time, the block's A and B boots one after the other;
//   co_scheduled: the block's A and B guests run at the same time, pinned to the same host CPU
//     set of at least two CPUs (one for each guest: on one CPU each took CPU from the other); each
//     run of A and its partner run of B start on one go from the host and end together
//     (the faster guest repeats its run, unmeasured, until the slower one is done), so a slow
//     phase of that CPU hits both and neither measures alone; the per-block ratio is the paired unit;
//   lockstep: as co_scheduled, but each step's runs take turns on the host's go (A's run k, then
//     B's run k, ...), so the two never compete for the CPU while they measure;
//   same_guest: one guest per block holds both sides' scratch disks (the sides may differ only in
//     device options) and alternates its runs between them; the boot is the paired unit.
enum class Design { sequential_blocks, co_scheduled, lockstep, same_guest };

// How the runs of the guests alive in one block are paced against each other (the guest job's
// `pace`, guest/job.hpp):
//   free: each guest runs its steps one after the other;
//   together: each step is a window the host opens for both guests at once and closes when both
//     are done;
//   turns: the same window, opened for one guest at a time.
enum class Pacing { free, together, turns };

struct DesignTraits {
  Design design;
  std::string_view name;          // the schedule.design value
  std::string_view doc;           // its part of the key table's text
  int trials_per_block;           // boots per block: one per side, or 1 when one guest measures both
  bool guests_at_once;            // a block's two guests are alive together, each on a scratch image of its own
  int disks_per_guest;            // 2 when one guest holds both sides' disks
  bool both_sides_per_trial;      // a trial (one boot) measures both sides: its workloads are named per
                                  // side, it shows as "A+B", and the sides may differ in device options only
  Pacing pacing;
  bool filler;                    // paced together: the faster guest keeps its load going until the stop
  bool pairs_sides;               // A and B share the noise of each block: the paired estimate decides
  bool overlap_by_intent;         // a run and its partner run are meant to overlap: pairs that started
                                  // further apart than schedule.max_start_skew are left out of the analysis
  int runs_per_own_run;           // runs a guest lives through per run of its own (its trial's timeout)
  int trials_in_block_time;       // a block's wall time in trials: 2 one after the other, else 1
  int cpus_per_lane;              // host CPUs a lane's set must hold: one per guest that measures while
                                  // another does (issue 26: a pair co-scheduled on one CPU made its slower
                                  // side's runs 3-4 ms longer, its partner's CPU work queued before its own)
  std::string_view default_cpu_set;  // the lanes' CPU set when no schedule.cpu_set(s) is given ("" unpinned)
};

inline constexpr DesignTraits kDesignTraits[] = {
    {.design = Design::sequential_blocks,
     .name = "sequential-blocks",
     .doc = "one guest at a time",
     .trials_per_block = 2,
     .guests_at_once = false,
     .disks_per_guest = 1,
     .both_sides_per_trial = false,
     .pacing = Pacing::free,
     .filler = false,
     .pairs_sides = false,
     .overlap_by_intent = false,
     .runs_per_own_run = 1,
     .trials_in_block_time = 2,
     .cpus_per_lane = 1,
     .default_cpu_set = ""},
    {.design = Design::co_scheduled,
     .name = "co-scheduled",
     .doc = "A and B guests at once on the same host CPUs (two at least), each run of A and its partner run of B "
            "started on one go and ended together",
     .trials_per_block = 2,
     .guests_at_once = true,
     .disks_per_guest = 1,
     .both_sides_per_trial = false,
     .pacing = Pacing::together,
     .filler = true,
     .pairs_sides = true,
     .overlap_by_intent = true,
     .runs_per_own_run = 1,
     .trials_in_block_time = 1,
     .cpus_per_lane = 2,
     .default_cpu_set = "0-1"},
    {.design = Design::lockstep,
     .name = "lockstep",
     .doc = "the same, runs taking turns on the host's go",
     .trials_per_block = 2,
     .guests_at_once = true,
     .disks_per_guest = 1,
     .both_sides_per_trial = false,
     .pacing = Pacing::turns,
     .filler = false,
     .pairs_sides = true,
     .overlap_by_intent = false,
     .runs_per_own_run = 2,
     .trials_in_block_time = 1,
     .cpus_per_lane = 1,
     .default_cpu_set = "0"},
    {.design = Design::same_guest,
     .name = "same-guest",
     .doc = "one guest with both sides' disks, runs alternating; sides that differ in device options only",
     .trials_per_block = 1,
     .guests_at_once = false,
     .disks_per_guest = 2,
     .both_sides_per_trial = true,
     .pacing = Pacing::free,
     .filler = false,
     .pairs_sides = true,
     .overlap_by_intent = false,
     .runs_per_own_run = 2,
     .trials_in_block_time = 1,
     .cpus_per_lane = 1,
     .default_cpu_set = ""},
};

constexpr const DesignTraits& traits(Design d) { return kDesignTraits[static_cast<std::size_t>(d)]; }
static_assert([] {
  for (std::size_t i = 0; i < std::size(kDesignTraits); ++i) {
    if (static_cast<std::size_t>(kDesignTraits[i].design) != i) return false;
  }
  return true;
}(), "kDesignTraits lists every design in the enum's order");

const char* to_string(Design design);
// "sequential-blocks" / "co-scheduled" / "lockstep" / "same-guest"; nullopt for anything else.
std::optional<Design> design_from_string(std::string_view text);

}  // namespace abvm
