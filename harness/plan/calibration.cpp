#include "plan/calibration.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

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

std::optional<HostCalibration> read_calibration(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const auto bad = [&](const std::string& what) {
    return Error(fmt::format("{}: {}; measure again with harness/bench/calibrate_designs.py, or remove the file",
                             file.string(), what));
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("not JSON ({})", e.what()));
  }
  HostCalibration c;
  try {
    c.host = j.at("host").get<std::string>();
    c.time = j.value("time", "");
    for (const auto& d : j.at("designs")) {
      const std::string name = d.at("design").get<std::string>();
      const auto design = design_from_string(name);
      if (!design) throw bad(fmt::format("unknown design \"{}\"", name));
      DesignCalibration x{.design = *design,
                          .pair_sd = d.at("sd_pair").get<double>(),
                          .boot_sd = d.at("sd_boot").get<double>(),
                          .blocks_per_minute = d.at("blocks_per_minute").get<double>()};
      if (!(x.pair_sd > 0) || !(x.boot_sd > 0) || !(x.blocks_per_minute > 0)) {
        throw bad(fmt::format("design \"{}\" has a figure that is not positive", name));
      }
      c.designs.push_back(x);
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("a field is missing or mistyped ({})", e.what()));
  }
  return c;
}

std::uint64_t calibrated_blocks(const DesignCalibration& c, double half_width, double alpha) {
  const bool paired = traits(c.design).pairs_sides;
  const double sd = paired ? c.pair_sd : c.boot_sd;
  const double n = (paired ? 1 : 2) * std::pow(two_sided_z(alpha) * sd / std::log1p(half_width), 2) * std::numbers::pi / 3;
  return static_cast<std::uint64_t>(std::ceil(n));
}

namespace {

// The experiment's design in the calibration, and the cheapest design for a ±half interval (the
// experiment's own when it is the cheapest, unless `other` asks for the cheapest of the others).
struct DesignChoice {
  const DesignCalibration* used = nullptr;
  const DesignCalibration* best = nullptr;
};

DesignChoice choose(const Experiment& e, const HostCalibration& calibration, double half, double alpha, bool other) {
  DesignChoice c;
  for (const auto& d : calibration.designs) {
    if (d.design == e.schedule.design) c.used = &d;
    if (other && d.design == e.schedule.design) continue;
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
  if (best != used) {
    const std::uint64_t b = calibrated_blocks(*best, half, alpha);
    text += fmt::format("; design {} needs about {} (~{:.0f} min): set schedule.design = \"{}\"", to_string(best->design),
                        b, static_cast<double>(b) / best->blocks_per_minute, to_string(best->design));
  } else {
    text += "; raise the budget or widen analysis.margin";
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
    return fmt::format("{} needs about {} blocks (~{:.0f} min)", to_string(d.design), n,
                       static_cast<double>(n) / d.blocks_per_minute);
  };
  std::string text = fmt::format("by this host's calibration ({}), a ±{:.3g} % interval at {:.3g} %: design {}",
                                 calibration.time, half * 100, e.analysis.confidence * 100, cost(*used));
  if (best != nullptr) text += fmt::format("; the best other design, {}", cost(*best));
  return text;
}

}  // namespace abvm
