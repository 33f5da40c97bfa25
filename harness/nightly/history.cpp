#include "nightly/history.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/jsonl.hpp"

namespace abvm {
namespace {
using json = nlohmann::json;

json metrics_json(const std::vector<MetricResult>& metrics) {
  json out = json::array();
  for (const auto& m : metrics) {
    out.push_back({{"name", m.name}, {"unit", m.unit}, {"better", m.better}, {"estimate", m.estimate},
                   {"low", m.low}, {"high", m.high}, {"verdict", m.verdict}, {"judged", m.judged}});
  }
  return out;
}

json commits_json(const std::vector<CommitInfo>& commits) {
  json out = json::array();
  for (const auto& c : commits) out.push_back({{"commit", c.commit}, {"subject", c.subject}, {"merge", c.merge}});
  return out;
}

// The tree a line is of: its URL (history.hpp). The key's tree is the URL, or on a line written
// before it was, the local path the night ran in (absolute: nightly.tree was made so).
std::string tree_url(const JsonField& key, const JsonField& f) {
  const JsonField tree = key.member("tree", "a string");
  const auto url = f.required<std::string>("url");
  if (const auto t = tree.as<std::string>(); t != url && !t.starts_with('/')) {
    tree.invalid(fmt::format("is \"{}\", neither the line's url \"{}\" nor a local path", t, url));
  }
  return url;
}

}  // namespace

bool NightRecord::ran() const {
  return outcome == "regression" || outcome == "no_change" || outcome == "improvement" || outcome == "inconclusive";
}

json to_json(const NightRecord& r) {
  // "url" repeats the key's tree: every line has had it (history.hpp), and an older abvm reads it.
  json j = {{"key", {{"tree", r.url}, {"branch", r.branch}, {"a", r.a}, {"b", r.b},
                     {"experiment_sha256", r.experiment_sha256}}},
            {"night", r.night}, {"date", r.date}, {"experiment", r.experiment}, {"url", r.url},
            {"a_reason", r.a_reason}, {"a_why", r.a_why}, {"anchor", r.anchor}, {"commits", commits_json(r.commits)},
            {"outcome", r.outcome}, {"detail", r.detail}, {"exit_code", r.exit_code}, {"good", r.good},
            {"margin", r.margin}, {"metrics", metrics_json(r.metrics)}, {"report", r.report}, {"run_dir", r.run_dir},
            {"bisection", nullptr}, {"drift", nullptr}, {"unchanged_checks", r.unchanged_checks},
            {"abvm_version", r.abvm_version}, {"host", r.host}};
  if (r.bisection) {
    const BisectionResult& b = *r.bisection;
    json culprits = json::array();
    for (const auto& c : b.culprits) culprits.push_back({{"commits", commits_json(c.commits)}});
    j["bisection"] = {{"outcome", b.outcome}, {"end", b.end}, {"culprits", culprits}, {"dir", b.dir},
                      {"report", b.report}, {"steps", b.steps}, {"boots_per_side", b.boots_per_side}};
  }
  if (r.drift) {
    j["drift"] = {{"a", r.drift->a}, {"verdict", r.drift->verdict}, {"metrics", metrics_json(r.drift->metrics)},
                  {"report", r.drift->report}};
  }
  return j;
}

void read_json(const JsonField& f, MetricResult& m) {
  m = MetricResult{.name = f.required<std::string>("name"),
                   .unit = f.required<std::string>("unit"),
                   .better = f.required<std::string>("better"),
                   .estimate = f.required<double>("estimate"),
                   .low = f.required<double>("low"),
                   .high = f.required<double>("high"),
                   .verdict = f.required<std::string>("verdict"),
                   .judged = f.value_or<std::optional<bool>>("judged", std::nullopt).value_or(true)};
}

void read_json(const JsonField& f, CommitInfo& c) {
  c = CommitInfo{.commit = f.required<std::string>("commit"),
                 .subject = f.required<std::string>("subject"),
                 .merge = f.required<bool>("merge")};
}

void read_json(const JsonField& f, CulpritInfo& c) { c.commits = f.required<std::vector<CommitInfo>>("commits"); }

void read_json(const JsonField& f, BisectionResult& b) {
  b = BisectionResult{.outcome = f.required<std::string>("outcome"),
                      .end = f.required<std::string>("end"),
                      .culprits = f.required<std::vector<CulpritInfo>>("culprits"),
                      .dir = f.required<std::string>("dir"),
                      .report = f.required<std::string>("report"),
                      .steps = f.required<int>("steps"),
                      .boots_per_side = f.required<int>("boots_per_side")};
}

void read_json(const JsonField& f, DriftResult& d) {
  d = DriftResult{.a = f.required<std::string>("a"),
                  .verdict = f.required<std::string>("verdict"),
                  .metrics = f.required<std::vector<MetricResult>>("metrics"),
                  .report = f.required<std::string>("report")};
}

void read_json(const JsonField& f, NightRecord& r) {
  const JsonField key = f.member("key", "an object");
  r = NightRecord{.url = tree_url(key, f),
                  .branch = key.required<std::string>("branch"),
                  .a = key.required<std::string>("a"),
                  .b = key.required<std::string>("b"),
                  .experiment_sha256 = key.required<std::string>("experiment_sha256"),
                  .night = f.required<std::string>("night"),
                  .date = f.required<std::string>("date"),
                  .experiment = f.required<std::string>("experiment"),
                  .a_reason = f.required<std::string>("a_reason"),
                  .a_why = f.required<std::string>("a_why"),
                  // Absent on a line written before the anchor was kept (history.hpp).
                  .anchor = f.value_or<std::string>("anchor", ""),
                  .commits = f.required<std::vector<CommitInfo>>("commits"),
                  .outcome = f.required<std::string>("outcome"),
                  .detail = f.required<std::string>("detail"),
                  .exit_code = f.required<int>("exit_code"),
                  .good = f.required<bool>("good"),
                  .margin = f.required<double>("margin"),
                  .metrics = f.required<std::vector<MetricResult>>("metrics"),
                  .report = f.required<std::string>("report"),
                  .run_dir = f.required<std::string>("run_dir"),
                  .unchanged_checks = f.required<int>("unchanged_checks"),
                  .abvm_version = f.required<std::string>("abvm_version"),
                  .host = f.required<std::string>("host")};
  // null or absent: the night had none.
  r.bisection = f.value_or<std::optional<BisectionResult>>("bisection", std::nullopt);
  r.drift = f.value_or<std::optional<DriftResult>>("drift", std::nullopt);
}

NightRecord night_from_json(const json& j, const std::string& where) {
  const JsonSource source{.file = where};
  return JsonField(j, source).as<NightRecord>();
}

std::vector<NightRecord> History::read() const {
  std::vector<NightRecord> out;
  read_jsonl(
      file(),
      [&](std::string_view line, std::size_t n) {
        const JsonDocument doc(line, JsonSource{.file = file().string(), .line = n});
        out.push_back(doc.root().as<NightRecord>());
      },
      [](const std::string&) {}, true);
  return out;
}

void History::put(const NightRecord& record) const {
  // One line per key: an old history may hold the night twice, once from each clone's path.
  std::vector<NightRecord> lines;
  bool placed = false;
  for (auto& l : read()) {
    if (!l.same_key(record)) {
      lines.push_back(std::move(l));
    } else if (!placed) {
      lines.push_back(record);
      placed = true;
    }
  }
  if (!placed) lines.push_back(record);
  std::string text;
  for (const auto& l : lines) text += to_json(l).dump() + "\n";
  std::filesystem::create_directories(dir_);
  write_file_atomic(file(), text);
}

std::optional<std::string> last_good(const std::vector<NightRecord>& lines, const std::string& url,
                                     const std::string& branch) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->url == url && it->branch == branch && it->good) return it->b;
  }
  return std::nullopt;
}

std::optional<std::string> last_anchor(const std::vector<NightRecord>& lines, const std::string& url,
                                       const std::string& branch) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->url == url && it->branch == branch && !it->anchor.empty()) return it->anchor;
  }
  return std::nullopt;
}

std::vector<NightRecord> ran_nights(const std::vector<NightRecord>& lines, const std::string& url,
                                    const std::string& branch) {
  std::vector<NightRecord> out;
  for (const auto& l : lines) {
    if (l.url == url && l.branch == branch && l.ran()) out.push_back(l);
  }
  return out;
}

}  // namespace abvm
