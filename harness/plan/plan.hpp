#pragma once
// The plan: which side boots when. A pure value computed from the experiment and a seed (no
// I/O, no clock), printed by --dry-run, stored as plan.json in the results directory and
// loaded back by --resume. The run stage executes it trial by trial.
//
// One trial = one boot of one side running all workloads with their repetitions. Trials come
// in blocks; block k holds the k-th boot of A and the k-th boot of B.
//   interleaved (default): A/B blocks one after the other, the order inside each block (AB or
//     BA) drawn from the seed. Slow phases of the host then hit both sides alike, and a
//     systematic "first after the other side" effect is randomised away.
//   sequential (only on request): all A, then all B (what the seed's data did; confounds
//     host drift with the kernel).
// The design (config/experiment.hpp Design) says how a block's trials run: one after the other,
// both guests at once on the same host CPUs (co-scheduled, lockstep: the run stage starts them
// together), or one guest that measures both sides (same-guest: the block is one trial, whose
// side is the side that runs first in it). Recorded here so that the plan says what its blocks
// mean. Which lane (host, CPU set) runs a block is the run stage's choice, recorded with the
// trial's result: it is not part of the plan or of its randomness.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/experiment.hpp"

namespace abvm {

struct Trial {
  std::string id;       // "t0000", "t0001", ... by position
  Side side = Side::a;
  int block = 0;        // 0-based A/B block
  int position = 0;     // 0-based place in the overall order (= the number in the id)
  // The order its boot runs the workloads in (indices into the experiment's list), the same for
  // both trials of a block; empty: as listed.
  std::vector<int> workload_order;
  bool operator==(const Trial&) const = default;
};

struct Plan {
  std::string experiment;          // Experiment::name
  std::string label_a;
  std::string label_b;
  ScheduleOrder order = ScheduleOrder::interleaved;
  Design design = Design::sequential_blocks;
  std::vector<std::string> cpu_sets;  // one lane per host CPU set (empty: one unpinned lane)
  std::uint64_t seed = 0;
  int workloads = 0;               // drawn orders: how many workloads each boot runs; 0: as listed
  int blocks = 0;                  // boots per side
  // Blocks run only to size the runs and set aside (run/sizing.hpp): 1 when the first block's runs
  // were too short and the plan got one block more for it, else 0. The looks count the others.
  int set_aside_blocks = 0;
  std::vector<Trial> trials;       // in execution order
  bool operator==(const Plan&) const = default;
};

// Version of plan.json's layout; its reader refuses newer ones.
inline constexpr int kPlanSchemaVersion = 1;

// experiment.schedule.boots_per_side blocks. Deterministic: the same experiment and seed give
// the same plan on every machine.
Plan make_plan(const Experiment& experiment, std::uint64_t seed);

// The plan with `extra_blocks` more blocks (sequential stopping). Existing trials keep their
// ids, sides and positions; the new ones follow. extend_plan(make_plan(e, s), m) equals the
// plan of e with boots_per_side + m, so a resumed or extended run is the same experiment.
Plan extend_plan(const Plan& plan, int extra_blocks);

// The trial order as a table, for --dry-run.
std::string describe_plan(const Plan& plan);

// plan.json, written and read (core/json_read.hpp). The reader throws Error naming the field for a
// malformed file, and refuses a newer version; plans older than designs read as sequential blocks,
// and those of one CPU set ("cpu_set") as that set.
nlohmann::json plan_to_json(const Plan& plan);
Plan plan_from_json(const nlohmann::json& json, const std::string& file = "plan.json");
// What every reader of a results directory's files tells the user when one is damaged.
inline constexpr const char* kDamagedResultsDir = "the results directory is damaged; start a new run";
class JsonField;
// A design read as its schedule.design word (config/design.hpp); the words, for an error.
void read_json(const JsonField& f, Design& design);
std::string json_expected(const Design*);
void read_json(const JsonField& f, Trial& trial);
void read_json(const JsonField& f, Plan& plan);

}  // namespace abvm
