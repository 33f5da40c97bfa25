#include "samples/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "results/directory.hpp"
#include "samples/cost_notes.hpp"
#include "samples/dd.hpp"
#include "samples/fio.hpp"
#include "samples/numbers.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

constexpr const char* kDdBandwidth = "dd.bandwidth";

// Collects samples metric by metric, in first-seen order, and checks that one name always
// means one unit and direction.
class Builder {
 public:
  void add(Side side, const JournalMetric& m, Sample sample) {
    samples(side, m, sample).push_back(std::move(sample));
  }

  // The samples of `m` on `side`, to add to, once `m` is checked to keep its unit and direction
  // (`first`: the first sample to add, named in the error): a file of plain numbers adds its 1M
  // values at once.
  std::vector<Sample>& samples(Side side, const JournalMetric& m, const Sample& first) {
    MetricSamples& ms = metric(m);
    if (ms.unit != m.unit || ms.better != m.better)
      throw Error(fmt::format("{}: metric \"{}\" is {} ({} is better) here but {} ({} is better) "
                              "before: one metric name must keep one unit and direction",
                              first.source(), m.name, m.unit, to_string(m.better), ms.unit,
                              to_string(ms.better)));
    return side == Side::a ? ms.a : ms.b;
  }

  void fail(FailedRun run) { set_.failures.push_back(std::move(run)); }
  void note(std::string text) { set_.notes.push_back(std::move(text)); }
  SampleSet& set() { return set_; }

  // Keeps only `name` (Error listing the names when there is no such metric).
  void select(const std::string& name) {
    auto it = std::find_if(set_.metrics.begin(), set_.metrics.end(),
                           [&](const MetricSamples& m) { return m.name == name; });
    if (it == set_.metrics.end()) {
      std::vector<std::string> names;
      for (const auto& m : set_.metrics) names.push_back(m.name);
      throw Error(fmt::format("no metric \"{}\" in the input; --metric can be one of: {}", name,
                              fmt::join(names, ", ")));
    }
    MetricSamples kept = std::move(*it);
    set_.metrics.clear();
    set_.metrics.push_back(std::move(kept));
  }

  // `why_missing(side, metric)` adds context to the error (e.g. failed runs). A metric that
  // `keep_one_sided(side, metric)` accepts is kept with one side empty: the analysis reports it
  // as inconclusive instead of refusing the whole input.
  template <typename WhyMissing, typename KeepOneSided>
  SampleSet finish(WhyMissing why_missing, KeepOneSided keep_one_sided) {
    for (const auto& m : set_.metrics) {
      if (!m.a.empty() && !m.b.empty()) continue;
      if (keep_one_sided(m.a.empty() ? Side::a : Side::b, m)) continue;
      Side present = m.a.empty() ? Side::b : Side::a;
      Side missing = m.a.empty() ? Side::a : Side::b;
      const Sample& first = (present == Side::a ? m.a : m.b).front();
      throw Error(fmt::format("metric \"{}\" has samples on side {} only (first at {}); side {} "
                              "has none{}: compare the same measurement on both sides, or pick "
                              "one both have with --metric",
                              m.name, to_string(present), first.source(), to_string(missing),
                              why_missing(missing, m)));
    }
    return std::move(set_);
  }

 private:
  // The samples of `m`'s name, added in first-seen order.
  MetricSamples& metric(const JournalMetric& m) {
    auto [it, inserted] = index_.try_emplace(m.name, set_.metrics.size());
    if (inserted) set_.metrics.push_back({m.name, m.unit, m.better, {}, {}});
    return set_.metrics[it->second];
  }

  SampleSet set_;
  std::map<std::string, std::size_t> index_;
};

// "file:line", the Sample::source of a value read from a file.
std::string where(const std::filesystem::path& path, std::size_t line) {
  return fmt::format("{}:{}", path.string(), line);
}

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

const char* to_string(InputFormat format) {
  switch (format) {
    case InputFormat::auto_detect: return "auto";
    case InputFormat::dd: return "dd";
    case InputFormat::fio: return "fio";
    case InputFormat::numbers: return "numbers";
  }
  return "?";
}

std::optional<InputFormat> parse_input_format(std::string_view text) {
  for (auto f : kInputFormats)
    if (text == to_string(f)) return f;
  return std::nullopt;
}

namespace {

// detect_format, keeping what it read of a file of plain numbers in `numbers`.
InputFormat detect(std::string_view text, std::string_view source, std::optional<NumbersRead>& numbers) {
  if (text::trim(text).empty())
    throw Error(located(source, 0, "the file is empty: it holds no measurements"));
  if (looks_like_fio(text)) return InputFormat::fio;
  if (looks_like_dd(text)) return InputFormat::dd;
  NumbersRead read = read_numbers(text, source);
  if (read.first_bad == 0 && read.numbers > 0) {
    numbers = std::move(read);
    return InputFormat::numbers;
  }
  throw Error(located(source, read.first_bad,
                      "cannot tell the format: no fio JSON, no dd summary line, and this line is "
                      "not a number; pass --format dd, --format fio or --format numbers"));
}

}  // namespace

InputFormat detect_format(std::string_view text, std::string_view source) {
  std::optional<NumbersRead> unused;
  return detect(text, source, unused);
}

namespace {

// One input file, read, with the format it is in.
struct InputFile {
  Side side;
  std::filesystem::path path;
  std::string text;                    // "" once `numbers` holds what it says
  InputFormat format;
  std::optional<NumbersRead> numbers;  // plain numbers read by the format's detection
};

// Reads every file and settles the one format first, so that a mix is reported as such.
std::vector<InputFile> read_inputs(const std::vector<std::filesystem::path>& a_files,
                                   const std::vector<std::filesystem::path>& b_files, const InputOptions& options) {
  std::vector<InputFile> inputs;
  for (Side side : {Side::a, Side::b}) {
    for (const auto& path : side == Side::a ? a_files : b_files) {
      std::string content = read_file(path);
      InputFormat format = options.format;
      std::optional<NumbersRead> numbers;
      if (format == InputFormat::auto_detect) format = detect(content, path.string(), numbers);
      if (!inputs.empty() && inputs.front().format != format)
        throw Error(fmt::format("{} is {} input but {} is {}: give files of one kind (or force "
                                "one with --format)",
                                inputs.front().path.string(), to_string(inputs.front().format),
                                path.string(), to_string(format)));
      if (numbers) std::string().swap(content);  // its numbers are all that is needed of it
      inputs.push_back({side, path, std::move(content), format, std::move(numbers)});
    }
  }
  return inputs;
}

// --unit and a direction are for plain numbers, which need a direction.
void check_number_options(InputFormat format, const InputOptions& options) {
  if (format == InputFormat::numbers) {
    if (!options.better)
      throw Error("plain numbers carry no direction: pass --higher-is-better or "
                  "--lower-is-better");
  } else if (options.unit || options.better) {
    throw Error(fmt::format("--unit, --higher-is-better and --lower-is-better are for plain "
                            "numbers only: {} input carries its own units",
                            to_string(format)));
  }
}

Sample file_sample(double value, const std::shared_ptr<const SampleOrigin>& file, std::size_t line,
                   std::int64_t order) {
  return {.value = value, .order = order, .line = sample_line(line), .origin = file};
}

// Adds one file's runs to the builder; next_order counts runs per side across files.
void add_file_samples(Builder& builder, InputFile& in, InputFormat format, const InputOptions& options,
                      std::map<Side, std::int64_t>& next_order) {
  std::string source = in.path.string();
  const auto file = sample_origin(source);
  switch (format) {
    case InputFormat::dd:
      for (const auto& run : parse_dd(in.text, source)) {
        std::int64_t order = next_order[in.side]++;
        builder.add(in.side, {kDdBandwidth, "B/s", Better::higher, run.bandwidth},
                    file_sample(run.bandwidth, file, run.line, order));
        builder.add(in.side, {"dd.seconds", "s", Better::lower, run.seconds},
                    file_sample(run.seconds, file, run.line, order));
        if (!run.partial_records.empty())
          builder.note(located(source, run.line,
                               fmt::format("dd counted partial records (\"{}\"): a short read "
                                           "or a block size that does not divide the data; "
                                           "bandwidth uses the bytes actually copied",
                                           run.partial_records)));
      }
      break;
    case InputFormat::fio:
      for (const auto& doc : parse_fio(in.text, source)) {
        std::int64_t order = next_order[in.side]++;
        for (const auto& job : doc.jobs)
          if (job.error != 0)
            builder.fail({in.side, describe_fio_error(job), to_string(Outcome::workload_failed),
                          where(in.path, doc.line)});
        for (const auto& m : fio_metrics("fio", doc))
          builder.add(in.side, m, file_sample(m.value, file, doc.line, order));
      }
      break;
    case InputFormat::numbers: {
      const JournalMetric m{options.metric.value_or("value"), options.unit.value_or(""), *options.better, 0};
      const std::vector<NumberValue> values =
          values_or_throw(in.numbers ? std::move(*in.numbers) : read_numbers(in.text, source));
      std::vector<Sample>& samples = builder.samples(in.side, m, file_sample(0, file, values.front().line, 0));
      samples.reserve(samples.size() + values.size());
      std::int64_t& order = next_order[in.side];
      for (const auto& v : values) samples.push_back(file_sample(v.value, file, v.line, order++));
      break;
    }
    case InputFormat::auto_detect:
      break;  // settled by read_inputs
  }
}

}  // namespace

SampleSet load_side_files(const std::vector<std::filesystem::path>& a_files,
                          const std::vector<std::filesystem::path>& b_files,
                          const InputOptions& options) {
  if (a_files.empty()) throw Error("no input files for side A: pass --a FILE...");
  if (b_files.empty()) throw Error("no input files for side B: pass --b FILE...");

  std::vector<InputFile> inputs = read_inputs(a_files, b_files, options);
  InputFormat format = inputs.front().format;
  check_number_options(format, options);

  Builder builder;
  std::map<Side, std::int64_t> next_order{{Side::a, 0}, {Side::b, 0}};
  for (auto& in : inputs) add_file_samples(builder, in, format, options, next_order);

  if (format == InputFormat::dd) builder.select(options.metric.value_or(kDdBandwidth));
  else if (format == InputFormat::fio && options.metric) builder.select(*options.metric);

  return builder.finish([&](Side missing, const MetricSamples&) -> std::string {
    std::size_t failed = 0;
    for (const auto& f : builder.set().failures) failed += f.side == missing ? 1 : 0;
    if (failed == 0) return "";
    return fmt::format(" ({} failed job(s) on side {})", failed, to_string(missing));
  }, [](Side, const MetricSamples&) { return false; });
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The runs of the sizing block (run/sizing.hpp) when a later run of some workload ran at another
// scale: they measured other sizes than the rest, and are set aside (with a note saying so).
// Empty when nothing was resized: then the sizing block is analysed like any other.
std::vector<JournalEntry> without_set_aside_block(const std::vector<JournalEntry>& entries,
                                                  std::vector<std::string>& notes) {
  std::map<std::string, std::pair<std::uint64_t, std::string>> sizing;  // workload -> scale, size there
  std::optional<int> block;
  for (const auto& e : entries) {
    if (!e.sizing_block) continue;
    sizing.try_emplace(e.workload, e.scale, e.size);
    block = e.block;
  }
  std::map<std::string, std::string> resized;  // workload -> its later size
  for (const auto& e : entries) {
    const auto it = sizing.find(e.workload);
    if (!e.sizing_block && it != sizing.end() && e.scale != it->second.first) resized.try_emplace(e.workload, e.size);
  }
  if (resized.empty()) return {};
  std::vector<std::string> each;
  for (const auto& [workload, size] : resized) {
    each.push_back(fmt::format("{} ran {} there, {} after", workload, sizing[workload].second, size));
  }
  notes.push_back(fmt::format("block {} sized the runs and is set aside ({}): its runs are not analysed",
                              block ? std::to_string(*block) : "?", fmt::join(each, "; ")));
  std::vector<JournalEntry> kept;
  for (const auto& e : entries) {
    if (!e.sizing_block) kept.push_back(e);
  }
  return kept;
}

// Each workload's run length per side: the size its ok runs ran with and their median time.
void add_run_lengths(const std::vector<JournalEntry>& entries, SideContext& a, SideContext& b) {
  for (const Side side : {Side::a, Side::b}) {
    std::vector<std::pair<RunLength, std::vector<double>>> lengths;
    for (const auto& e : entries) {
      if (e.side != side || e.outcome != Outcome::ok) continue;
      auto it = std::find_if(lengths.begin(), lengths.end(), [&](const auto& l) { return l.first.workload == e.workload; });
      if (it == lengths.end()) it = lengths.insert(lengths.end(), {RunLength{.workload = e.workload}, {}});
      if (!e.size.empty()) it->first.size = e.size;
      ++it->first.runs;
      if (e.timing) it->second.push_back(e.timing->end - e.timing->start);
    }
    for (auto& [length, seconds] : lengths) {
      if (length.size.empty() && seconds.empty()) continue;  // journals that recorded neither
      if (!seconds.empty()) length.median_seconds = median_of(std::move(seconds));
      (side == Side::a ? a : b).run_lengths.push_back(std::move(length));
    }
  }
}

}  // namespace

SampleSet load_journal_samples(const std::vector<JournalEntry>& all) {
  std::vector<std::string> sizing_notes;
  const std::vector<JournalEntry> kept = without_set_aside_block(all, sizing_notes);
  const std::vector<JournalEntry>& entries = sizing_notes.empty() ? all : kept;
  Builder builder;
  for (auto& n : sizing_notes) builder.note(std::move(n));
  add_run_lengths(entries, builder.set().context_a, builder.set().context_b);
  std::map<std::string, std::string> workload_of;  // metric name -> workload
  std::set<std::pair<Side, std::string>> boots_seen;
  std::vector<MissingData> workloads;               // every workload's runs, first-seen order
  std::set<std::string> with_data;                  // workloads with an ok run
  const auto workload_runs = [&](const std::string& name) -> MissingData& {
    const auto it = std::find_if(workloads.begin(), workloads.end(), [&](const MissingData& w) { return w.workload == name; });
    return it != workloads.end() ? *it : workloads.emplace_back(MissingData{.workload = name});
  };
  for (const auto& e : entries) {
    MissingData& runs = workload_runs(e.workload);
    ++(e.side == Side::a ? runs.runs_a : runs.runs_b);
    SideContext& context = e.side == Side::a ? builder.set().context_a : builder.set().context_b;
    if (!e.host.empty()) add_unique(context.hosts, e.host);
    add_unique(context.accelerators, e.accelerator);
    // Every run of a boot repeats its guest's report: count it once per boot.
    if (boots_seen.emplace(e.side, e.boot).second) {
      for (const auto& [name, value] : e.module_params) ++context.module_params[name][value];
      for (const auto& [name, value] : e.facts) ++context.facts[name][value];
    }
    std::string source = fmt::format("trial {} run {}", e.trial, e.run);
    if (e.outcome != Outcome::ok) {
      std::string what = fmt::format("{} run {} of boot {}: {}", e.workload, e.run, e.boot,
                                     to_string(e.outcome));
      if (!e.detail.empty()) what += ": " + e.detail;
      if (runs.first_failure.empty()) runs.first_failure = what;
      builder.fail({e.side, std::move(what), to_string(e.outcome), std::move(source)});
      continue;
    }
    with_data.insert(e.workload);
    const auto origin = sample_origin(std::move(source), {.boot = e.boot, .run_in_boot = e.run, .block = e.block, .host = e.host,
                                     .timing = e.timing,
                                     .overlap = e.overlap ? std::optional<double>(e.overlap->pair) : std::nullopt});
    for (const auto& m : e.metrics) {
      workload_of.try_emplace(m.name, e.workload);
      builder.add(e.side, m, Sample{.value = m.value, .order = e.order, .order_known = true, .origin = origin});
    }
  }
  // Issue 27: what a reader of the cost metrics must know about how they were counted.
  for (std::string& note : cost_notes(entries)) builder.note(std::move(note));
  // A workload none of whose runs was ok on either side has no metric at all: recorded, never dropped.
  for (MissingData& w : workloads) {
    if (!with_data.contains(w.workload)) builder.set().missing.push_back(std::move(w));
  }
  // A side with failed runs of the workload is kept (below), so a missing side here never ran
  // the workload at all: there is no failure to add to the message.
  return builder.finish([](Side, const MetricSamples&) { return std::string(); },
                        [&](Side missing, const MetricSamples& m) {
    // Every run of the workload failed on one side (e.g. B panics at each boot): that is a
    // finding to report, not an input to refuse. Refused only when that side never ran it.
    const std::string& workload = workload_of[m.name];
    return std::any_of(entries.begin(), entries.end(), [&](const JournalEntry& e) {
      return e.side == missing && e.workload == workload && e.outcome != Outcome::ok;
    });
  });
}

SampleSet load_results_dir(const std::filesystem::path& dir) { return JournalSamplesReader(dir).samples(); }

JournalSamplesReader::JournalSamplesReader(const std::filesystem::path& dir)
    : dir_(dir), journal_(ResultsDir(dir).journal()) {}

SampleSet JournalSamplesReader::samples() {
  const std::filesystem::path journal = ResultsDir(dir_).journal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(journal, ec))
    throw Error(located(dir_.string(), 0,
                        "no journal.jsonl here: is this an abvm results directory? (abvm analyze "
                        "DIR reads DIR/journal.jsonl)"));
  const std::string source = journal.string();
  std::vector<std::string> notes;
  std::optional<JournalEntry> unfinished;  // a last line still being written: this read's only
  journal_.read(
      [&](std::string_view line, std::size_t line_no) { finished_.push_back(parse_journal_line(line, source, line_no)); },
      [&](std::string_view line, std::size_t line_no) { unfinished = parse_journal_line(line, source, line_no); },
      [&](const std::string& note) { notes.push_back(note); });
  if (finished_.empty() && !unfinished)
    throw Error(located(journal.string(), 0, "the journal holds no runs yet: nothing to analyze"));
  SampleSet set;
  if (unfinished) {  // rare (a writer killed mid-line): a copy keeps finished_ as it was on any throw
    std::vector<JournalEntry> entries = finished_;
    entries.push_back(std::move(*unfinished));
    set = load_journal_samples(entries);
  } else {
    set = load_journal_samples(finished_);
  }
  set.notes.insert(set.notes.end(), notes.begin(), notes.end());
  return set;
}

}  // namespace abvm
