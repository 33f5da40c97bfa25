#include "plan/calibration.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "plan/plan.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

constexpr int kNewestVersion = 2;

// z of the two-sided level by bisection on erfc (no dependency on the stats stage).
double two_sided_z(double alpha) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::numbers::sqrt2) > alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

bool TruthCheck::failed() const {
  return (bias && bias->beyond_2se) || (coverage && coverage->undercovers);
}

void read_json(const JsonField& f, DesignCalibration& x) {
  x = DesignCalibration{.design = f.required<Design>("design"),
                        .pair_sd = f.required<double>("sd_pair"),
                        .boot_sd = f.required<double>("sd_boot"),
                        .blocks_per_minute = f.required<double>("blocks_per_minute")};
  if (!(x.pair_sd > 0) || !(x.boot_sd > 0) || !(x.blocks_per_minute > 0)) {
    f.fail(fmt::format("design \"{}\" has a figure that is not positive", to_string(x.design)));
  }
}

void read_json(const JsonField& f, TruthCheck::Bias& b) {
  b = TruthCheck::Bias{.mean_log = f.required<double>("mean_log"),
                       .se = f.value_or<std::optional<double>>("se", std::nullopt),
                       .runs = f.required<std::size_t>("runs"),
                       // null when one run gave no standard error to compare with
                       .beyond_2se = f.required<std::optional<bool>>("beyond_2se").value_or(false)};
}

void read_json(const JsonField& f, TruthCheck::Coverage& v) {
  v = TruthCheck::Coverage{.covered = f.required<std::size_t>("covered"),
                           .runs = f.required<std::size_t>("runs"),
                           .level = f.required<double>("level"),
                           .undercovers = f.required<bool>("undercovers")};
}

void read_json(const JsonField& f, TruthCheck& c) {
  c = TruthCheck{.experiment = f.required<std::string>("experiment"),
                 .design = f.required<Design>("design"),
                 .metric = f.required<std::string>("metric"),
                 .truth = f.required<std::string>("truth"),
                 .expected = f.value_or<std::optional<double>>("expected", std::nullopt),
                 .runs = f.member("runs", "a list").elements().size()};
  c.bias = f.required<std::optional<TruthCheck::Bias>>("bias");
  c.coverage = f.required<std::optional<TruthCheck::Coverage>>("coverage");
  if ((c.bias || c.coverage) && !c.expected) {
    f.fail(fmt::format("experiment \"{}\" in design \"{}\" has a bias or coverage but no expected ratio", c.experiment,
                       to_string(c.design)));
  }
  const JsonField spurious = f.member("spurious", "an object");
  c.spurious = spurious.required<std::size_t>("count");
  c.judged = spurious.required<std::size_t>("runs");
}

void read_json(const JsonField& f, HostCalibration& c) {
  const auto version = f.find("calibration_version");
  c.version = version ? version->as<int>() : 1;
  if (c.version < 1) version->fail(fmt::format("calibration_version {} is not one abvm writes", c.version));
  if (c.version > kNewestVersion) {
    f.refuse(fmt::format("calibration_version {} is newer than this abvm reads ({}); update abvm, or measure again with "
                         "this checkout's harness/bench/calibrate_designs.py",
                         c.version, kNewestVersion));
  }
  c.host = f.required<std::string>("host");
  c.time = f.value_or<std::string>("time", "");
  c.designs = f.required<std::vector<DesignCalibration>>("designs");
  if (c.version >= 2) c.checks = f.required<std::vector<TruthCheck>>("experiments");
}

std::optional<HostCalibration> read_calibration(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const JsonDocument doc =
      JsonDocument::read(file, "measure again with harness/bench/calibrate_designs.py, or remove the file");
  return doc.root().as<HostCalibration>();
}

std::uint64_t calibrated_blocks(const DesignCalibration& c, double half_width, double alpha) {
  const bool paired = traits(c.design).pairs_sides;
  const double sd = paired ? c.pair_sd : c.boot_sd;
  const double n = (paired ? 1 : 2) * std::pow(two_sided_z(alpha) * sd / std::log1p(half_width), 2) * std::numbers::pi / 3;
  return static_cast<std::uint64_t>(std::ceil(n));
}

namespace {

// The checks of a design that compared its estimates with a known figure.
std::vector<const TruthCheck*> checks_of(const HostCalibration& calibration, Design design) {
  std::vector<const TruthCheck*> out;
  for (const auto& c : calibration.checks) {
    if (c.design == design && (c.bias || c.coverage)) out.push_back(&c);
  }
  return out;
}

bool failed_a_check(const HostCalibration& calibration, Design design) {
  const auto checks = checks_of(calibration, design);
  return std::any_of(checks.begin(), checks.end(), [](const TruthCheck* c) { return c->failed(); });
}

// "ruler-10 dd-write.bandwidth: estimates -1.2 % ± 0.3 % from the known ratio 0.8975 over 3 runs
// (beyond 2 s.e.), intervals held it in 1 of 3 runs at 97.5 %"
std::string describe(const TruthCheck& c) {
  std::string text = fmt::format("{} {}", c.experiment, c.metric);
  const std::string from = fmt::format("{} {:.4g}", c.truth == "reference" ? "the sequential-blocks reference"
                                                                          : "the known ratio", *c.expected);
  if (c.bias) {
    text += fmt::format(": estimates {:+.1f} %", 100 * std::expm1(c.bias->mean_log));
    if (c.bias->se) text += fmt::format(" ± {:.1f} %", 100 * *c.bias->se);
    text += fmt::format(" from {} over {} runs{}", from, c.bias->runs, c.bias->beyond_2se ? " (beyond 2 s.e.)" : "");
  }
  if (c.coverage) {
    text += fmt::format("{} intervals held it in {} of {} runs at {:.3g} %", c.bias ? "," : ":", c.coverage->covered,
                        c.coverage->runs, 100 * c.coverage->level);
  }
  return text;
}

}  // namespace

std::string truth_summary(const HostCalibration& calibration, Design design) {
  if (checks_of(calibration, design).empty()) return "not checked on a known effect on this host";
  std::vector<std::string> failed, names;
  std::size_t covered = 0, runs = 0, spurious = 0, judged = 0;
  bool bias_tested = false;  // a bias has a standard error from two runs or more
  // Every check of the design counts in the names and the verdicts, a "direction" check too (the
  // neighbour's fio: only the verdict is known); bias and coverage come from the others.
  for (const auto& c : calibration.checks) {
    if (c.design != design) continue;
    if (c.failed()) failed.push_back(describe(c));
    if (std::find(names.begin(), names.end(), c.experiment) == names.end()) names.push_back(c.experiment);
    if (c.bias && c.bias->se) bias_tested = true;
    if (c.coverage) {
      covered += c.coverage->covered;
      runs += c.coverage->runs;
    }
    spurious += c.spurious;
    judged += c.judged;
  }
  if (!failed.empty()) return fmt::format("off on known effects on this host: {}", fmt::join(failed, "; "));
  return fmt::format("checked on {}: {}, intervals held the known ratio in {} of {} runs, {} of {} verdicts "
                     "contradicting the known effect",
                     fmt::join(names, ", "), bias_tested ? "no bias beyond 2 s.e." : "bias untested (one run each)",
                     covered, runs, spurious, judged);
}

namespace {

// The experiment's design in the calibration, and the cheapest design for a ±half interval among
// those that failed no truth check (the experiment's own when it is the cheapest, unless `other`
// asks for the cheapest of the others).
struct DesignChoice {
  const DesignCalibration* used = nullptr;
  const DesignCalibration* best = nullptr;
};

DesignChoice choose(const Experiment& e, const HostCalibration& calibration, double half, double alpha, bool other) {
  DesignChoice c;
  for (const auto& d : calibration.designs) {
    if (d.design == e.schedule.design) c.used = &d;
    if ((other && d.design == e.schedule.design) || failed_a_check(calibration, d.design)) continue;
    if (c.best == nullptr || calibrated_blocks(d, half, alpha) < calibrated_blocks(*c.best, half, alpha)) c.best = &d;
  }
  return c;
}

}  // namespace

std::optional<std::string> budget_warning(const Experiment& e, const HostCalibration& calibration,
                                          const std::string& this_host) {
  if (calibration.host != this_host) return std::nullopt;
  const double half = e.analysis.margin / 2, alpha = 1 - e.analysis.confidence;
  const auto [used, best] = choose(e, calibration, half, alpha, false);
  if (used == nullptr) return std::nullopt;
  const int budget = e.schedule.sequential.enabled ? e.schedule.sequential.max_boots_per_side : e.schedule.boots_per_side;
  const std::uint64_t need = calibrated_blocks(*used, half, alpha);
  if (need <= static_cast<std::uint64_t>(budget)) return std::nullopt;
  std::string text = fmt::format(
      "this host's calibration ({}) says design {} needs about {} blocks (~{:.0f} min) for a ±{:.3g} % interval at "
      "{:.3g} %, and the budget is {} boots per side: expect an inconclusive verdict",
      calibration.time, to_string(used->design), need, static_cast<double>(need) / used->blocks_per_minute,
      half * 100, e.analysis.confidence * 100, budget);
  if (best != nullptr && best != used) {
    const std::uint64_t b = calibrated_blocks(*best, half, alpha);
    text += fmt::format("; design {} needs about {} (~{:.0f} min; {}): set schedule.design = \"{}\"",
                        to_string(best->design), b, static_cast<double>(b) / best->blocks_per_minute,
                        truth_summary(calibration, best->design), to_string(best->design));
  } else {
    text += "; raise the budget or widen analysis.margin";
  }
  return text;
}

namespace {

const DesignCalibration* noise_of(const HostCalibration& calibration, Design design) {
  for (const auto& d : calibration.designs) {
    if (d.design == design) return &d;
  }
  return nullptr;
}

// Among the other designs that were checked on a known effect and failed none, the cheapest for
// the experiment's ±margin/2 interval by the calibration's noise; one without noise figures (a
// series without A/A noise) only when none has them, the first in the file.
std::optional<Design> sound_alternative(const Experiment& e, const HostCalibration& calibration) {
  const double half = e.analysis.margin / 2, alpha = 1 - e.analysis.confidence;
  std::optional<Design> best;
  std::optional<std::uint64_t> best_blocks;
  for (const auto& c : calibration.checks) {
    const Design d = c.design;
    if (d == e.schedule.design || checks_of(calibration, d).empty() || failed_a_check(calibration, d)) continue;
    const DesignCalibration* noise = noise_of(calibration, d);
    const std::optional<std::uint64_t> blocks =
        noise != nullptr ? std::optional(calibrated_blocks(*noise, half, alpha)) : std::nullopt;
    if (!best || (blocks && (!best_blocks || *blocks < *best_blocks))) {
      best = d;
      best_blocks = blocks;
    }
  }
  return best;
}

}  // namespace

std::optional<std::string> truth_warning(const Experiment& e, const HostCalibration& calibration,
                                         const std::string& this_host) {
  if (calibration.host != this_host || !failed_a_check(calibration, e.schedule.design)) return std::nullopt;
  std::string text = fmt::format("this host's calibration ({}) found design {} {}: its verdicts may be off by as much",
                                 calibration.time, to_string(e.schedule.design),
                                 truth_summary(calibration, e.schedule.design));
  if (const auto sound = sound_alternative(e, calibration)) {
    text += fmt::format("; design {} was {}", to_string(*sound), truth_summary(calibration, *sound));
  }
  return text;
}

std::optional<std::string> design_costs(const Experiment& e, const HostCalibration& calibration,
                                        const std::string& this_host) {
  if (calibration.host != this_host) return std::nullopt;
  const double half = e.analysis.margin / 2, alpha = 1 - e.analysis.confidence;
  const auto [used, best] = choose(e, calibration, half, alpha, true);
  if (used == nullptr) return std::nullopt;
  const auto cost = [&](const DesignCalibration& d) {
    const std::uint64_t n = calibrated_blocks(d, half, alpha);
    return fmt::format("{} needs about {} blocks (~{:.0f} min; {})", to_string(d.design), n,
                       static_cast<double>(n) / d.blocks_per_minute, truth_summary(calibration, d.design));
  };
  std::string text = fmt::format("by this host's calibration ({}), a ±{:.3g} % interval at {:.3g} %: design {}",
                                 calibration.time, half * 100, e.analysis.confidence * 100, cost(*used));
  if (best != nullptr) text += fmt::format("; the best other design, {}", cost(*best));
  return text;
}

}  // namespace abvm
