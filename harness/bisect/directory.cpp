#include "bisect/directory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/jsonl.hpp"

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

// Strict reads of one JSON object's fields: a missing or mistyped field is an Error naming where.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw damaged("not a JSON object");
  }
  Error damaged(const std::string& what) const {
    return Error(fmt::format("{}: {}; the bisect directory is damaged (start a new bisection)", where_, what));
  }
  const json& get(const char* field, bool (json::*is)() const, const char* type) const {
    if (!j_.contains(field) || !(j_[field].*is)()) throw damaged(fmt::format("field \"{}\" is missing or not {}", field, type));
    return j_[field];
  }
  std::string text(const char* field) const { return get(field, &json::is_string, "a string").get<std::string>(); }
  double number(const char* field) const { return get(field, &json::is_number, "a number").get<double>(); }
  // A number written as null because it was not finite.
  double number_or_nan(const char* field) const {
    if (j_.contains(field) && j_[field].is_null()) return std::numeric_limits<double>::quiet_NaN();
    return number(field);
  }
  int integer(const char* field) const { return get(field, &json::is_number_integer, "an integer").get<int>(); }
  std::uint64_t unsigned_integer(const char* field) const {
    return get(field, &json::is_number_unsigned, "an unsigned integer").get<std::uint64_t>();
  }
  const json& array(const char* field) const { return get(field, &json::is_array, "an array"); }
  bool has(const char* field) const { return j_.contains(field) && !j_[field].is_null(); }
  template <typename T, typename Parse>
  T word(const char* field, Parse parse, const char* words) const {
    const std::string w = text(field);
    if (const auto v = parse(w)) return *v;
    throw damaged(fmt::format("field \"{}\" is \"{}\", not one of {}", field, w, words));
  }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

json effect_json(const StepEffect& e) {
  return {{"metric", e.metric},         {"unit", e.unit},   {"better", to_string(e.better)}, {"estimate", e.estimate},
          {"low", e.low},               {"high", e.high},   {"confidence", e.confidence},
          {"estimate_kind", e.estimate_kind}, {"verdict", to_string(e.verdict)}};
}

StepEffect effect_from(const json& j, const std::string& where) {
  const Fields f(j, where);
  return {.metric = f.text("metric"),
          .unit = f.text("unit"),
          .better = f.word<Better>("better", parse_better, "higher, lower"),
          .estimate = f.number_or_nan("estimate"),
          .low = f.number_or_nan("low"),
          .high = f.number_or_nan("high"),
          .confidence = f.number_or_nan("confidence"),
          .estimate_kind = f.text("estimate_kind"),
          .verdict = f.word<Verdict>("verdict", parse_verdict, "regression, improvement, no_change, inconclusive")};
}

}  // namespace

BisectPlan read_bisect_plan(const BisectDir& dir) {
  json j;
  try {
    j = json::parse(read_file(dir.plan()));
  } catch (const json::exception& ex) {
    throw Error(fmt::format("{}: not valid JSON ({}); the bisect directory is damaged", dir.plan().string(), ex.what()));
  }
  const Fields f(j, dir.plan().string());
  BisectPlan p{.abvm_version = f.text("abvm_version"),
               .experiment = f.text("experiment"),
               .config = f.text("config"),
               .config_dir = f.text("config_dir"),
               .uri = f.text("uri"),
               .started = f.text("started"),
               .base_recipe = f.text("base_recipe"),
               .tip_recipe = f.text("tip_recipe"),
               .base_label = f.text("base_label"),
               .max_steps = f.integer("max_steps"),
               .confidence = f.number("confidence"),
               .step_confidence = f.number("step_confidence"),
               .margin = f.number("margin"),
               .seed = f.unsigned_integer("seed")};
  if (f.has("max_boots_per_side")) p.max_boots_per_side = f.integer("max_boots_per_side");
  for (const auto& patch : f.array("patches")) {
    const Fields pf(patch, dir.plan().string() + ": patches[]");
    p.patches.push_back({.index = pf.integer("index"), .name = pf.text("name"), .sha256 = pf.text("sha256"),
                         .commit = pf.text("commit")});
  }
  if (p.patches.empty() || p.max_steps < 1) throw f.damaged("no patches or no steps");
  return p;
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
        const std::string where = fmt::format("{}:{}", dir.ledger().string(), n);
        json j;
        try {
          j = json::parse(line);
        } catch (const json::exception& ex) {
          throw Error(fmt::format("{}: not valid JSON ({})", where, ex.what()));
        }
        const Fields f(j, where);
        StepRecord r{.step = f.integer("step"),
                     .question = {.kernel = f.integer("kernel"), .reference = f.integer("reference")},
                     .results_dir = f.text("results_dir"),
                     .boots_per_side = f.integer("boots_per_side"),
                     .confidence = f.number("confidence"),
                     .stop_reason = f.text("stop_reason"),
                     .detail = f.text("detail"),
                     .trial_seconds = f.number("trial_seconds")};
        r.judgement.finding = f.word<StepFinding>("finding", step_finding_from_string, "slower, not-slower, unknown");
        r.judgement.verdict = f.word<Verdict>("verdict", parse_verdict, "regression, improvement, no_change, inconclusive");
        r.judgement.reason = f.text("reason");
        for (const auto& e : f.array("effects")) r.judgement.effects.push_back(effect_from(e, where + ": effects[]"));
        if (r.step != static_cast<int>(out.size()) + 1) {
          throw f.damaged(fmt::format("step {} follows step {}", r.step, out.size()));
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
