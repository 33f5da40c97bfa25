#pragma once
// The nightly's history: one JSON line per night (history.jsonl in the history directory), keyed by
// the tree, its branch, A, B and the experiment file's sha256. The tree is named by its public URL
// (nightly.url, which every nightly file has), not by the local path it was cloned to: a CI runner
// may clone it somewhere else each night, and that is still the same tree, the same last good
// commit, the same nights for the drift comparison. A night run again (the same key) replaces
// its line, never adds a second one; a night whose head has not moved adds nothing to run and
// counts the check on the line it repeats. The last good commit is the B of the newest line that
// made B good (`good`): a night that completed (exit 0 or 4) without regressing.
//
// A line written before the key was the URL (abvm up to 4eaa00a) has the local path the night ran
// in as its key's tree, and the URL in its "url" field, which the nightly required from the first:
// it is read as that URL's, so an old history goes on where it was (and the next night rewrites it
// with URL keys), even when its nights ran in different clones.
//
// The anchor is kept. Every kernel of a night is built from one anchor commit, A's difference from
// it as patch 0000 and each commit after A as one patch more (night.hpp), and the kernel cache keys a
// build tree by that commit (kernels/source_tree.cpp): a night that builds from the anchor of the
// nights before applies its patches in their kept build tree and recompiles only what they touch,
// where a new anchor exports a new source tree and builds it from scratch. So a night builds from the
// anchor of the tree's newest line that has one (the same url and branch) while it is an ancestor of
// A, and records it on its own line. It resolves nightly.base again, or takes A when the base is not
// an ancestor of A, on the first night, when the kept anchor is no longer an ancestor of A (a rebased
// tree, or a clone that lacks it), and when run with `abvm nightly --reanchor` (a patch 0000 grown
// large since the anchor, or a new base); the nights after keep that one. A line written before the
// anchor was kept (abvm up to 53e7f15) has none ("" here): the next night anchors as the first would.
//
// Each line: the key; the night's name and time; both commits and why A is A; the anchor; the
// commits between them; per metric the estimate, interval, verdict and whether it was judged; the outcome and the
// exit code; the bisection's outcome (culprits, or the range the budget left); the drift comparison
// when the night made one; the abvm version and the host. Written by abvm nightly, read by abvm
// history and abvm export --kcidb.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace abvm {

struct MetricResult {
  std::string name, unit;
  std::string better;          // "higher" / "lower"
  double estimate = 1, low = 1, high = 1;  // B/A and its interval
  std::string verdict;         // verdict/analysis.hpp to_string(Verdict): the metric's own
  // False: reported, not judged (MetricAnalysis::judged, a cost metric [analysis] metrics does not
  // name): its verdict is no part of the night's. Absent in lines written before it was kept: true,
  // as the page and the export then showed every metric.
  bool judged = true;
};

struct CommitInfo {
  std::string commit, subject;
  bool merge = false;
};

struct CulpritInfo {
  std::vector<CommitInfo> commits;  // one: the culprit; more: the range that holds it
};

struct BisectionResult {
  std::string outcome;         // bisect/strategy.hpp to_string(BisectOutcome), or "stopped" (a budget or Ctrl-C)
  std::string end;             // why it ended: "searched", "out_of_steps", "out_of_budget", "wall time" ...
  std::vector<CulpritInfo> culprits;  // found; or the range left when stopped
  std::string dir;             // relative to the history directory
  std::string report;          // bisect.html, relative to the history directory
  int steps = 0, boots_per_side = 0;
};

struct DriftResult {
  std::string a;               // the last good commit of drift_every nights before
  std::string verdict;
  std::vector<MetricResult> metrics;
  std::string report;          // relative to the history directory
};

struct NightRecord {
  // The key. `url` is the tree's public URL (nightly.url), its identity: the key's "tree" field.
  std::string url, branch, a, b, experiment_sha256;
  std::string night;           // its directory's name under nights/ ("" when nothing ran)
  std::string date;            // UTC, ISO 8601
  std::string experiment;      // the experiment's name
  std::string a_reason;        // commits.hpp to_string(BaseReason)
  std::string a_why;
  std::string anchor;          // the commit its kernels were built from (above); "" when it built none
  std::vector<CommitInfo> commits;  // between A and B, oldest first
  // regression, no_change, improvement, inconclusive (the run's verdict); unchanged (nothing to run);
  // infrastructure (exit 3), interrupted (exit 130)
  std::string outcome;
  std::string detail;          // why, in plain words
  int exit_code = 0;
  bool good = false;           // B became the last good commit
  double margin = 0;
  std::vector<MetricResult> metrics;
  std::string report;          // the night's report.html, relative to the history directory
  std::string run_dir;         // relative to the history directory
  std::optional<BisectionResult> bisection;
  std::optional<DriftResult> drift;
  int unchanged_checks = 0;    // later nights that found the head where this one left it
  std::string abvm_version, host;

  bool same_key(const NightRecord& o) const {
    return url == o.url && branch == o.branch && a == o.a && b == o.b && experiment_sha256 == o.experiment_sha256;
  }
  bool ran() const;            // a verdict came out of it (a night that was measured to its end)
};

nlohmann::json to_json(const NightRecord& r);
// Error naming `where` and the field when a required field is missing or of the wrong type.
NightRecord night_from_json(const nlohmann::json& j, const std::string& where);
// The readers of a line's parts (core/json_read.hpp).
class JsonField;
void read_json(const JsonField& f, MetricResult& metric);
void read_json(const JsonField& f, CommitInfo& commit);
void read_json(const JsonField& f, CulpritInfo& culprit);
void read_json(const JsonField& f, BisectionResult& bisection);
void read_json(const JsonField& f, DriftResult& drift);
void read_json(const JsonField& f, NightRecord& record);

class History {
 public:
  explicit History(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file() const { return dir_ / "history.jsonl"; }
  std::filesystem::path nights() const { return dir_ / "nights"; }

  // Every line, oldest first (missing file: none). Error naming file:line for a damaged line.
  std::vector<NightRecord> read() const;
  // Replaces the line with the same key (every such line, by one), or appends one; the file is
  // rewritten atomically, old keys as URLs.
  void put(const NightRecord& record) const;

 private:
  std::filesystem::path dir_;
};

// B of the newest good line of the tree at `url` and `branch`, or nullopt (the first night).
std::optional<std::string> last_good(const std::vector<NightRecord>& lines, const std::string& url,
                                     const std::string& branch);

// The anchor of the newest line of the tree at `url` and `branch` that has one, or nullopt.
std::optional<std::string> last_anchor(const std::vector<NightRecord>& lines, const std::string& url,
                                       const std::string& branch);

// The nights of the tree at `url` and `branch` that ran, oldest first.
std::vector<NightRecord> ran_nights(const std::vector<NightRecord>& lines, const std::string& url,
                                    const std::string& branch);

}  // namespace abvm
