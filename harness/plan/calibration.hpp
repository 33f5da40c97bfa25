#pragma once
// The host's design calibration (harness/bench/calibrate_designs.py writes it, by default to
// <abvm cache>/calibration.json): per design, the noise of A/A runs on this host (the sd of the
// per-block log ratio, the sd of a boot's log value, the blocks per minute), and, from
// calibration_version 2, the design's truth: how its estimates fared on experiments whose effect
// is known (rulers with a known ratio, A/A, controls). `abvm run` reads it before it boots anything
// and warns when the experiment's budget cannot settle its margin in the chosen design, naming the
// design that would and what that design was checked on, and when the chosen design's estimates
// were off on a known effect on this host.
//
// The file (the script's docstring describes every field; this reader needs these):
//   {"calibration_version": 1 | 2, "host": "...", "time": "2026-12-01T05:00:00Z",
//    "designs": [{"design": "co-scheduled", "sd_pair": 0.05, "sd_boot": 0.17,
//                 "blocks_per_minute": 3.2, ...}, ...],
//    "experiments": [                                      (version 2)
//      {"experiment": "ruler-10", "design": "co-scheduled", "metric": "dd-write.bandwidth",
//       "truth": "ratio" | "reference" | "direction", "expected": 0.8975 | null,
//       "runs": [{...}, ...],                               (one per run; only counted here)
//       "bias": {"mean_log": -0.002, "se": 0.001 | null, "runs": 3, "beyond_2se": false | null} | null,
//       "coverage": {"covered": 3, "runs": 3, "level": 0.975, "undercovers": false} | null,
//       "spurious": {"count": 0, "runs": 3}, ...}, ...], ...}
// A version above 2 is refused (its figures may mean something else); other fields are ignored.
#include <cstddef>
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

// One design's estimates of one metric of a known-effect experiment, over the calibration's runs.
struct TruthCheck {
  struct Bias {
    double mean_log = 0;                 // mean of ln(estimate / expected)
    std::optional<double> se;            // its standard error; nullopt from one run
    std::size_t runs = 0;
    bool beyond_2se = false;             // |mean_log| > 2 se
  };
  struct Coverage {
    std::size_t covered = 0, runs = 0;   // runs whose interval held the expected ratio
    double level = 0;                    // the intervals' stated level
    bool undercovers = false;            // P(Binomial(runs, level) <= covered) < 0.05
  };
  std::string experiment;                // "ruler-10", "aa", "swiotlb", ...
  Design design = Design::sequential_blocks;
  std::string metric;
  std::string truth;                     // "ratio", "reference" (swiotlb: the sequential pool), "direction"
  std::optional<double> expected;        // the known ratio; nullopt for "direction"
  std::size_t runs = 0;
  std::optional<Bias> bias;
  std::optional<Coverage> coverage;
  std::size_t spurious = 0, judged = 0;  // verdicts contradicting the truth / runs with a verdict

  // Off on this host: a bias beyond its noise, or intervals that held the truth too rarely.
  bool failed() const;
};

struct HostCalibration {
  int version = 1;
  std::string host;
  std::string time;              // when it was measured (UTC)
  std::vector<DesignCalibration> designs;
  std::vector<TruthCheck> checks;  // empty before calibration_version 2
};

// Reads a calibration file; nullopt when there is none. Throws Error naming the file and the
// field when it is malformed, with what to do (run the calibration again).
std::optional<HostCalibration> read_calibration(const std::filesystem::path& file);

// The readers of the file and its parts (core/json_read.hpp), for read_calibration.
class JsonField;
void read_json(const JsonField& f, HostCalibration& calibration);
void read_json(const JsonField& f, DesignCalibration& design);
void read_json(const JsonField& f, TruthCheck& check);
void read_json(const JsonField& f, TruthCheck::Bias& bias);
void read_json(const JsonField& f, TruthCheck::Coverage& coverage);

// Blocks a ±half_width interval of the design's primary estimate (paired for co-scheduled,
// unpaired per side otherwise) needs at two-sided level 1 - alpha: the normal approximation with
// the Hodges-Lehmann efficiency 3/pi (tests check it against the script's figures).
std::uint64_t calibrated_blocks(const DesignCalibration& c, double half_width, double alpha);

// What the calibration checked the design on, for the texts below: "checked on ruler-10,
// ruler-3: no bias beyond 2 s.e., intervals held the known ratio in 12 of 12 runs, 0 of 12
// verdicts contradicting the known effect", the failed checks with their figures, or "not checked
// on a known effect on this host". A/A counts as a known effect (the ratio 1); "direction" checks
// (only the verdict known) count in the names and the verdicts alone.
std::string truth_summary(const HostCalibration& calibration, Design design);

// A warning when the experiment's budget (boots per side, or the sequential maximum) falls short
// of the blocks a ±margin/2 interval needs in its design on the calibrated host, with the wall
// time and the best design's figures and what it was checked on (a design that failed a truth
// check is never proposed); nullopt when it suffices, or the calibration is of another host or
// lacks the design.
std::optional<std::string> budget_warning(const Experiment& experiment, const HostCalibration& calibration,
                                          const std::string& this_host);

// A warning when the experiment's design failed a truth check on this host: the experiments,
// metrics and figures, and the cheapest other design that was checked and passed, if there is one
// (by its noise figures; without them, the first in the file); nullopt otherwise, or for another
// host's calibration.
std::optional<std::string> truth_warning(const Experiment& experiment, const HostCalibration& calibration,
                                         const std::string& this_host);

// What this host's calibration says a ±margin/2 interval costs in the experiment's design and in
// the best other one that failed no truth check, in blocks and minutes, each with what it was
// checked on ("by this host's calibration (2026-12-01T...): ..."), for the end of `abvm run`;
// nullopt when the calibration is of another host or lacks the design.
std::optional<std::string> design_costs(const Experiment& experiment, const HostCalibration& calibration,
                                        const std::string& this_host);

}  // namespace abvm
