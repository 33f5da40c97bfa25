#pragma once
// The directory of one `abvm bisect`: the one owner of its layout and file names, its plan (what
// the bisection is about and its error budget, written once) and its ledger of finished steps.
//
// Layout:
//   config.toml          the experiment file as given
//   bisect-plan.json     the series, the error budget, the seed, the boot budget (read back by --resume)
//   kernels/             kernel-<k>.toml for k = 0..N, their series files, copies of the patches
//   steps/<name>-step<i>-<time>/   step i's results directory: an abvm run of its own (journal,
//                        plan, resume, analysis.json, report.html)
//   steps.jsonl          the ledger: one line per finished step, appended when it ends
//   bisect.json          the report (report/bisect_schema.json), rewritten after every step
//   bisect.html, summary.txt
//   .lock                held by the running abvm bisect
// A step counts once its ledger line exists; a step whose directory exists without one is
// resumed (or, when its run is complete, analysed) by the next session.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bisect/classify.hpp"
#include "bisect/strategy.hpp"

namespace abvm {

class BisectDir {
 public:
  explicit BisectDir(std::filesystem::path root) : root_(std::move(root)) {}

  // An existing bisection directory (it has bisect-plan.json); Error naming what is missing.
  static BisectDir open(const std::filesystem::path& dir);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path config() const { return root_ / "config.toml"; }
  std::filesystem::path plan() const { return root_ / "bisect-plan.json"; }
  std::filesystem::path ledger() const { return root_ / "steps.jsonl"; }
  std::filesystem::path report_json() const { return root_ / "bisect.json"; }
  std::filesystem::path report_html() const { return root_ / "bisect.html"; }
  std::filesystem::path summary() const { return root_ / "summary.txt"; }
  std::filesystem::path kernels() const { return root_ / "kernels"; }
  std::filesystem::path kernel_recipe(int kernel) const;
  std::filesystem::path steps() const { return root_ / "steps"; }
  // The results directories of step `step` under steps/ (normally one; none before it starts).
  std::vector<std::filesystem::path> step_dirs(const std::string& experiment, int step) const;
  // The step results directory's name: "<experiment>-step<i>".
  static std::string step_name(const std::string& experiment, int step);

 private:
  std::filesystem::path root_;
};

struct SeriesPatch {
  int index = 0;            // 1-based place in the series
  std::string name;         // as the series file names it
  std::string sha256;
  std::string commit;       // a git range: the commit it is; "" otherwise
};

// bisect-plan.json.
struct BisectPlan {
  std::string abvm_version;
  std::string experiment;                 // the experiment's name
  std::filesystem::path config;           // the experiment file as given, absolute
  std::filesystem::path config_dir;       // relative paths in it resolve against this
  std::string uri;                        // libvirt URI ("" until the first step connects)
  std::string started;                    // UTC, ISO 8601
  std::string base_recipe, tip_recipe;    // sides A and B's kernels as the experiment names them
  std::string base_label;                 // side A's label: kernel k is labelled "<base_label>+k"
  std::vector<SeriesPatch> patches;
  int max_steps = 0;
  double confidence = 0;                  // of the whole bisection
  double step_confidence = 0;             // of each step (strategy.hpp step_confidence)
  double margin = 0;
  std::optional<int> max_boots_per_side;  // over all steps; nullopt: each step's own budget only
  std::uint64_t seed = 0;                 // step i's trial order uses a seed derived from it
};

// Strict: a missing or mistyped field is an Error naming the file and the field.
BisectPlan read_bisect_plan(const BisectDir& dir);
void write_bisect_plan(const BisectDir& dir, const BisectPlan& plan);

// The label of kernel k in reports and step experiments: the base's label, then "<label>+k".
std::string kernel_label(const BisectPlan& plan, int kernel);

// One finished step (a line of steps.jsonl).
struct StepRecord {
  int step = 0;                           // 1-based
  StepQuestion question;
  StepJudgement judgement;
  std::string results_dir;                // relative to the bisection directory ("" when none)
  int boots_per_side = 0;                 // blocks run
  double confidence = 0;                  // the level the step's final analysis used
  std::string stop_reason;                // the step's sequential stopping, "" when none
  std::string detail;                     // why a step could not be measured ("" when it was)
  double trial_seconds = 0;               // the sum of its trials' wall times (a co-scheduled block counts twice)
};

// A ledger line's object: what bisect.json lists per step too.
nlohmann::json step_record_json(const StepRecord& record);
std::string to_step_line(const StepRecord& record);
// Reads steps.jsonl (missing: empty); a writer killed mid-line leaves a last line that is skipped
// (and reported to `warn`); any other bad line is an Error naming file:line.
std::vector<StepRecord> read_step_ledger(const BisectDir& dir, const std::function<void(const std::string&)>& warn = {});

// The readers of its files' parts (core/json_read.hpp), each strict.
class JsonField;
std::string json_expected(const StepFinding*);
void read_json(const JsonField& f, StepFinding& finding);
void read_json(const JsonField& f, StepEffect& effect);
void read_json(const JsonField& f, SeriesPatch& patch);
void read_json(const JsonField& f, BisectPlan& plan);
void read_json(const JsonField& f, StepRecord& record);

// The answers of a ledger, for bisect_state().
std::vector<StepAnswer> answers_of(const std::vector<StepRecord>& records);

}  // namespace abvm
