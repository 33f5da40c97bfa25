#include "samples/journal.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/utf8.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

using nlohmann::json;

class LineReader {
 public:
  LineReader(const json& object, std::string_view source, std::size_t line)
      : object_(object), source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(located(source_, line_, message));
  }

  const json& field(const json& object, const char* key, const std::string& prefix = "") const {
    auto it = object.find(key);
    if (it == object.end())
      fail(fmt::format("journal entry has no field \"{}{}\"", prefix, key));
    return *it;
  }

  [[noreturn]] void wrong_type(const char* key, const char* expected, const json& value,
                               const std::string& prefix = "") const {
    fail(fmt::format("journal field \"{}{}\" must be {}, not {}", prefix, key, expected,
                     value.dump()));
  }

  std::string string(const char* key, const json& object, const std::string& prefix = "") const {
    const json& v = field(object, key, prefix);
    if (!v.is_string()) wrong_type(key, "a string", v, prefix);
    return v.get<std::string>();
  }
  std::string string(const char* key) const { return string(key, object_); }

  std::int64_t integer(const char* key) const {
    const json& v = field(object_, key);
    if (!v.is_number_integer()) wrong_type(key, "an integer", v);
    return v.get<std::int64_t>();
  }

  int small_integer(const char* key) const {
    std::int64_t v = integer(key);
    if (v < 0 || v > 1'000'000'000)
      fail(fmt::format("journal field \"{}\" must be between 0 and 1000000000, not {}", key, v));
    return static_cast<int>(v);
  }

  const json& object() const { return object_; }

 private:
  const json& object_;
  std::string_view source_;
  std::size_t line_;
};

// "guest" is optional (older journals have none); when present, its fields are strict.
void read_guest(const LineReader& r, JournalEntry& e) {
  const auto it = r.object().find("guest");
  if (it == r.object().end()) return;
  if (!it->is_object()) r.wrong_type("guest", "an object", *it);
  if (it->contains("kernel_release")) e.kernel_release = r.string("kernel_release", *it, "guest.");
  for (auto [key, into] : {std::pair{"module_params", &e.module_params}, std::pair{"facts", &e.facts}}) {
    const auto map = it->find(key);
    if (map == it->end()) continue;
    if (!map->is_object()) r.wrong_type(key, "an object", *map, "guest.");
    const std::string prefix = fmt::format("guest.{}.", key);
    for (const auto& [name, value] : map->items()) {
      if (!value.is_string()) r.wrong_type(name.c_str(), "a string", value, prefix);
      (*into)[name] = value.get<std::string>();
    }
  }
}

// A number of a nested object ("timing.start"); `null_ok`: null reads as nullopt.
std::optional<double> nested_number(const LineReader& r, const json& object, const char* key, const char* prefix,
                                    bool null_ok = false) {
  const json& v = r.field(object, key, prefix);
  if (null_ok && v.is_null()) return std::nullopt;
  if (!v.is_number()) r.wrong_type(key, null_ok ? "a number or null" : "a number", v, prefix);
  return v.get<double>();
}

// "timing" and "overlap" are optional (journals before the run stage recorded them have none);
// when present, strict.
void read_timing_and_overlap(const LineReader& r, JournalEntry& e) {
  if (const auto it = r.object().find("timing"); it != r.object().end()) {
    if (!it->is_object()) r.wrong_type("timing", "an object", *it);
    RunTiming t;
    t.go = nested_number(r, *it, "go", "timing.", true);
    t.start = *nested_number(r, *it, "start", "timing.");
    t.end = *nested_number(r, *it, "end", "timing.");
    t.load_end = *nested_number(r, *it, "load_end", "timing.");
    if (it->contains("fill")) t.fill = nested_number(r, *it, "fill", "timing.");
    t.clock_error = *nested_number(r, *it, "clock_error", "timing.");
    if (auto problem = timing_problem(t)) r.fail(*problem);
    e.timing = t;
  }
  if (const auto it = r.object().find("overlap"); it != r.object().end()) {
    if (!it->is_object()) r.wrong_type("overlap", "an object", *it);
    RunOverlap o;
    o.partner = r.string("partner", *it, "overlap.");
    o.run = *nested_number(r, *it, "run", "overlap.");
    o.pair = *nested_number(r, *it, "pair", "overlap.");
    if (auto problem = overlap_problem(o)) r.fail(*problem);
    e.overlap = std::move(o);
  }
}

// "size", "scale" and "sizing_block" are optional (journals before version 2 have none).
void read_size(const LineReader& r, JournalEntry& e) {
  if (r.object().contains("size")) e.size = r.string("size");
  if (r.object().contains("scale")) {
    e.scale = static_cast<std::uint64_t>(r.small_integer("scale"));
    if (e.scale < 1) r.fail("journal field \"scale\" must be >= 1 (1: the size as written), not 0");
  }
  if (const auto it = r.object().find("sizing_block"); it != r.object().end()) {
    if (!it->is_boolean()) r.wrong_type("sizing_block", "true or false", *it);
    e.sizing_block = it->get<bool>();
  }
}

// A cost figure: a finite number >= 0.
double cost_number(const LineReader& r, const json& object, const char* key, const char* prefix) {
  const double v = *nested_number(r, object, key, prefix);
  if (!(std::isfinite(v) && v >= 0)) r.fail(fmt::format("journal field \"{}{}\" must be >= 0, not {}", prefix, key, v));
  return v;
}
std::uint64_t cost_count(const LineReader& r, const json& object, const char* key, const char* prefix) {
  const json& v = r.field(object, key, prefix);
  if (!v.is_number_unsigned()) r.wrong_type(key, "an integer >= 0", v, prefix);
  return v.get<std::uint64_t>();
}

// "cost" is optional (journals before version 3 have none); when present, strict.
void read_cost(const LineReader& r, JournalEntry& e) {
  const auto it = r.object().find("cost");
  if (it == r.object().end()) return;
  if (!it->is_object()) r.wrong_type("cost", "an object", *it);
  const json& c = *it;
  RunCost cost{.tool_bytes = cost_count(r, c, "tool_bytes", "cost.")};
  if (c.contains("tool_runs")) cost.tool_runs = cost_count(r, c, "tool_runs", "cost.");
  if (c.contains("guest_cpu")) cost.guest_cpu_seconds = cost_number(r, c, "guest_cpu", "cost.");
  if (const auto t = c.find("guest_ticks"); t != c.end()) {
    if (!t->is_object()) r.wrong_type("guest_ticks", "an object", *t, "cost.");
    cost.guest_ticks = GuestTicks{.busy = cost_count(r, *t, "busy", "cost.guest_ticks."),
                                  .all = cost_count(r, *t, "all", "cost.guest_ticks.")};
  }
  if (c.contains("fio_ctx")) cost.fio_ctx = cost_count(r, c, "fio_ctx", "cost.");
  if (const auto h = c.find("host"); h != c.end()) {
    if (!h->is_object()) r.wrong_type("host", "an object", *h, "cost.");
    const char* p = "cost.host.";
    cost.host = HostWindowCost{.cpu_seconds = cost_number(r, *h, "cpu", p),
                               .user_seconds = cost_number(r, *h, "user", p),
                               .system_seconds = cost_number(r, *h, "system", p),
                               .vcpu_seconds = cost_number(r, *h, "vcpu", p),
                               .disk_bytes = cost_count(r, *h, "disk_bytes", p),
                               .disk_requests = cost_count(r, *h, "disk_requests", p)};
    if (const auto clock = h->find("cpu_clock"); clock != h->end()) {  // optional: added within version 3
      const auto parsed = clock->is_string() ? parse_cpu_clock(clock->get<std::string>()) : std::nullopt;
      if (!parsed) r.wrong_type("cpu_clock", "\"libvirt\", \"schedstat\" or \"ticks\"", *clock, p);
      cost.host->cpu_clock = parsed;
    }
    if (h->contains("threads_ended")) cost.host->threads_ended = cost_count(r, *h, "threads_ended", p);
  }
  if (c.contains("host_missing")) cost.host_missing = r.string("host_missing", c, "cost.");
  e.cost = std::move(cost);
}

nlohmann::ordered_json cost_json(const RunCost& cost) {
  nlohmann::ordered_json c;
  c["tool_bytes"] = cost.tool_bytes;
  c["tool_runs"] = cost.tool_runs;
  if (cost.guest_cpu_seconds) c["guest_cpu"] = *cost.guest_cpu_seconds;
  if (cost.guest_ticks) c["guest_ticks"] = {{"busy", cost.guest_ticks->busy}, {"all", cost.guest_ticks->all}};
  if (cost.fio_ctx) c["fio_ctx"] = *cost.fio_ctx;
  if (cost.host) {
    const HostWindowCost& h = *cost.host;
    nlohmann::ordered_json jh;
    jh["cpu"] = h.cpu_seconds;
    if (h.cpu_clock) jh["cpu_clock"] = to_string(*h.cpu_clock);
    if (h.threads_ended > 0) jh["threads_ended"] = h.threads_ended;
    jh["user"] = h.user_seconds;
    jh["system"] = h.system_seconds;
    jh["vcpu"] = h.vcpu_seconds;
    jh["disk_bytes"] = h.disk_bytes;
    jh["disk_requests"] = h.disk_requests;
    c["host"] = std::move(jh);
  }
  if (!cost.host_missing.empty()) c["host_missing"] = cost.host_missing;
  return c;
}

}  // namespace

std::optional<std::string> timing_problem(const RunTiming& t) {
  const std::pair<const char*, double> numbers[] = {{"go", t.go.value_or(0)},
                                                      {"start", t.start},
                                                      {"end", t.end},
                                                      {"load_end", t.load_end},
                                                      {"clock_error", t.clock_error}};
  for (const auto& [name, value] : numbers) {
    if (!std::isfinite(value)) {
      return fmt::format("journal field \"timing.{}\" must be a finite number, not {}", name, value);
    }
  }
  if (!(t.start <= t.end && t.end <= t.load_end)) {
    return fmt::format("journal field \"timing\" must have start <= end <= load_end (a run ends after it starts, its "
                       "load with or after it), not start {}, end {}, load_end {}",
                       t.start, t.end, t.load_end);
  }
  if (t.fill && !(std::isfinite(*t.fill) && t.end <= *t.fill && *t.fill <= t.load_end)) {
    return fmt::format("journal field \"timing.fill\" must lie between end {} and load_end {} (the filler begins after "
                       "the run and ends with the load), not {}",
                       t.end, t.load_end, *t.fill);
  }
  if (t.clock_error < 0) return fmt::format("journal field \"timing.clock_error\" must be >= 0, not {}", t.clock_error);
  return std::nullopt;
}

std::optional<std::string> overlap_problem(const RunOverlap& o) {
  if (o.partner.empty()) return "journal field \"overlap.partner\" must name the partner run's trial, not \"\"";
  for (const auto& [name, value] : {std::pair{"run", o.run}, std::pair{"pair", o.pair}}) {
    if (!(value >= 0 && value <= 1)) {
      return fmt::format("journal field \"overlap.{}\" must be a share between 0 and 1, not {}", name, value);
    }
  }
  return std::nullopt;
}

std::string to_journal_line(const JournalEntry& e) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const auto& m : e.metrics) {
    if (!std::isfinite(m.value))
      throw Error(fmt::format("trial {}: metric \"{}\" has the non-finite value {}: record the "
                              "run as invalid-output instead",
                              e.trial, m.name, m.value));
    nlohmann::ordered_json jm;
    jm["name"] = m.name;
    jm["unit"] = m.unit;
    jm["better"] = to_string(m.better);
    jm["value"] = m.value;
    metrics.push_back(std::move(jm));
  }
  // nlohmann's default object is sorted by key; an ordered_json keeps the documented order,
  // which makes journals readable by eye and diffs stable.
  nlohmann::ordered_json j;
  j["journal_version"] = e.journal_version;
  j["trial"] = e.trial;
  j["side"] = to_string(e.side);
  j["boot"] = e.boot;
  j["run"] = e.run;
  j["order"] = e.order;
  j["block"] = e.block ? nlohmann::ordered_json(*e.block) : nlohmann::ordered_json(nullptr);
  j["workload"] = e.workload;
  j["outcome"] = to_string(e.outcome);
  j["host"] = e.host;
  j["accelerator"] = to_string(e.accelerator);
  j["time"] = e.time;
  j["metrics"] = std::move(metrics);
  j["detail"] = e.detail;
  if (e.timing) {
    if (auto problem = timing_problem(*e.timing)) throw Error(fmt::format("trial {}: {}", e.trial, *problem));
    const RunTiming& t = *e.timing;
    nlohmann::ordered_json jt;
    jt["go"] = t.go ? nlohmann::ordered_json(*t.go) : nlohmann::ordered_json(nullptr);
    jt["start"] = t.start;
    jt["end"] = t.end;
    jt["load_end"] = t.load_end;
    if (t.fill) jt["fill"] = *t.fill;
    jt["clock_error"] = t.clock_error;
    j["timing"] = std::move(jt);
  }
  if (e.overlap) {
    if (auto problem = overlap_problem(*e.overlap)) throw Error(fmt::format("trial {}: {}", e.trial, *problem));
    nlohmann::ordered_json jo;
    jo["partner"] = e.overlap->partner;
    jo["run"] = e.overlap->run;
    jo["pair"] = e.overlap->pair;
    j["overlap"] = std::move(jo);
  }
  if (!e.size.empty()) j["size"] = e.size;
  if (e.scale > 0) j["scale"] = e.scale;
  if (e.sizing_block) j["sizing_block"] = true;
  if (e.cost) j["cost"] = cost_json(*e.cost);
  if (!e.kernel_release.empty() || !e.module_params.empty() || !e.facts.empty()) {
    j["guest"] = {{"kernel_release", e.kernel_release}, {"module_params", e.module_params}};
    if (!e.facts.empty()) j["guest"]["facts"] = e.facts;
  }
  // Details quote what tools and guests printed, which need not be UTF-8; nlohmann would throw
  // and lose the run. Such bytes become U+FFFD (the run stays recorded with its reason), and so
  // do the non-characters U+FFFE/U+FFFF, which nlohmann writes as they are but the XML and HTML
  // made from the journal cannot carry.
  return to_well_formed_utf8(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

JournalEntry parse_journal_line(std::string_view line, std::string_view source,
                                std::size_t line_no) {
  json object;
  try {
    object = json::parse(line);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw Error(located(source, line_no, fmt::format("not a JSON journal entry: {}", e.what())));
  }
  if (!object.is_object())
    throw Error(located(source, line_no, "journal entry is not a JSON object"));
  LineReader r(object, source, line_no);

  JournalEntry e;
  // The version first: a newer journal may have changed anything else.
  const json& version = r.field(object, "journal_version");
  if (!version.is_number_integer()) r.wrong_type("journal_version", "an integer", version);
  std::int64_t v = version.get<std::int64_t>();
  if (v > kJournalVersion)
    r.fail(fmt::format("journal_version {} is newer than this abvm reads (up to {}): use a newer "
                       "abvm to analyze these results",
                       v, kJournalVersion));
  if (v < 1) r.fail(fmt::format("journal_version {} is not valid (versions start at 1)", v));
  e.journal_version = static_cast<int>(v);

  e.trial = r.string("trial");
  std::string side = r.string("side");
  if (auto s = parse_side(side)) e.side = *s;
  else r.fail(fmt::format("journal field \"side\" must be \"A\" or \"B\", not \"{}\"", side));
  e.boot = r.string("boot");
  e.run = r.small_integer("run");
  e.order = r.integer("order");
  if (e.order < 0) r.fail(fmt::format("journal field \"order\" must be >= 0, not {}", e.order));
  const json& block = r.field(object, "block");
  if (!block.is_null()) {
    if (!block.is_number_integer()) r.wrong_type("block", "an integer or null", block);
    e.block = r.small_integer("block");
  }
  e.workload = r.string("workload");
  std::string outcome = r.string("outcome");
  auto parsed = parse_outcome(outcome);
  if (!parsed)
    r.fail(fmt::format("journal field \"outcome\" is \"{}\"; expected one of {}", outcome,
                       outcome_words()));
  e.outcome = *parsed;
  e.host = r.string("host");
  const std::string accelerator = r.string("accelerator");
  if (auto a = parse_accelerator(accelerator)) e.accelerator = *a;
  else r.fail(fmt::format("journal field \"accelerator\" must be \"kvm\" or \"tcg\", not \"{}\"", accelerator));
  e.time = r.string("time");
  e.detail = r.string("detail");

  const json& metrics = r.field(object, "metrics");
  if (!metrics.is_array()) r.wrong_type("metrics", "a list", metrics);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    std::string prefix = fmt::format("metrics[{}].", i);
    if (!m.is_object()) r.fail(fmt::format("journal field \"metrics[{}]\" is not an object", i));
    JournalMetric jm;
    jm.name = r.string("name", m, prefix);
    jm.unit = r.string("unit", m, prefix);
    std::string better = r.string("better", m, prefix);
    if (auto b = parse_better(better)) jm.better = *b;
    else
      r.fail(fmt::format("journal field \"{}better\" must be \"higher\" or \"lower\", not \"{}\"",
                         prefix, better));
    const json& value = r.field(m, "value", prefix);
    // JSON has no NaN: nlohmann writes a non-finite double as null, which lands here.
    if (!value.is_number()) r.wrong_type("value", "a number", value, prefix);
    jm.value = value.get<double>();
    e.metrics.push_back(std::move(jm));
  }
  read_guest(r, e);
  read_timing_and_overlap(r, e);
  read_size(r, e);
  read_cost(r, e);
  if (e.outcome == Outcome::ok && e.metrics.empty())
    r.fail("journal entry has outcome ok but no metrics: an ok run must carry its measurements");
  if (e.outcome != Outcome::ok && !e.metrics.empty())
    r.fail(fmt::format("journal entry has outcome {} but carries metrics: only ok runs have "
                       "measurements",
                       outcome));
  return e;
}

std::vector<JournalEntry> read_journal(const std::filesystem::path& path,
                                       const JournalWarning& warn) {
  const std::string source = path.string();
  std::vector<JournalEntry> entries;
  read_jsonl(
      path,
      [&](std::string_view line, std::size_t line_no) {
        entries.push_back(parse_journal_line(line, source, line_no));
      },
      warn);
  return entries;
}

std::vector<JournalMetric> dd_metrics(std::string_view workload, const DdRun& run) {
  return {{fmt::format("{}.bandwidth", workload), "B/s", Better::higher, run.bandwidth}};
}

std::vector<JournalMetric> cost_metrics(std::string_view workload, const RunCost& cost, bool per_request) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::vector<JournalMetric> out;
  const auto add = [&](const char* name, const char* unit, double value) {
    if (std::isfinite(value) && value > 0) out.push_back({fmt::format("{}.{}", workload, name), unit, Better::lower, value});
  };
  if (cost.guest_cpu_seconds && cost.tool_bytes > 0) {
    add("guest_cpu_per_gib", "s/GiB", *cost.guest_cpu_seconds / (static_cast<double>(cost.tool_bytes) / kGiB));
  }
  if (cost.host && cost.host->disk_bytes > 0) {
    add("host_cpu_per_gib", "s/GiB", cost.host->cpu_seconds / (static_cast<double>(cost.host->disk_bytes) / kGiB));
  }
  if (per_request && cost.host && cost.host->disk_requests > 0) {
    add("host_cpu_per_req", "us/req", cost.host->cpu_seconds * 1e6 / static_cast<double>(cost.host->disk_requests));
  }
  return out;
}

std::vector<JournalMetric> fio_metrics(std::string_view workload, const FioDocument& run) {
  bool short_names = run.jobs.size() == 1 && run.jobs.front().name == workload;
  std::vector<JournalMetric> out;
  for (const auto& job : run.jobs) {
    if (job.error != 0) continue;
    std::string prefix =
        short_names ? std::string(workload) : fmt::format("{}.{}", workload, job.name);
    for (const auto& d : job.directions) {
      std::string base = fmt::format("{}.{}.", prefix, d.direction);
      out.push_back({base + "bandwidth", "B/s", Better::higher, d.bandwidth});
      out.push_back({base + "iops", "IOPS", Better::higher, d.iops});
      out.push_back({base + "clat_mean", "ns", Better::lower, d.clat_mean_ns});
      for (auto [pct, name] : {std::pair{50.0, "clat_p50"}, std::pair{99.0, "clat_p99"}})
        if (auto it = d.clat_percentiles_ns.find(pct); it != d.clat_percentiles_ns.end())
          out.push_back({base + name, "ns", Better::lower, it->second});
    }
  }
  return out;
}

}  // namespace abvm
