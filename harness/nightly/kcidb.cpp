#include "nightly/kcidb.hpp"

#include <fmt/format.h>

#include <set>

#include "bisect/directory.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/vocabulary.hpp"
#include "kernels/kernel.hpp"
#include "nightly/history.hpp"
#include "report/report_data.hpp"
#include "report/wording.hpp"
#include "results/directory.hpp"

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string_view kcidb_status(std::string_view v) {
  if (v == "regression") return "FAIL";
  if (v == "no_change" || v == "improvement") return "PASS";
  if (v == "inconclusive") return "DONE";
  return "MISS";
}

namespace {

constexpr const char* kOrigin = "abvm";

std::string id(const std::string& rest) { return std::string(kOrigin) + ":" + rest; }

// One segment of a KCIDB test path: letters, digits, '_' and '-'.
std::string path_segment(std::string_view text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ? c : '_';
  return out.empty() ? "_" : out;
}

std::string test_path(const std::string& experiment, const std::string& metric) {
  std::string out = "abvm." + path_segment(experiment);
  std::size_t start = 0;
  for (std::size_t dot = metric.find('.'); ; dot = metric.find('.', start)) {
    out += "." + path_segment(metric.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

struct Data {
  json checkouts = json::array(), builds = json::array(), tests = json::array();
  json done() const {
    return {{"version", {{"major", kKcidbMajor}, {"minor", kKcidbMinor}}},
            {"checkouts", checkouts}, {"builds", builds}, {"tests", tests}};
  }
};

json checkout(const std::string& checkout_id, const KcidbTree& tree, const std::string& commit, const std::string& comment) {
  json c = {{"id", checkout_id}, {"origin", kOrigin}, {"comment", comment}, {"valid", true}};
  if (tree.url.starts_with("https://")) c["git_repository_url"] = tree.url;
  if (!tree.branch.empty()) c["git_repository_branch"] = tree.branch;
  if (commit.size() == 40) c["git_commit_hash"] = commit;
  return c;
}

// A side of kernels.json as a build of `checkout_id`.
json build(const json& side, const std::string& checkout_id) {
  const json identity = side.value("identity", json::object());
  json b = {{"id", id(identity.value("cache_key", checkout_id + ":" + side.value("label", "")))},
            {"checkout_id", checkout_id}, {"origin", kOrigin}, {"architecture", "x86_64"},
            {"config_name", side.value("recipe", "")}, {"status", "PASS"},
            {"comment", fmt::format("{} ({})", side.value("label", ""), side.value("release", ""))},
            {"misc", {{"config_sha256", identity.value("config_sha256", "")}, {"release", side.value("release", "")},
                      {"image_sha256", identity.value("image_sha256", "")}}}};
  if (identity.contains("built_at")) b["start_time"] = identity.at("built_at");
  if (identity.contains("build_seconds") && identity.at("build_seconds").is_number()) b["duration"] = identity.at("build_seconds");
  return b;
}

// The git commit a side's kernel was built from, or "".
std::string built_commit(const json& side) {
  const json source = side.value("identity", json::object()).value("source", json::object());
  return source.value("type", "") == "git" ? source.value("commit", "") : "";
}

// A metric reported, not judged (ReportMetric::judged) passes or fails nothing: DONE, KCIDB's "completed
// ... produced a performance measurement result", its own verdict in misc and the comment.
std::string_view metric_status(const ReportMetric& m) {
  return m.judged ? kcidb_status(to_string(m.verdict)) : "DONE";
}

json metric_test(const std::string& test_id, const std::string& build_id, const std::string& baseline_build,
                 const std::string& experiment, const ReportMetric& m, double margin, const std::string& report) {
  std::string comment = fmt::format("{}: B/A {:.4f} [{:.4f}, {:.4f}] against a margin of {:.0f} %: {}", m.name,
                                    m.effect.estimate, m.effect.low, m.effect.high, margin * 100, to_string(m.verdict));
  if (!m.judged) comment += fmt::format("; {}", kNotJudgedWords);
  return {{"id", test_id}, {"build_id", build_id}, {"origin", kOrigin}, {"path", test_path(experiment, m.name)},
          {"status", metric_status(m)}, {"comment", comment}, {"number", {{"value", m.effect.estimate}}},
          {"misc", {{"ratio", "B/A"}, {"low", m.effect.low}, {"high", m.effect.high}, {"confidence", m.effect.confidence},
                    {"margin", margin}, {"verdict", to_string(m.verdict)}, {"judged", m.judged},
                    {"better", to_string(m.better)}, {"metric_unit", m.unit}, {"baseline_build_id", baseline_build},
                    {"report", report}}}};
}

json read_json_file(const fs::path& p) { return parse_json(read_file(p), {.file = p.string()}); }

// A run's kernels, builds and tests into `d`; `checkouts` names each side's checkout.
void add_run(Data& d, const ResultsDir& rd, const std::string& experiment, const std::string& a_checkout,
             const std::string& b_checkout) {
  const json kernels = read_json_file(rd.kernels());
  const json a = build(kernels.at("A"), a_checkout), b = build(kernels.at("B"), b_checkout);
  d.builds.push_back(a);
  if (b.at("id") != a.at("id")) d.builds.push_back(b);
  const std::string name = rd.root().filename().string();
  if (!fs::exists(rd.analysis())) {
    const RunManifest m = read_manifest(rd);
    d.tests.push_back({{"id", id(name)}, {"build_id", b.at("id")}, {"origin", kOrigin}, {"path", "abvm"},
                       {"status", "MISS"}, {"comment", m.failure.empty() ? "the run did not finish" : m.failure}});
    return;
  }
  const ReportModel model = read_report_data(read_json_file(rd.analysis()),
                                             {.file = rd.analysis().string(), .advice = "re-analyse the run"});
  for (const auto& m : model.metrics) {
    d.tests.push_back(metric_test(id(name + ":" + m.name), b.at("id"), a.at("id"), experiment, m,
                                  model.margin, rd.report_html().string()));
  }
}

json export_run(const ResultsDir& rd, const KcidbTree& tree) {
  Data d;
  const json kernels = read_json_file(rd.kernels());
  for (const char* side : {"A", "B"}) {
    const std::string commit = built_commit(kernels.at(side));
    const std::string cid = id(fmt::format("{}:{}", rd.root().filename().string(), side));
    d.checkouts.push_back(checkout(cid, tree, commit, fmt::format("side {} ({})", side, kernels.at(side).value("recipe", ""))));
  }
  add_run(d, rd, load_saved_experiment(rd, read_manifest(rd)).name, d.checkouts[0].at("id"), d.checkouts[1].at("id"));
  return d.done();
}

json export_night(const fs::path& dir) {
  const NightRecord r = night_from_json(read_json_file(dir / "night.json"), (dir / "night.json").string());
  const KcidbTree tree{.url = r.url, .branch = r.branch};
  Data d;
  const std::string a = id(r.a), b = id(r.b);
  d.checkouts.push_back(checkout(a, tree, r.a, fmt::format("A of night {}: {}", r.night, r.a_why)));
  d.checkouts.push_back(checkout(b, tree, r.b, fmt::format("B of night {}: the head of {}", r.night, r.branch)));
  const bool failed = r.outcome == "infrastructure" || r.outcome == "interrupted";
  // A night that did not run to a verdict is still one test, MISS, so that a dashboard sees it: on
  // B's build, or when its kernels were never ready (a build or the host failed) on a build of B's
  // checkout that says so.
  const auto add_miss = [&](std::string build_id) {
    if (build_id.empty()) {
      build_id = id(r.night + ":B");
      d.builds.push_back({{"id", build_id}, {"checkout_id", b}, {"origin", kOrigin}, {"status", "MISS"},
                          {"comment", fmt::format("B of night {}: not built or not booted ({})", r.night, r.outcome)}});
    }
    d.tests.push_back({{"id", id(r.night)}, {"build_id", build_id}, {"origin", kOrigin}, {"path", "abvm"},
                       {"status", "MISS"}, {"comment", r.detail.empty() ? r.outcome : r.detail}});
  };
  if (r.run_dir.empty() || !fs::exists(dir.parent_path().parent_path() / r.run_dir / "kernels.json")) {
    if (failed) add_miss("");
    return d.done();
  }
  add_run(d, ResultsDir(dir.parent_path().parent_path() / r.run_dir), r.experiment, a, b);
  if (failed && d.tests.empty()) add_miss(d.builds.back().at("id"));
  if (r.bisection) {
    json culprits = json::array();
    std::string named;
    for (const auto& c : r.bisection->culprits) {
      for (const auto& commit : c.commits) {
        culprits.push_back({{"commit", commit.commit}, {"subject", commit.subject}, {"exact", c.commits.size() == 1}});
        named += fmt::format("{}{} {}", named.empty() ? "" : ", ", short_sha(commit.commit), commit.subject);
      }
    }
    // On the tests that failed: the judged regressions, which the bisection searched for (a metric
    // reported, not judged, is DONE whatever its own verdict).
    for (auto& t : d.tests) {
      if (t.at("status") != "FAIL") continue;
      t["misc"]["bisection"] = {{"outcome", r.bisection->outcome}, {"end", r.bisection->end}, {"culprits", culprits}};
      t["comment"] = t.at("comment").get<std::string>() + "; bisected: " + r.bisection->outcome + " " + named;
    }
  }
  if (r.outcome == "infrastructure" || r.outcome == "interrupted") {
    for (auto& t : d.tests) t["comment"] = t.at("comment").get<std::string>() + "; " + r.detail;
  }
  return d.done();
}

json export_bisection(const BisectDir& dir, const KcidbTree& tree) {
  const BisectPlan plan = read_bisect_plan(dir);
  Data d;
  const auto kernel_checkout = [&](int k) {
    const std::string commit = k == 0 ? "" : plan.patches.at(static_cast<std::size_t>(k - 1)).commit;
    return checkout(id(fmt::format("{}:kernel-{}", dir.root().filename().string(), k)), tree, commit,
                    k == 0 ? fmt::format("{}: the base", plan.base_recipe)
                           : fmt::format("{} plus patches 1-{} ({})", plan.base_label, k,
                                         plan.patches.at(static_cast<std::size_t>(k - 1)).name));
  };
  std::set<std::string> seen;
  for (const auto& s : read_step_ledger(dir)) {
    const json ref = kernel_checkout(s.question.reference), tip = kernel_checkout(s.question.kernel);
    for (const json* c : {&ref, &tip}) {
      if (seen.insert(c->at("id")).second) d.checkouts.push_back(*c);
    }
    std::string build_id = id(fmt::format("{}:kernel-{}", dir.root().filename().string(), s.question.kernel));
    if (!s.results_dir.empty() && fs::exists(dir.root() / s.results_dir / "kernels.json")) {
      const json kernels = read_json_file(dir.root() / s.results_dir / "kernels.json");
      for (const auto& [side, checkout_json] : {std::pair{"A", &ref}, std::pair{"B", &tip}}) {
        const json b = build(kernels.at(side), checkout_json->at("id"));
        if (seen.insert(b.at("id")).second) d.builds.push_back(b);
        if (std::string(side) == "B") build_id = b.at("id");
      }
    }
    const std::string status = s.judgement.finding == StepFinding::slower       ? "FAIL"
                               : s.judgement.finding == StepFinding::not_slower ? "PASS"
                                                                                : "DONE";
    json t = {{"id", id(fmt::format("{}:step{}", dir.root().filename().string(), s.step))}, {"build_id", build_id},
              {"origin", kOrigin}, {"path", fmt::format("abvm.{}.bisect", path_segment(plan.experiment))},
              {"status", status},
              {"comment", fmt::format("step {}: kernel {} against kernel {}: {}", s.step, s.question.kernel,
                                      s.question.reference, s.judgement.reason)},
              {"misc", {{"step", s.step}, {"kernel", s.question.kernel}, {"reference", s.question.reference},
                        {"finding", to_string(s.judgement.finding)}, {"results_dir", s.results_dir}}}};
    if (!s.judgement.effects.empty()) t["number"] = {{"value", s.judgement.effects.front().estimate}};
    d.tests.push_back(t);
  }
  return d.done();
}

}  // namespace

json kcidb_export(const fs::path& dir, const KcidbTree& tree) {
  if (fs::exists(dir / "night.json")) return export_night(dir);
  if (fs::exists(dir / "bisect-plan.json")) return export_bisection(BisectDir::open(dir), tree);
  if (fs::exists(dir / "run.json")) return export_run(ResultsDir::open_run(dir), tree);
  throw Error(fmt::format("{} is neither a night's directory (night.json), a bisection's (bisect-plan.json) nor a run's "
                          "(run.json): give one of those (abvm nightly writes <history>/nights/<night>/)",
                          dir.string()));
}

}  // namespace abvm
