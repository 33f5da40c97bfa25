#include "nightly/history.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
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

// Strict field access: the line is abvm's own, so anything missing is damage.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw Error(fmt::format("{}: not a JSON object", where_));
  }
  const json& at(const std::string& key) const {
    if (!j_.contains(key)) throw Error(fmt::format("{}: no field '{}'", where_, key));
    return j_.at(key);
  }
  template <class T>
  T get(const std::string& key) const {
    try {
      return at(key).get<T>();
    } catch (const json::type_error&) {
      throw Error(fmt::format("{}: field '{}' has the wrong type", where_, key));
    }
  }
  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  Fields sub(const std::string& key) const { return Fields(at(key), where_ + " " + key); }

 private:
  const json& j_;
  std::string where_;
};

std::vector<MetricResult> metrics_from(const Fields& f, const std::string& key, const std::string& where) {
  std::vector<MetricResult> out;
  for (const auto& m : f.at(key)) {
    const Fields mf(m, where + " " + key);
    out.push_back({.name = mf.get<std::string>("name"),
                   .unit = mf.get<std::string>("unit"),
                   .better = mf.get<std::string>("better"),
                   .estimate = mf.get<double>("estimate"),
                   .low = mf.get<double>("low"),
                   .high = mf.get<double>("high"),
                   .verdict = mf.get<std::string>("verdict"),
                   .judged = !mf.has("judged") || mf.get<bool>("judged")});
  }
  return out;
}

std::vector<CommitInfo> commits_from(const json& list, const std::string& where) {
  std::vector<CommitInfo> out;
  for (const auto& c : list) {
    const Fields cf(c, where);
    out.push_back({.commit = cf.get<std::string>("commit"), .subject = cf.get<std::string>("subject"),
                   .merge = cf.get<bool>("merge")});
  }
  return out;
}

// The tree a line is of: its URL (history.hpp). The key's tree is the URL, or on a line written
// before it was, the local path the night ran in (absolute: nightly.tree was made so).
std::string tree_url(const Fields& key, const Fields& f, const std::string& where) {
  const auto tree = key.get<std::string>("tree");
  const auto url = f.get<std::string>("url");
  if (tree != url && !tree.starts_with('/')) {
    throw Error(fmt::format("{}: key tree '{}' is neither the line's url '{}' nor a local path", where, tree, url));
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
            {"a_reason", r.a_reason}, {"a_why", r.a_why}, {"commits", commits_json(r.commits)},
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

NightRecord night_from_json(const json& j, const std::string& where) {
  const Fields f(j, where);
  const Fields key = f.sub("key");
  NightRecord r{.url = tree_url(key, f, where),
                .branch = key.get<std::string>("branch"),
                .a = key.get<std::string>("a"),
                .b = key.get<std::string>("b"),
                .experiment_sha256 = key.get<std::string>("experiment_sha256"),
                .night = f.get<std::string>("night"),
                .date = f.get<std::string>("date"),
                .experiment = f.get<std::string>("experiment"),
                .a_reason = f.get<std::string>("a_reason"),
                .a_why = f.get<std::string>("a_why"),
                .commits = commits_from(f.at("commits"), where + " commits"),
                .outcome = f.get<std::string>("outcome"),
                .detail = f.get<std::string>("detail"),
                .exit_code = f.get<int>("exit_code"),
                .good = f.get<bool>("good"),
                .margin = f.get<double>("margin"),
                .metrics = metrics_from(f, "metrics", where),
                .report = f.get<std::string>("report"),
                .run_dir = f.get<std::string>("run_dir"),
                .unchanged_checks = f.get<int>("unchanged_checks"),
                .abvm_version = f.get<std::string>("abvm_version"),
                .host = f.get<std::string>("host")};
  if (f.has("bisection")) {
    const Fields b = f.sub("bisection");
    BisectionResult br{.outcome = b.get<std::string>("outcome"),
                       .end = b.get<std::string>("end"),
                       .dir = b.get<std::string>("dir"),
                       .report = b.get<std::string>("report"),
                       .steps = b.get<int>("steps"),
                       .boots_per_side = b.get<int>("boots_per_side")};
    for (const auto& c : b.at("culprits")) {
      br.culprits.push_back({commits_from(Fields(c, where + " culprits").at("commits"), where + " culprits")});
    }
    r.bisection = br;
  }
  if (f.has("drift")) {
    const Fields d = f.sub("drift");
    r.drift = DriftResult{.a = d.get<std::string>("a"), .verdict = d.get<std::string>("verdict"),
                          .metrics = metrics_from(d, "metrics", where + " drift"), .report = d.get<std::string>("report")};
  }
  return r;
}

std::vector<NightRecord> History::read() const {
  std::vector<NightRecord> out;
  read_jsonl(
      file(),
      [&](std::string_view line, std::size_t n) {
        json j;
        try {
          j = json::parse(line);
        } catch (const json::parse_error&) {
          throw Error(fmt::format("{}:{}: not a JSON line", file().string(), n));
        }
        out.push_back(night_from_json(j, fmt::format("{}:{}", file().string(), n)));
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

std::vector<NightRecord> ran_nights(const std::vector<NightRecord>& lines, const std::string& url,
                                    const std::string& branch) {
  std::vector<NightRecord> out;
  for (const auto& l : lines) {
    if (l.url == url && l.branch == branch && l.ran()) out.push_back(l);
  }
  return out;
}

}  // namespace abvm
