#include "nightly/night.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "bisect/report.hpp"
#include "bisect/series.hpp"
#include "core/error.hpp"
#include "core/vocabulary.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "core/units.hpp"
#include "nightly/commits.hpp"
#include "plan/plan.hpp"
#include "report/html.hpp"
#include "results/directory.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

// The kernels of one comparison: kernel 0 is `a`, kernel k is `a` plus the first k commits up to
// `b`, all of `anchor` in one build tree (see night.hpp).
struct Kernels {
  BisectSeries series;
  std::vector<CommitInfo> commits;        // every commit between a and b, oldest first
  std::vector<fs::path> recipes;          // kernel-0 ... kernel-N
};

Kernels write_kernels(const NightlyExperiment& x, const std::string& anchor, const std::string& a,
                      const std::string& b, const fs::path& dir) {
  Kernels k;
  k.series.base_recipe = short_sha(a);
  k.series.tip_recipe = short_sha(b);
  k.series.build = x.build;
  k.series.build.commit = anchor;
  k.series.build.patches.clear();
  if (const std::string squash = squashed_patch(x.nightly.tree, anchor, a); !squash.empty()) {
    k.series.base_patches.push_back(
        {.name = fmt::format("0000-{}..{}.patch", short_sha(anchor), short_sha(a)), .text = squash, .commit = a});
  }
  for (auto& c : first_parent_series(x.nightly.tree, a, b)) {
    k.commits.push_back({.commit = c.commit, .subject = c.subject, .merge = c.merge});
    if (c.text.empty()) continue;  // an empty commit changes no kernel: nothing to build or bisect
    std::string slug;
    for (char ch : c.subject) slug += std::isalnum(static_cast<unsigned char>(ch)) != 0 ? ch : '-';
    k.series.patches.push_back({.name = fmt::format("{:04}-{}-{}.patch", k.series.patches.size() + 1,
                                                    short_sha(c.commit), slug.substr(0, 40)),
                                .text = std::move(c.text),
                                .commit = c.commit});
  }
  if (!k.series.patches.empty()) k.recipes = write_kernel_recipes(k.series, dir);
  return k;
}

toml::table& table_in(toml::table& parent, std::string_view key) {
  if (!parent.contains(key)) parent.insert(key, toml::table{});
  return *parent[key].as_table();
}

// The night's A/B experiment: the file's, with side A booting kernel `ka` and side B `kb`.
Experiment comparison_experiment(const NightlyExperiment& x, const fs::path& ka, const fs::path& kb,
                                 const std::string& a, const std::string& b, const fs::path& file) {
  toml::table root = toml::parse(x.experiment_text, x.file.string());
  root.insert_or_assign("description", fmt::format("abvm nightly: {} {} at {} against {}", x.nightly.url,
                                                   x.nightly.branch, short_sha(b), short_sha(a)));
  toml::table& sides = table_in(root, "sides");
  table_in(sides, "A").insert_or_assign("kernel", ka.string());
  table_in(sides, "A").insert_or_assign("label", short_sha(a));
  table_in(sides, "B").insert_or_assign("kernel", kb.string());
  table_in(sides, "B").insert_or_assign("label", short_sha(b));
  std::ostringstream text;
  text << "# Written by abvm nightly from " << x.file.string() << ": " << x.nightly.branch << " at " << b
       << " (B) against " << a << " (A).\n"
       << toml::toml_formatter{root} << "\n";
  write_file_atomic(file, text.str());
  return load_experiment_text(text.str(), file.string(), x.file.parent_path());
}

std::vector<MetricResult> metrics_of(const Analysis& analysis) {
  std::vector<MetricResult> out;
  for (const auto& m : analysis.metrics) {
    out.push_back({.name = m.name, .unit = m.unit, .better = to_string(m.better), .estimate = m.effect.estimate,
                   .low = m.effect.low, .high = m.effect.high, .verdict = to_string(m.verdict), .judged = m.judged});
  }
  return out;
}

std::string rel(const fs::path& p, const History& h) { return fs::relative(p, h.dir()).string(); }

// One A/B run's end: its analysis, or why there is none.
struct Comparison {
  std::optional<Analysis> analysis;
  RunStatus status = RunStatus::running;
  std::string failure;
  fs::path dir;
};

class Night {
 public:
  Night(const NightlyExperiment& x, const History& h, const NightOptions& o, const NightCollaborators& c)
      : x_(x), h_(h), o_(o), c_(c) {}

  NightEnd run();

 private:
  GuestDriver& driver() {
    if (driver_ == nullptr) driver_ = &c_.connect();
    return *driver_;
  }
  Comparison compare(const Experiment& e, const fs::path& root);
  BisectionResult bisect(const Experiment& e, const Kernels& k, const fs::path& measured, const fs::path& root);
  std::optional<DriftResult> drift(const std::vector<NightRecord>& lines, const std::string& a, const std::string& b,
                                   const fs::path& dir);
  NightEnd nothing_to_run(std::vector<NightRecord>& lines, NightRecord r);
  NightEnd finish(NightRecord r, const fs::path& dir, int exit_code);
  NightEnd measure(NightRecord& r, const Experiment& e, const Kernels& k, const std::vector<NightRecord>& lines,
                   const fs::path& dir);
  struct Anchor {
    std::string commit;
    std::string why;  // plain words, for the night's notes
  };
  Anchor anchor_for(const std::vector<NightRecord>& lines, const std::string& a) const;

  const NightlyExperiment& x_;
  const History& h_;
  const NightOptions& o_;
  const NightCollaborators& c_;
  GuestDriver* driver_ = nullptr;
};

// The commit a comparison's kernels are built from, A being `a` (history.hpp says how it is chosen
// and kept): the anchor of the tree's newest night before while it is an ancestor of `a`, else
// nightly.base while it is one, else `a`.
Night::Anchor Night::anchor_for(const std::vector<NightRecord>& lines, const std::string& a) const {
  const NightlySettings& n = x_.nightly;
  const std::optional<std::string> kept = last_anchor(lines, n.url, n.branch);
  if (kept && !o_.reanchor && is_ancestor(n.tree, *kept, a)) {
    return {.commit = *kept, .why = "the anchor of the nights before: their kept build tree"};
  }
  const std::string base = resolve_commit(n.tree, n.base);
  Anchor out{.commit = is_ancestor(n.tree, base, a) ? base : a};
  const std::string chosen = out.commit == base ? fmt::format("nightly.base {}", n.base) : "A";
  if (!kept) {
    out.why = fmt::format("{}: no night before recorded one: a new build tree", chosen);
  } else if (o_.reanchor) {
    out.why = fmt::format("{} instead of the kept {} (--reanchor): a new build tree", chosen, short_sha(*kept));
  } else {
    out.why = fmt::format("{}: the kept {} is no longer an ancestor of A (a rebased tree, or a clone without it): a "
                          "new build tree", chosen, short_sha(*kept));
  }
  return out;
}

Comparison Night::compare(const Experiment& e, const fs::path& root) {
  const ResultsDir rd = start_run(e, make_plan(e, choose_seed(e)), root, x_.file, o_.uri);
  Runner runner(e, rd,
                {.connect = [this] { return std::vector<HostDriver>{{.name = "", .driver = &driver()}}; },
                 .preparer = c_.preparer,
                 .observer = c_.observer,
                 .decide = c_.looks(e),
                 .stop_requested = c_.stop_requested});
  const RunEnd end = runner.run({.uri = o_.uri});
  Comparison out{.status = end.status, .failure = end.failure, .dir = rd.root()};
  if (end.status == RunStatus::running || end.status == RunStatus::failed) return out;
  out.analysis = c_.finish(e, rd, end);
  // Every run failed: an "inconclusive" that measured nothing is the host's failure, not a night (or
  // a drift comparison) that could make B good.
  if (out.analysis && out.analysis->metrics.empty()) {
    out.analysis.reset();
    out.failure = fmt::format("nothing was measured: every run of both sides failed ({} lists them)",
                              ResultsDir(rd.root()).report_html().string());
  }
  return out;
}

// The culprits, or the range the search had left when it stopped, as commits.
std::vector<CulpritInfo> culprits_of(const BisectState& state, const BisectSeries& series) {
  std::vector<CulpritRange> ranges = state.culprits;
  if (ranges.empty() && state.searching) ranges.push_back(*state.searching);
  // Stopped before its first step ended: the whole series is the range left.
  if (ranges.empty() && state.outcome == BisectOutcome::running) {
    ranges.push_back({.first = 1, .last = static_cast<int>(series.patches.size())});
  }
  std::vector<CulpritInfo> out;
  for (const auto& r : ranges) {
    CulpritInfo info;
    for (int i = r.first; i <= r.last; ++i) {
      const SeriesEntry& p = series.patches.at(static_cast<std::size_t>(i - 1));
      const auto subject_start = p.text.find("Subject: [PATCH] ");
      std::string subject = subject_start == std::string::npos ? p.name : p.text.substr(subject_start + 17);
      info.commits.push_back({.commit = p.commit, .subject = subject.substr(0, subject.find('\n'))});
    }
    out.push_back(std::move(info));
  }
  return out;
}

// `measured`: the night's comparison of head and A, the bisection's first question.
BisectionResult Night::bisect(const Experiment& e, const Kernels& k, const fs::path& measured, const fs::path& root) {
  BisectSettings settings{.max_steps = x_.nightly.bisect_max_steps, .max_boots_per_side = x_.nightly.bisect_max_boots};
  const BisectSetup setup = setup_bisection(e, x_.file, settings);
  const BisectDir dir = start_bisection(e, setup, root);
  const auto started = c_.clock();
  const auto wall = x_.nightly.bisect_max_wall;
  bool out_of_time = false;
  const auto write = [&](const BisectState& state, const std::vector<StepRecord>& steps, bool stopped) {
    const BisectReport report{.plan = setup.plan, .steps = steps, .state = state, .interrupted = stopped};
    write_file_atomic(dir.report_json(), bisect_json_text(report));
    write_file_atomic(dir.summary(), bisect_summary(report));
    write_file_atomic(dir.report_html(), bisect_html(report, load_html_template()));
  };
  Bisection b(dir, {.connect = [this]() -> GuestDriver& { return driver(); },
                    .preparer = c_.preparer,
                    .observer = c_.observer,
                    .finish = c_.finish,
                    .stop_requested =
                        [&] {
                          if (c_.stop_requested()) return true;
                          out_of_time = out_of_time || (wall && c_.clock() - started >= *wall);
                          return out_of_time;
                        },
                    .step_done = [&](const BisectState& s, const std::vector<StepRecord>& steps) { write(s, steps, false); },
                    .measured = MeasuredComparison{
                        .question = {.kernel = static_cast<int>(k.series.patches.size()), .reference = 0},
                        .results_dir = measured}});
  const BisectEnd end = b.run(o_.uri);
  write(end.state, end.steps, end.interrupted);
  c_.observer.note(bisect_summary({.plan = setup.plan, .steps = end.steps, .state = end.state,
                                   .interrupted = end.interrupted}));
  return {.outcome = end.interrupted ? "stopped" : to_string(end.state.outcome),
          .end = end.interrupted ? (out_of_time ? fmt::format("wall time ({} spent)", format_duration(*wall))
                                                : std::string("interrupted"))
                                 : to_string(end.state.end),
          .culprits = culprits_of(end.state, k.series),
          .dir = rel(dir.root(), h_),
          .report = rel(dir.report_html(), h_),
          .steps = static_cast<int>(end.steps.size()),
          .boots_per_side = end.boots_per_side};
}

// The night's report names what its bisection found: the run wrote the report before the
// bisection began, so the bisection's section goes in once it has ended (the history links the
// report as the night's).
void write_bisection_into_report(const fs::path& report, const BisectionResult& b, const History& h) {
  ReportBisection section{.outcome = b.outcome, .end = b.end, .steps = b.steps, .boots_per_side = b.boots_per_side,
                          .href = fs::relative(h.dir() / b.report, report.parent_path()).string()};
  for (const auto& c : b.culprits) {
    auto& range = section.culprits.emplace_back();
    for (const auto& commit : c.commits) range.push_back({.commit = commit.commit, .subject = commit.subject});
  }
  write_file_atomic(report, with_bisection_section(read_file(report), section));
}

// Every drift_every nights that ran, the head against the A of the night drift_every nights before
// (the last good commit then): a creep of steps each under the margin shows there.
std::optional<DriftResult> Night::drift(const std::vector<NightRecord>& lines, const std::string& a,
                                        const std::string& b, const fs::path& dir) {
  const NightlySettings& n = x_.nightly;
  std::vector<NightRecord> ran = ran_nights(lines, n.url, n.branch);
  // Tonight's own earlier line (a night run again after its drift was interrupted) is not a night before it.
  std::erase_if(ran, [&](const NightRecord& l) { return l.a == a && l.b == b; });
  const std::size_t tonight = ran.size() + 1;  // 1-based among the nights that ran
  const auto every = static_cast<std::size_t>(n.drift_every);
  if (n.drift_every <= 0 || tonight % every != 0 || ran.empty()) return std::nullopt;
  const std::string old = ran[tonight > every ? tonight - every - 1 : 0].a;
  if (old == a || !is_ancestor(n.tree, old, b)) {
    c_.observer.note(fmt::format("drift: nothing to compare ({} is {})", short_sha(old),
                                 old == a ? "tonight's A" : "no longer an ancestor of the head"));
    return std::nullopt;
  }
  c_.observer.note(fmt::format("drift: {} against {}, the last good commit {} nights before", short_sha(b),
                               short_sha(old), n.drift_every));
  const Kernels k = write_kernels(x_, anchor_for(lines, old).commit, old, b, dir / "kernels");
  if (k.series.patches.empty()) return std::nullopt;
  const Experiment e = comparison_experiment(x_, k.recipes.front(), k.recipes.back(), old, b, dir / "experiment.toml");
  const Comparison cmp = compare(e, dir / "run");
  DriftResult d{.a = old, .verdict = cmp.status == RunStatus::running ? "interrupted" : "infrastructure"};
  if (cmp.analysis) {
    d.verdict = to_string(cmp.analysis->verdict);
    d.metrics = metrics_of(*cmp.analysis);
    d.report = rel(ResultsDir(cmp.dir).report_html(), h_);
  }
  return d;
}

NightEnd Night::finish(NightRecord r, const fs::path& dir, int exit_code) {
  r.exit_code = exit_code;
  if (!dir.empty()) write_file_atomic(dir / "night.json", to_json(r).dump(2) + "\n");
  h_.put(r);
  return {.record = std::move(r), .exit_code = exit_code};
}

// The head has not moved since a night that ran, or it is A: the line of the night that measured
// it (the same key, or a night whose B it is when it is A) counts the check.
NightEnd Night::nothing_to_run(std::vector<NightRecord>& lines, NightRecord r) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    NightRecord& l = *it;
    const bool measured_it = l.same_key(r) || (r.a == r.b && l.b == r.b && l.url == r.url && l.branch == r.branch &&
                                               l.experiment_sha256 == r.experiment_sha256);
    if (!measured_it || !(l.ran() || l.outcome == "unchanged")) continue;
    ++l.unchanged_checks;
    c_.observer.note(fmt::format("nothing to run: the head of {} is still {}, measured on {} ({}); checked {} more "
                                 "time(s) since", r.branch, short_sha(r.b), l.date, l.outcome, l.unchanged_checks));
    h_.put(l);
    return {.record = l, .exit_code = 0};
  }
  r.outcome = "unchanged";
  r.good = true;
  c_.observer.note(r.detail);
  return finish(std::move(r), {}, 0);
}

NightEnd Night::run() {
  std::vector<NightRecord> lines = h_.read();
  const NightlySettings& n = x_.nightly;
  const NightCommits nc = choose_commits(n.tree, n.branch, n.base, last_good(lines, n.url, n.branch));
  NightRecord r{.url = n.url, .branch = n.branch, .a = nc.a, .b = nc.b, .experiment_sha256 = x_.sha256,
                .date = utc_iso8601(o_.now), .experiment = x_.experiment.name,
                .a_reason = to_string(nc.reason), .a_why = nc.why, .margin = x_.experiment.analysis.margin,
                .abvm_version = ABVM_VERSION, .host = host_name()};
  c_.observer.note(fmt::format("night: {} at {} (B) against {} (A): {}", n.branch, short_sha(nc.b), short_sha(nc.a), nc.why));
  if (nc.a == nc.b) {
    r.detail = fmt::format("nothing to run: the head of {} is A ({})", n.branch, short_sha(nc.a));
    return nothing_to_run(lines, r);
  }
  // A night measured to its end is not measured again; one whose bisection or drift comparison was
  // interrupted or lost its host (130, 3: nothing changed) is, as its exit said.
  const auto finished = [](const NightRecord& l) {
    return l.ran() && l.exit_code != static_cast<int>(ExitCode::interrupted) &&
           l.exit_code != static_cast<int>(ExitCode::infrastructure);
  };
  if (std::any_of(lines.begin(), lines.end(), [&](const NightRecord& l) { return l.same_key(r) && finished(l); })) {
    return nothing_to_run(lines, r);
  }
  const fs::path dir = create_results_dir(h_.nights(), short_sha(nc.b), o_.now);
  r.night = dir.filename().string();
  const Anchor anchor = anchor_for(lines, nc.a);
  c_.observer.note(fmt::format("anchor: {} ({})", short_sha(anchor.commit), anchor.why));
  r.anchor = anchor.commit;
  const Kernels k = write_kernels(x_, r.anchor, nc.a, nc.b, dir / "kernels");
  r.commits = k.commits;
  if (k.series.patches.empty()) {
    r.outcome = "unchanged";
    r.good = true;
    r.detail = "nothing to run: the commits between A and B change no file";
    return finish(r, dir, 0);
  }
  const Experiment e = comparison_experiment(x_, k.recipes.front(), k.recipes.back(), nc.a, nc.b, dir / "experiment.toml");
  // What a regression will bisect, checked before anything runs (the sides differ only in kernels).
  setup_bisection(e, x_.file, {.max_steps = n.bisect_max_steps, .max_boots_per_side = n.bisect_max_boots});
  try {
    return measure(r, e, k, lines, dir);
  } catch (const InfraError& ex) {
    // A night measured before its bisection or drift failed keeps its verdict; B is not made good.
    if (!r.ran()) r.outcome = "infrastructure";
    r.detail = ex.what();
    r.good = false;
    finish(r, dir, static_cast<int>(ExitCode::infrastructure));
    throw;
  }
}

NightEnd Night::measure(NightRecord& r, const Experiment& e, const Kernels& k, const std::vector<NightRecord>& lines,
                        const fs::path& dir) {
  const Comparison cmp = compare(e, dir / "run");
  r.run_dir = rel(cmp.dir, h_);
  if (cmp.status == RunStatus::running) {
    r.outcome = "interrupted";
    r.detail = "interrupted (Ctrl-C): run abvm nightly again to measure this night anew";
    return finish(r, dir, static_cast<int>(ExitCode::interrupted));
  }
  if (!cmp.analysis) {
    r.outcome = "infrastructure";
    r.detail = cmp.failure;
    return finish(r, dir, static_cast<int>(ExitCode::infrastructure));
  }
  r.metrics = metrics_of(*cmp.analysis);
  r.outcome = to_string(cmp.analysis->verdict);
  r.report = rel(ResultsDir(cmp.dir).report_html(), h_);
  int exit_code = exit_code_for(cmp.analysis->verdict);
  if (cmp.analysis->verdict == Verdict::regression) {
    c_.observer.note(fmt::format("night: regression; bisecting the {} commit(s) between A and B", k.series.patches.size()));
    r.bisection = bisect(e, k, cmp.dir, dir / "bisect");
    write_bisection_into_report(ResultsDir(cmp.dir).report_html(), *r.bisection, h_);
    if (r.bisection->end == "interrupted") exit_code = static_cast<int>(ExitCode::interrupted);
  } else if (!c_.stop_requested()) {
    r.drift = drift(lines, r.a, r.b, dir / "drift");
    if (r.drift && r.drift->verdict == "regression") {
      r.detail = fmt::format("drift: {} is slower than {}, the last good commit {} nights before", short_sha(r.b),
                             short_sha(r.drift->a), x_.nightly.drift_every);
      exit_code = 1;
    } else if (r.drift && (r.drift->verdict == "interrupted" || r.drift->verdict == "infrastructure")) {
      // The night's question is half answered: B is not made good on it, and the exit says why.
      const bool interrupted = r.drift->verdict == "interrupted";
      r.detail = fmt::format("drift: {} against {} did not finish ({}): run abvm nightly again to measure this "
                             "night anew",
                             short_sha(r.b), short_sha(r.drift->a), r.drift->verdict);
      exit_code = static_cast<int>(interrupted ? ExitCode::interrupted : ExitCode::infrastructure);
    }
  }
  r.good = exit_code == 0 || exit_code == 4;
  return finish(r, dir, exit_code);
}

}  // namespace

NightEnd run_night(const NightlyExperiment& x, const History& history, const NightOptions& options,
                   const NightCollaborators& collaborators) {
  return Night(x, history, options, collaborators).run();
}

}  // namespace abvm
