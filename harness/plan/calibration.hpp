#pragma once
// The host's design calibration (harness/bench/calibrate_designs.py writes it, by default to
// <abvm cache>/calibration.json): per design, the sd of the per-block log ratio, the sd of a
// boot's log value, and the blocks per minute, measured in A/A runs on this host. `abvm run`
// reads it before it boots anything and warns when the experiment's budget cannot settle its
// margin in the chosen design, naming the design that would.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"

namespace abvm {

struct DesignCalibration {
  Design design = Design::sequential_blocks;
  double pair_sd = 0;            // sd of ln(B/A) per block
  double boot_sd = 0;            // sd of a boot's ln value within a side
  double blocks_per_minute = 0;
};

struct HostCalibration {
  std::string host;
  std::string time;              // when it was measured (UTC)
  std::vector<DesignCalibration> designs;
};

// Reads a calibration file; nullopt when there is none. Throws Error naming the file and the
// field when it is malformed, with what to do (run the calibration again).
std::optional<HostCalibration> read_calibration(const std::filesystem::path& file);

// Blocks a ±half_width interval of the design's primary estimate (paired for co-scheduled,
// unpaired per side otherwise) needs at two-sided level 1 - alpha: the normal approximation with
// the Hodges-Lehmann efficiency 3/pi (tests check it against the script's figures).
std::uint64_t calibrated_blocks(const DesignCalibration& c, double half_width, double alpha);

// A warning when the experiment's budget (boots per side, or the sequential maximum) falls short
// of the blocks a ±margin/2 interval needs in its design on the calibrated host, with the wall
// time and the best design's figures; nullopt when it suffices, or the calibration is of
// another host or lacks the design.
std::optional<std::string> budget_warning(const Experiment& experiment, const HostCalibration& calibration,
                                          const std::string& this_host);

// What this host's calibration says a ±margin/2 interval costs in the experiment's design and in
// the best other one, in blocks and minutes ("by this host's calibration (2026-12-01T...): ..."),
// for the end of `abvm run`; nullopt when the calibration is of another host or lacks the design.
std::optional<std::string> design_costs(const Experiment& experiment, const HostCalibration& calibration,
                                        const std::string& this_host);

}  // namespace abvm
