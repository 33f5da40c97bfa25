#include "samples/journal.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_read.hpp"
#include "core/utf8.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

// A run's count of something ("run", "block", "scale"): an integer in [0, 1e9].
int small_integer(const JsonField& f) {
  const auto v = f.as<std::int64_t>();
  if (v < 0 || v > 1'000'000'000) f.expected("between 0 and 1000000000");
  return static_cast<int>(v);
}

// A cost figure: a finite number >= 0.
double cost_number(const JsonField& f, std::string_view key) {
  const JsonField field = f.member(key, "a number");
  const double v = field.as<double>();
  if (!(std::isfinite(v) && v >= 0)) field.invalid(fmt::format("must be >= 0, not {}", v));
  return v;
}

// "guest" is optional (older journals have none); when present, its fields are strict.
void read_guest(const JsonField& f, JournalEntry& e) {
  const auto guest = f.find("guest");
  if (!guest) return;
  e.kernel_release = guest->value_or<std::string>("kernel_release", "");
  e.module_params = guest->value_or<std::map<std::string, std::string>>("module_params", {});
  e.facts = guest->value_or<std::map<std::string, std::string>>("facts", {});
}

// "size", "scale" and "sizing_block" are optional (journals before version 2 have none).
void read_size(const JsonField& f, JournalEntry& e) {
  e.size = f.value_or<std::string>("size", "");
  if (const auto scale = f.find("scale")) {
    e.scale = static_cast<std::uint64_t>(small_integer(*scale));
    if (e.scale < 1) scale->invalid("must be >= 1 (1: the size as written), not 0");
  }
  e.sizing_block = f.value_or<bool>("sizing_block", false);
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
      return fmt::format("field \"timing.{}\" must be a finite number, not {}", name, value);
    }
  }
  if (!(t.start <= t.end && t.end <= t.load_end)) {
    return fmt::format("field \"timing\" must have start <= end <= load_end (a run ends after it starts, its "
                       "load with or after it), not start {}, end {}, load_end {}",
                       t.start, t.end, t.load_end);
  }
  if (t.fill && !(std::isfinite(*t.fill) && t.end <= *t.fill && *t.fill <= t.load_end)) {
    return fmt::format("field \"timing.fill\" must lie between end {} and load_end {} (the filler begins after "
                       "the run and ends with the load), not {}",
                       t.end, t.load_end, *t.fill);
  }
  if (t.clock_error < 0) return fmt::format("field \"timing.clock_error\" must be >= 0, not {}", t.clock_error);
  return std::nullopt;
}

std::optional<std::string> overlap_problem(const RunOverlap& o) {
  if (o.partner.empty()) return "field \"overlap.partner\" must name the partner run's trial, not \"\"";
  for (const auto& [name, value] : {std::pair{"run", o.run}, std::pair{"pair", o.pair}}) {
    if (!(value >= 0 && value <= 1)) {
      return fmt::format("field \"overlap.{}\" must be a share between 0 and 1, not {}", name, value);
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
    if (auto problem = timing_problem(*e.timing)) throw Error(fmt::format("trial {}: journal {}", e.trial, *problem));
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
    if (auto problem = overlap_problem(*e.overlap)) throw Error(fmt::format("trial {}: journal {}", e.trial, *problem));
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

void read_json(const JsonField& f, JournalMetric& m) {
  m.name = f.required<std::string>("name");
  m.unit = f.required<std::string>("unit");
  m.better = f.required<Better>("better");
  // JSON has no NaN: nlohmann writes a non-finite double as null, which is refused here.
  m.value = f.required<double>("value");
}

// "timing" and "overlap" are optional (journals before the run stage recorded them have none);
// when present, strict.
void read_json(const JsonField& f, RunTiming& t) {
  t.go = f.required<std::optional<double>>("go");
  t.start = f.required<double>("start");
  t.end = f.required<double>("end");
  t.load_end = f.required<double>("load_end");
  t.fill = f.optional<double>("fill");
  t.clock_error = f.required<double>("clock_error");
  if (auto problem = timing_problem(t)) f.fail(*problem);
}

void read_json(const JsonField& f, RunOverlap& o) {
  o.partner = f.required<std::string>("partner");
  o.run = f.required<double>("run");
  o.pair = f.required<double>("pair");
  if (auto problem = overlap_problem(o)) f.fail(*problem);
}

void read_json(const JsonField& f, GuestTicks& t) {
  t = GuestTicks{.busy = f.required<std::uint64_t>("busy"), .all = f.required<std::uint64_t>("all")};
}

void read_json(const JsonField& f, HostWindowCost& h) {
  h = HostWindowCost{.cpu_seconds = cost_number(f, "cpu"),
                     .user_seconds = cost_number(f, "user"),
                     .system_seconds = cost_number(f, "system"),
                     .vcpu_seconds = cost_number(f, "vcpu"),
                     .disk_bytes = f.required<std::uint64_t>("disk_bytes"),
                     .disk_requests = f.required<std::uint64_t>("disk_requests")};
  h.cpu_clock = f.optional<CpuClock>("cpu_clock");  // optional: added within version 3
  h.threads_ended = f.value_or<std::uint64_t>("threads_ended", 0);
}

// "cost" is optional (journals before version 3 have none); when present, strict.
void read_json(const JsonField& f, RunCost& cost) {
  cost = RunCost{.tool_bytes = f.required<std::uint64_t>("tool_bytes")};
  if (const auto runs = f.optional<std::uint64_t>("tool_runs")) cost.tool_runs = *runs;
  if (f.has("guest_cpu")) cost.guest_cpu_seconds = cost_number(f, "guest_cpu");
  cost.guest_ticks = f.optional<GuestTicks>("guest_ticks");
  cost.fio_ctx = f.optional<std::uint64_t>("fio_ctx");
  cost.host = f.optional<HostWindowCost>("host");
  cost.host_missing = f.value_or<std::string>("host_missing", "");
}

void read_json(const JsonField& f, JournalEntry& e) {
  // The version first: a newer journal may have changed anything else.
  const auto v = f.required<std::int64_t>("journal_version");
  if (v > kJournalVersion) {
    f.fail(fmt::format("journal_version {} is newer than this abvm reads (up to {}): use a newer abvm to analyze these "
                       "results",
                       v, kJournalVersion));
  }
  if (v < 1) f.fail(fmt::format("journal_version {} is not valid (versions start at 1)", v));
  e.journal_version = static_cast<int>(v);
  e.trial = f.required<std::string>("trial");
  e.side = f.required<Side>("side");
  e.boot = f.required<std::string>("boot");
  e.run = small_integer(f.member("run", "an integer"));
  const JsonField order = f.member("order", "an integer");
  e.order = order.as<std::int64_t>();
  if (e.order < 0) order.invalid(fmt::format("must be >= 0, not {}", e.order));
  if (const JsonField block = f.member("block", "an integer or null"); !block.json().is_null()) {
    if (!block.json().is_number_integer()) block.expected("an integer or null");
    e.block = small_integer(block);
  }
  e.workload = f.required<std::string>("workload");
  e.outcome = f.required<Outcome>("outcome");
  e.host = f.required<std::string>("host");
  e.accelerator = f.required<Accelerator>("accelerator");
  e.time = f.required<std::string>("time");
  e.detail = f.required<std::string>("detail");
  e.metrics = f.required<std::vector<JournalMetric>>("metrics");
  read_guest(f, e);
  e.timing = f.optional<RunTiming>("timing");
  e.overlap = f.optional<RunOverlap>("overlap");
  read_size(f, e);
  e.cost = f.optional<RunCost>("cost");
  if (e.outcome == Outcome::ok && e.metrics.empty())
    f.fail("journal entry has outcome ok but no metrics: an ok run must carry its measurements");
  if (e.outcome != Outcome::ok && !e.metrics.empty()) {
    f.fail(fmt::format("journal entry has outcome {} but carries metrics: only ok runs have measurements",
                       to_string(e.outcome)));
  }
}

JournalEntry parse_journal_line(std::string_view line, std::string_view source, std::size_t line_no) {
  const JsonDocument doc(line, JsonSource{.file = std::string(source), .line = line_no});
  return doc.root().as<JournalEntry>();
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
