#include "bisect/directory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/jsonl.hpp"
#include "verdict/verdict_json.hpp"

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

BisectDir BisectDir::open(const fs::path& dir) {
  const BisectDir d(dir);
  if (!fs::is_regular_file(d.plan())) {
    throw Error(fmt::format("{}: not an abvm bisect directory (no bisect-plan.json); give the directory 'abvm bisect' "
                            "printed",
                            dir.string()));
  }
  return d;
}

fs::path BisectDir::kernel_recipe(int kernel) const { return kernels() / fmt::format("kernel-{}.toml", kernel); }

std::string BisectDir::step_name(const std::string& experiment, int step) {
  return fmt::format("{}-step{}", experiment, step);
}

std::vector<fs::path> BisectDir::step_dirs(const std::string& experiment, int step) const {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(steps(), ec)) return out;
  // results/directory.hpp names a run "<name>-<UTC time>", with "-2", "-3" when one exists.
  const std::string prefix = step_name(experiment, step) + "-";
  for (const auto& e : fs::directory_iterator(steps())) {
    const std::string name = e.path().filename().string();
    const bool digits_follow = name.size() > prefix.size() && std::isdigit(static_cast<unsigned char>(name[prefix.size()]));
    if (e.is_directory() && name.starts_with(prefix) && digits_follow && fs::exists(e.path() / "run.json")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

constexpr const char* kDamaged = "the bisect directory is damaged (start a new bisection)";

// A number written as null because it was not finite.
double number_or_nan(const JsonField& f, std::string_view key) {
  return f.required<std::optional<double>>(key).value_or(std::numeric_limits<double>::quiet_NaN());
}

json effect_json(const StepEffect& e) {
  return {{"metric", e.metric},         {"unit", e.unit},   {"better", to_string(e.better)}, {"estimate", e.estimate},
          {"low", e.low},               {"high", e.high},   {"confidence", e.confidence},
          {"estimate_kind", e.estimate_kind}, {"verdict", to_string(e.verdict)}};
}

}  // namespace

std::string json_expected(const StepFinding*) { return "one of slower, not-slower, unknown"; }

void read_json(const JsonField& f, StepFinding& finding) {
  finding = f.word<StepFinding>(step_finding_from_string, json_expected(&finding));
}

void read_json(const JsonField& f, StepEffect& e) {
  e = StepEffect{.metric = f.required<std::string>("metric"),
                 .unit = f.required<std::string>("unit"),
                 .better = f.required<Better>("better"),
                 .estimate = number_or_nan(f, "estimate"),
                 .low = number_or_nan(f, "low"),
                 .high = number_or_nan(f, "high"),
                 .confidence = number_or_nan(f, "confidence"),
                 .estimate_kind = f.required<std::string>("estimate_kind"),
                 .verdict = f.required<Verdict>("verdict")};
}

void read_json(const JsonField& f, SeriesPatch& p) {
  p = SeriesPatch{.index = f.required<int>("index"),
                  .name = f.required<std::string>("name"),
                  .sha256 = f.required<std::string>("sha256"),
                  .commit = f.required<std::string>("commit")};
}

void read_json(const JsonField& f, BisectPlan& p) {
  p = BisectPlan{.abvm_version = f.required<std::string>("abvm_version"),
                 .experiment = f.required<std::string>("experiment"),
                 .config = f.required<std::string>("config"),
                 .config_dir = f.required<std::string>("config_dir"),
                 .uri = f.required<std::string>("uri"),
                 .started = f.required<std::string>("started"),
                 .base_recipe = f.required<std::string>("base_recipe"),
                 .tip_recipe = f.required<std::string>("tip_recipe"),
                 .base_label = f.required<std::string>("base_label"),
                 .patches = f.required<std::vector<SeriesPatch>>("patches"),
                 .max_steps = f.required<int>("max_steps"),
                 .confidence = f.required<double>("confidence"),
                 .step_confidence = f.required<double>("step_confidence"),
                 .margin = f.required<double>("margin"),
                 .max_boots_per_side = f.value_or<std::optional<int>>("max_boots_per_side", std::nullopt),
                 .seed = f.required<std::uint64_t>("seed")};
  if (p.patches.empty() || p.max_steps < 1) f.fail("no patches or no steps");
}

void read_json(const JsonField& f, StepRecord& r) {
  r = StepRecord{.step = f.required<int>("step"),
                 .question = {.kernel = f.required<int>("kernel"), .reference = f.required<int>("reference")},
                 .results_dir = f.required<std::string>("results_dir"),
                 .boots_per_side = f.required<int>("boots_per_side"),
                 .confidence = f.required<double>("confidence"),
                 .stop_reason = f.required<std::string>("stop_reason"),
                 .detail = f.required<std::string>("detail"),
                 .trial_seconds = f.required<double>("trial_seconds")};
  r.judgement.finding = f.required<StepFinding>("finding");
  r.judgement.verdict = f.required<Verdict>("verdict");
  r.judgement.reason = f.required<std::string>("reason");
  r.judgement.effects = f.required<std::vector<StepEffect>>("effects");
}

BisectPlan read_bisect_plan(const BisectDir& dir) {
  return JsonDocument::read(dir.plan(), kDamaged).root().as<BisectPlan>();
}

void write_bisect_plan(const BisectDir& dir, const BisectPlan& p) {
  json patches = json::array();
  for (const auto& s : p.patches) {
    patches.push_back({{"index", s.index}, {"name", s.name}, {"sha256", s.sha256}, {"commit", s.commit}});
  }
  json j = {{"abvm_version", p.abvm_version},
            {"experiment", p.experiment},
            {"config", p.config.string()},
            {"config_dir", p.config_dir.string()},
            {"uri", p.uri},
            {"started", p.started},
            {"base_recipe", p.base_recipe},
            {"tip_recipe", p.tip_recipe},
            {"base_label", p.base_label},
            {"patches", patches},
            {"max_steps", p.max_steps},
            {"confidence", p.confidence},
            {"step_confidence", p.step_confidence},
            {"margin", p.margin},
            {"max_boots_per_side", p.max_boots_per_side ? json(*p.max_boots_per_side) : json(nullptr)},
            {"seed", p.seed}};
  write_file_atomic(dir.plan(), j.dump(2) + "\n");
}

std::string kernel_label(const BisectPlan& plan, int kernel) {
  return kernel == 0 ? plan.base_label : fmt::format("{}+{}", plan.base_label, kernel);
}

json step_record_json(const StepRecord& r) {
  json effects = json::array();
  for (const auto& e : r.judgement.effects) effects.push_back(effect_json(e));
  return {{"step", r.step},
              {"kernel", r.question.kernel},
              {"reference", r.question.reference},
              {"finding", to_string(r.judgement.finding)},
              {"verdict", to_string(r.judgement.verdict)},
              {"reason", r.judgement.reason},
              {"effects", effects},
              {"results_dir", r.results_dir},
              {"boots_per_side", r.boots_per_side},
              {"confidence", r.confidence},
              {"stop_reason", r.stop_reason},
              {"detail", r.detail},
              {"trial_seconds", r.trial_seconds}};
}

std::string to_step_line(const StepRecord& r) { return step_record_json(r).dump(); }

std::vector<StepRecord> read_step_ledger(const BisectDir& dir, const std::function<void(const std::string&)>& warn) {
  std::vector<StepRecord> out;
  read_jsonl(
      dir.ledger(),
      [&](std::string_view line, std::size_t n) {
        const JsonDocument doc(line, JsonSource{.file = dir.ledger().string(), .line = n, .remedy = kDamaged});
        StepRecord r = doc.root().as<StepRecord>();
        if (r.step != static_cast<int>(out.size()) + 1) {
          doc.root().member("step").invalid(fmt::format("is {}, but it follows step {}", r.step, out.size()));
        }
        out.push_back(std::move(r));
      },
      warn ? JsonlWarning(warn) : JsonlWarning{}, true);
  return out;
}

std::vector<StepAnswer> answers_of(const std::vector<StepRecord>& records) {
  std::vector<StepAnswer> out;
  for (const auto& r : records) out.push_back({.question = r.question, .finding = r.judgement.finding});
  return out;
}

}  // namespace abvm
