#pragma once
// `abvm export --kcidb`: a run, a night or a bisection as KernelCI's KCIDB I/O data, schema v5.3
// (report/kcidb_schema.json: kcidb-io's published schema of that version, unchanged). Nothing is
// sent anywhere: the JSON is written for the CI to submit with kcidb's own tools.
//
//   checkouts  each kernel's source: the tree's public URL, branch and commit (a night, a git
//              recipe, a bisection's commits), or the packaged source it was built from
//   builds     each kernel as built: its recipe as config_name, the config's sha256 and the cache
//              key in misc, the build's time
//   tests      one per metric, on B's build: path "abvm.<experiment>.<metric>", the estimate (the
//              ratio B/A) as the numeric value, the interval, margin, verdict and A's build in misc,
//              and the status: regression FAIL, no_change or improvement PASS, inconclusive DONE; a
//              metric reported, not judged (a cost metric [analysis] metrics does not name) DONE
//              whatever its own verdict, with "judged": false in misc (true for the others); a
//              night or run that ended in an infrastructure failure (or was interrupted) one test
//              MISS; a bisection's steps one test each (slower FAIL, not slower PASS, unknown DONE)
// Every id is "abvm:..." (origin "abvm"), stable for the same directory, so a second export
// of it updates the same objects.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace abvm {

inline constexpr int kKcidbMajor = 5;
inline constexpr int kKcidbMinor = 3;

// For a run or a bisection, whose directories do not know the tree's public URL (a night's does).
struct KcidbTree {
  std::string url;     // https://...; "" leaves git_repository_url out
  std::string branch;
};

// The KCIDB status of a verdict (verdict/analysis.hpp to_string) or a night's outcome.
std::string_view kcidb_status(std::string_view verdict_or_outcome);

// `dir` is a night's directory (night.json), a bisection's (bisect-plan.json) or a run's
// (analysis.json or run.json); Error naming what it is not otherwise.
nlohmann::json kcidb_export(const std::filesystem::path& dir, const KcidbTree& tree = {});

}  // namespace abvm
