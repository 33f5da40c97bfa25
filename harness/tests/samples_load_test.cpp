// Tests of samples/load.hpp: format detection, files -> SampleSet for each format, metric
// selection, one-sided metrics, and journals -> SampleSet.
#include "samples/load.hpp"

#include <gtest/gtest.h>

#include "core/files.hpp"
#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data;
using test::data_text;
using test::error_of;

const MetricSamples* find(const SampleSet& set, const std::string& name) {
  for (const auto& m : set.metrics)
    if (m.name == name) return &m;
  return nullptr;
}

TEST(Load, DetectsFormats) {
  EXPECT_EQ(detect_format(data_text("seed/dd-with-patches.txt"), "s"), InputFormat::dd);
  EXPECT_EQ(detect_format(data_text("fio/two-jobs.json"), "f"), InputFormat::fio);
  EXPECT_EQ(detect_format(data_text("numbers/latency-a.txt"), "n"), InputFormat::numbers);
  EXPECT_EQ(detect_format(data_text("numbers/nan.txt"), "n"), InputFormat::numbers);
  EXPECT_EQ(error_of([] { detect_format(data_text("numbers/unit-on-line.txt"), "u.txt"); }),
            "u.txt:2: cannot tell the format: no fio JSON, no dd summary line, and this line is "
            "not a number; pass --format dd, --format fio or --format numbers");
  EXPECT_EQ(error_of([] { detect_format(data_text("dd/busybox-no-summary.txt"), "b.txt"); }),
            "b.txt:1: cannot tell the format: no fio JSON, no dd summary line, and this line is "
            "not a number; pass --format dd, --format fio or --format numbers");
  EXPECT_EQ(error_of([] { detect_format(" \n\n", "e.txt"); }),
            "e.txt: the file is empty: it holds no measurements");
}

TEST(Load, FormatNames) {
  for (auto f : {InputFormat::auto_detect, InputFormat::dd, InputFormat::fio, InputFormat::numbers})
    EXPECT_EQ(parse_input_format(to_string(f)), f);
  EXPECT_FALSE(parse_input_format("json").has_value());
}

TEST(Load, SeedDd) {
  auto a = data("seed/dd-without-patches.txt");
  auto b = data("seed/dd-with-patches.txt");
  SampleSet set = load_side_files({a}, {b}, {});
  ASSERT_EQ(set.metrics.size(), 1u);
  const MetricSamples& m = set.metrics[0];
  EXPECT_EQ(m.name, "dd.bandwidth");
  EXPECT_EQ(m.unit, "B/s");
  EXPECT_EQ(m.better, Better::higher);
  ASSERT_EQ(m.a.size(), 10u);
  ASSERT_EQ(m.b.size(), 10u);
  EXPECT_DOUBLE_EQ(m.a[0].value, 8589934592 / 1.95557);
  EXPECT_DOUBLE_EQ(m.b[4].value, 8589934592 / 7.50199);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(m.a[i].order, static_cast<std::int64_t>(i));
    EXPECT_EQ(m.b[i].order, static_cast<std::int64_t>(i));
    EXPECT_FALSE(m.a[i].order_known);
    EXPECT_FALSE(m.a[i].run().boot.has_value());
    EXPECT_FALSE(m.b[i].run().block.has_value());
  }
  EXPECT_EQ(m.a[1].source(), a.string() + ":11");
  EXPECT_TRUE(set.failures.empty());
  EXPECT_TRUE(set.notes.empty());
  EXPECT_TRUE(set.context_a.hosts.empty());
}

TEST(Load, DdSecondsOnRequestAndOrderAcrossFiles) {
  InputOptions options;
  options.metric = "dd.seconds";
  SampleSet set = load_side_files({data("dd/gnu-1G-4.txt"), data("dd/gnu-five-runs.txt")},
                                  {data("dd/gnu-1M-64.txt")}, options);
  ASSERT_EQ(set.metrics.size(), 1u);
  EXPECT_EQ(set.metrics[0].name, "dd.seconds");
  EXPECT_EQ(set.metrics[0].unit, "s");
  EXPECT_EQ(set.metrics[0].better, Better::lower);
  ASSERT_EQ(set.metrics[0].a.size(), 6u);
  EXPECT_EQ(set.metrics[0].a[0].value, 3.65079);
  EXPECT_EQ(set.metrics[0].a[5].value, 0.0172474);
  EXPECT_EQ(set.metrics[0].a[5].order, 5);
  options.metric = "dd.iops";
  EXPECT_EQ(error_of([&] {
              load_side_files({data("dd/gnu-1G-4.txt")}, {data("dd/gnu-1M-64.txt")}, options);
            }),
            "no metric \"dd.iops\" in the input; --metric can be one of: dd.bandwidth, dd.seconds");
}

TEST(Load, PartialRecordsBecomeNotes) {
  auto partial = data("dd/gnu-partial-1K.txt");
  SampleSet set = load_side_files({partial}, {data("dd/gnu-1M-64.txt")}, {});
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_EQ(set.notes[0], partial.string() +
                              ":3: dd counted partial records (\"1024+1 records in\"): a short "
                              "read or a block size that does not divide the data; bandwidth "
                              "uses the bytes actually copied");
}

TEST(Load, FioMetricMissingOnOneSide) {
  auto two_jobs = data("fio/two-jobs.json");
  auto failing = data("fio/error-devfull.json");
  InputOptions options;
  options.metric = "fio.okjob.write.bandwidth";
  EXPECT_EQ(error_of([&] { load_side_files({two_jobs}, {failing}, options); }),
            "metric \"fio.okjob.write.bandwidth\" has samples on side B only (first at " +
                failing.string() +
                ":4); side A has none: compare the same measurement on both sides, or pick one "
                "both have with --metric");
  // When the side without samples had failed jobs, the message says so.
  auto seqwrite = data("fio/seqwrite.json");
  options.metric = "fio.seqwrite.write.bandwidth";
  EXPECT_EQ(error_of([&] { load_side_files({seqwrite}, {failing}, options); }),
            "metric \"fio.seqwrite.write.bandwidth\" has samples on side A only (first at " +
                seqwrite.string() +
                ":1); side B has none (1 failed job(s) on side B): compare the same measurement "
                "on both sides, or pick one both have with --metric");
}

TEST(Load, FioSameJobOnBothSides) {
  auto one = data("fio/two-documents.json");
  auto other = data("fio/seqwrite.json");
  SampleSet set = load_side_files({one}, {other, data("fio/seqwrite-jsonplus.json")}, {});
  ASSERT_EQ(set.metrics.size(), 5u);
  const MetricSamples* bw = find(set, "fio.seqwrite.write.bandwidth");
  ASSERT_NE(bw, nullptr);
  EXPECT_EQ(bw->unit, "B/s");
  ASSERT_EQ(bw->a.size(), 2u);  // two documents = two runs
  EXPECT_EQ(bw->a[1].order, 1);
  EXPECT_EQ(bw->a[1].source(), one.string() + ":270");
  ASSERT_EQ(bw->b.size(), 2u);
  EXPECT_EQ(bw->b[0].value, 2396745142.0);
  EXPECT_EQ(bw->b[1].value, 3355443200.0);
  const MetricSamples* p99 = find(set, "fio.seqwrite.write.clat_p99");
  ASSERT_NE(p99, nullptr);
  EXPECT_EQ(p99->better, Better::lower);
  EXPECT_EQ(p99->b[0].value, 1368064.0);

  InputOptions options;
  options.metric = "fio.seqwrite.write.iops";
  SampleSet one_metric = load_side_files({one}, {other}, options);
  ASSERT_EQ(one_metric.metrics.size(), 1u);
  EXPECT_EQ(one_metric.metrics[0].b.at(0).value, 2285.714286);
}

TEST(Load, FioErrorJobIsAFailureAndNotASample) {
  auto failing = data("fio/error-devfull.json");
  SampleSet set = load_side_files({failing}, {failing}, {});
  ASSERT_EQ(set.failures.size(), 2u);
  EXPECT_EQ(set.failures[0].side, Side::a);
  EXPECT_EQ(set.failures[1].side, Side::b);
  EXPECT_EQ(set.failures[0].what, "fio job 'fulljob' reported error 28 (No space left on device)");
  EXPECT_EQ(set.failures[0].outcome, "workload-failed");
  EXPECT_EQ(set.failures[0].source, failing.string() + ":4");
  for (const auto& m : set.metrics) EXPECT_EQ(m.name.find("fulljob"), std::string::npos);
  EXPECT_EQ(set.metrics.size(), 5u);
}

TEST(Load, MetricOnOneSideOnly) {
  auto a = data("fio/two-jobs.json");
  auto b = data("fio/seqwrite.json");
  EXPECT_EQ(error_of([&] { load_side_files({a}, {b}, {}); }),
            "metric \"fio.seqread.read.bandwidth\" has samples on side A only (first at " +
                a.string() +
                ":2); side B has none: compare the same measurement on both sides, or pick one "
                "both have with --metric");
}

TEST(Load, Numbers) {
  InputOptions options;
  options.metric = "latency";
  options.unit = "ms";
  options.better = Better::lower;
  auto a = data("numbers/latency-a.txt");
  SampleSet set = load_side_files({a}, {data("numbers/latency-b.txt")}, options);
  ASSERT_EQ(set.metrics.size(), 1u);
  EXPECT_EQ(set.metrics[0].name, "latency");
  EXPECT_EQ(set.metrics[0].unit, "ms");
  EXPECT_EQ(set.metrics[0].better, Better::lower);
  ASSERT_EQ(set.metrics[0].a.size(), 5u);
  ASSERT_EQ(set.metrics[0].b.size(), 3u);
  EXPECT_EQ(set.metrics[0].a[4].value, 12.9);
  EXPECT_EQ(set.metrics[0].a[4].order, 4);
  EXPECT_EQ(set.metrics[0].a[4].source(), a.string() + ":7");
  EXPECT_EQ(set.metrics[0].b[2].value, 13.9);

  // Defaults: metric "value", no unit.
  InputOptions bare;
  bare.better = Better::higher;
  SampleSet plain = load_side_files({a}, {a}, bare);
  EXPECT_EQ(plain.metrics.at(0).name, "value");
  EXPECT_EQ(plain.metrics.at(0).unit, "");
}

TEST(Load, NumbersErrors) {
  auto a = data("numbers/latency-a.txt");
  EXPECT_EQ(error_of([&] { load_side_files({a}, {a}, {}); }),
            "plain numbers carry no direction: pass --higher-is-better or --lower-is-better");
  InputOptions options;
  options.better = Better::higher;
  auto nan = data("numbers/nan.txt");
  EXPECT_EQ(error_of([&] { load_side_files({a}, {nan}, options); }),
            nan.string() +
                ":2: \"nan\" is not a finite number: remove the line or replace it with the "
                "measured value");
  auto empty = data("numbers/empty.txt");
  EXPECT_EQ(error_of([&] { load_side_files({a}, {empty}, options); }),
            empty.string() + ": the file is empty: it holds no measurements");
  options.format = InputFormat::numbers;
  EXPECT_EQ(error_of([&] { load_side_files({a}, {empty}, options); }),
            empty.string() + ": no values: write one number per line");
}

TEST(Load, UsageErrors) {
  auto dd = data("seed/dd-with-patches.txt");
  auto numbers = data("numbers/latency-a.txt");
  EXPECT_EQ(error_of([&] { load_side_files({}, {dd}, {}); }),
            "no input files for side A: pass --a FILE...");
  EXPECT_EQ(error_of([&] { load_side_files({dd}, {}, {}); }),
            "no input files for side B: pass --b FILE...");
  InputOptions numeric;
  numeric.better = Better::higher;
  EXPECT_EQ(error_of([&] { load_side_files({dd}, {numbers}, numeric); }),
            dd.string() + " is dd input but " + numbers.string() +
                " is numbers: give files of one kind (or force one with --format)");
  InputOptions unit;
  unit.unit = "MB/s";
  EXPECT_EQ(error_of([&] { load_side_files({dd}, {dd}, unit); }),
            "--unit, --higher-is-better and --lower-is-better are for plain numbers only: dd "
            "input carries its own units");
  InputOptions forced;
  forced.format = InputFormat::fio;
  EXPECT_EQ(error_of([&] { load_side_files({dd}, {dd}, forced); }),
            dd.string() +
                ": no fio JSON document (a line starting with '{'): run fio with "
                "--output-format=json, or choose another --format");
  auto missing = data("numbers/does-not-exist.txt");
  EXPECT_EQ(error_of([&] { load_side_files({missing}, {dd}, {}); }),
            missing.string() + ": cannot open: No such file or directory");
}

TEST(Load, ResultsDirectory) {
  SampleSet set = load_results_dir(data("journal/results-ok"));
  ASSERT_EQ(set.metrics.size(), 1u);
  const MetricSamples& m = set.metrics[0];
  EXPECT_EQ(m.name, "dd-write.bandwidth");
  EXPECT_EQ(m.unit, "B/s");
  ASSERT_EQ(m.a.size(), 3u);
  ASSERT_EQ(m.b.size(), 2u);
  EXPECT_EQ(m.a[0].value, 4.39e9);
  EXPECT_EQ(m.a[2].value, 1.6e9);
  EXPECT_EQ(m.a[2].order, 4);
  EXPECT_TRUE(m.a[2].order_known);
  EXPECT_EQ(m.a[2].run().boot, "t0003");
  EXPECT_EQ(m.a[2].run().run_in_boot, 1);
  EXPECT_EQ(m.a[2].run().block, 1);
  EXPECT_EQ(m.a[2].source(), "trial t0003 run 1");
  EXPECT_EQ(m.b[1].order, 2);
  EXPECT_EQ(m.b[1].run().boot, "t0002");
  ASSERT_EQ(set.failures.size(), 1u);
  EXPECT_EQ(set.failures[0].side, Side::b);
  EXPECT_EQ(set.failures[0].outcome, "panic");
  EXPECT_EQ(set.failures[0].what,
            "dd-write run 0 of boot t0004: panic: Kernel panic - not syncing: VFS: Unable to "
            "mount root fs");
  EXPECT_EQ(set.failures[0].source, "trial t0004 run 0");
  EXPECT_EQ(set.context_a.hosts, std::vector<std::string>{"hostA"});
  EXPECT_EQ(set.context_b.hosts, (std::vector<std::string>{"hostA", "hostB"}));
  EXPECT_EQ(set.context_b.accelerators, std::vector<Accelerator>{Accelerator::tcg});
  EXPECT_TRUE(set.notes.empty());
}

TEST(Load, ResultsDirectoryWithKilledWriter) {
  auto dir = data("journal/results-truncated");
  SampleSet set = load_results_dir(dir);
  EXPECT_EQ(set.metrics.at(0).b.size(), 2u);
  EXPECT_TRUE(set.failures.empty());  // the panic line was the unfinished one
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_EQ(set.notes[0], (dir / "journal.jsonl").string() +
                              ":6: unfinished last line ignored (its writer was stopped mid-line)");
}

TEST(Load, ResultsDirectoryErrors) {
  auto not_results = data("numbers");
  EXPECT_EQ(error_of([&] { load_results_dir(not_results); }),
            not_results.string() +
                ": no journal.jsonl here: is this an abvm results directory? (abvm analyze DIR "
                "reads DIR/journal.jsonl)");
  test::TempDir dir("load-empty");
  write_file_atomic(dir.path() / "journal.jsonl", "");
  EXPECT_EQ(error_of([&] { load_results_dir(dir.path()); }),
            (dir.path() / "journal.jsonl").string() +
                ": the journal holds no runs yet: nothing to analyze");
}

TEST(Load, JournalSideWithOnlyFailures) {
  auto entries = read_journal(data("journal/results-ok/journal.jsonl"));
  // Keep side A's runs and B's panic only.
  std::vector<JournalEntry> kept;
  for (const auto& e : entries)
    if (e.side == Side::a || e.outcome != Outcome::ok) kept.push_back(e);
  // A side whose every run failed is a finding (the analysis says so), not an input to refuse.
  const SampleSet s = load_journal_samples(kept);
  ASSERT_EQ(s.metrics.size(), 1u);
  EXPECT_EQ(s.metrics[0].name, "dd-write.bandwidth");
  EXPECT_FALSE(s.metrics[0].a.empty());
  EXPECT_TRUE(s.metrics[0].b.empty());
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].side, Side::b);
  EXPECT_EQ(s.failures[0].outcome, "panic");

  // A side that never ran the workload at all is still a different measurement: refused.
  std::vector<JournalEntry> a_only;
  for (const auto& e : entries)
    if (e.side == Side::a) a_only.push_back(e);
  EXPECT_EQ(error_of([&] { load_journal_samples(a_only); }).substr(0, 60),
            std::string("metric \"dd-write.bandwidth\" has samples on side A only (first").substr(0, 60));
}

// Issue 26 (run/sizing.hpp): the sizing block's runs are left out, with a note naming both sizes,
// only when a later run ran at another scale; a version 1 journal (no sizes) loads as it did.
TEST(Load, TheSizingBlockIsSetAsideOnlyWhenAWorkloadWasResized) {
  const auto old = read_journal(data("journal/results-ok/journal.jsonl"));
  const SampleSet plain = load_journal_samples(old);
  EXPECT_TRUE(plain.context_a.run_lengths.empty()) << "nothing recorded, nothing shown";
  const auto sized = [&](std::uint64_t later_scale) {
    std::vector<JournalEntry> out = old;
    for (JournalEntry& e : out) {
      e.sizing_block = e.block == 0;
      e.scale = e.block == 0 ? 1 : later_scale;
      e.size = e.block == 0 ? "bs=8M count=16" : later_scale == 1 ? "bs=8M count=16" : "bs=8M count=48";
    }
    return out;
  };
  const auto count = [](const SampleSet& s) { return s.metrics[0].a.size() + s.metrics[0].b.size(); };
  const SampleSet kept = load_journal_samples(sized(1));
  EXPECT_EQ(count(kept), count(plain));
  EXPECT_TRUE(kept.notes.empty());
  const SampleSet set_aside = load_journal_samples(sized(3));
  std::size_t in_block_0 = 0;
  for (const auto& e : old) in_block_0 += e.block == 0 && e.outcome == Outcome::ok ? 1 : 0;
  ASSERT_GT(in_block_0, 0u);
  EXPECT_EQ(count(set_aside), count(plain) - in_block_0);
  for (const Sample& x : set_aside.metrics[0].a) EXPECT_NE(x.run().block, 0);
  ASSERT_EQ(set_aside.notes.size(), 1u);
  EXPECT_EQ(set_aside.notes[0], "block 0 sized the runs and is set aside (dd-write ran bs=8M count=16 there, bs=8M "
                                "count=48 after): its runs are not analysed");
  ASSERT_EQ(set_aside.context_a.run_lengths.size(), 1u);
  EXPECT_EQ(set_aside.context_a.run_lengths[0].size, "bs=8M count=48");
}

// A workload every run of which failed on both sides gives no metric at all: it is recorded as
// missing with its runs and its first failure, never silently absent (issue 20).
TEST(Load, JournalWorkloadWithEveryRunFailedIsMissingNotAbsent) {
  auto entries = read_journal(data("journal/results-ok/journal.jsonl"));
  const auto ok = entries;
  for (const auto& e : ok) {
    JournalEntry failed = e;
    failed.workload = "dd-read";
    failed.outcome = Outcome::workload_failed;
    failed.metrics.clear();
    failed.detail = "dd-read run 0 exited with status 1: dd: failed to open '/dev/null': Invalid argument";
    entries.push_back(failed);
  }
  const SampleSet s = load_journal_samples(entries);
  ASSERT_EQ(s.metrics.size(), 1u);
  EXPECT_EQ(s.metrics[0].name, "dd-write.bandwidth");
  ASSERT_EQ(s.missing.size(), 1u);
  const MissingData& d = s.missing[0];
  EXPECT_EQ(d.workload, "dd-read");
  EXPECT_TRUE(d.metrics.empty());
  EXPECT_EQ(d.runs_a, 3u);
  EXPECT_EQ(d.runs_b, 3u);
  EXPECT_EQ(d.first_failure, "dd-read run 0 of boot t0000: workload-failed: dd-read run 0 exited with status 1: dd: "
                             "failed to open '/dev/null': Invalid argument");
  EXPECT_TRUE(d.reported.empty());
  // A workload with one valid run is not missing (a one-sided metric is the analysis's to judge).
  EXPECT_TRUE(load_journal_samples(ok).missing.empty());
}

// Each side's context counts what its guests reported once per boot, whatever the number of
// runs in the boot; entries without a guest report (older journals) add nothing.
TEST(Load, JournalModuleParamsPerSideCountBoots) {
  // A: boots t0000 and t0003 (two runs); B: boots t0001, t0002 and t0004 (a panic).
  auto entries = read_journal(data("journal/results-ok/journal.jsonl"));
  for (auto& e : entries) {
    e.module_params = {{"virtio_blk.queue_depth", e.side == Side::b ? "1" : "0"}};
    if (e.boot == "t0004") e.module_params["virtio_blk.queue_depth"] = "2";
  }
  const SampleSet s = load_journal_samples(entries);
  using Counts = std::map<std::string, std::map<std::string, int>>;
  EXPECT_EQ(s.context_a.module_params, (Counts{{"virtio_blk.queue_depth", {{"0", 2}}}}));
  EXPECT_EQ(s.context_b.module_params, (Counts{{"virtio_blk.queue_depth", {{"1", 2}, {"2", 1}}}}));

  for (auto& e : entries) e.module_params.clear();
  EXPECT_TRUE(load_journal_samples(entries).context_a.module_params.empty());
}

TEST(Load, JournalMetricWithChangingUnit) {
  auto entries = read_journal(data("journal/results-ok/journal.jsonl"));
  entries[3].metrics[0].unit = "MB/s";
  EXPECT_EQ(error_of([&] { load_journal_samples(entries); }),
            "trial t0003 run 0: metric \"dd-write.bandwidth\" is MB/s (higher is better) here but "
            "B/s (higher is better) before: one metric name must keep one unit and direction");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// A run's timing and its pair's overlap reach its samples, for the analysis and the plots; runs
// without them have none.
TEST(Load, JournalTimingAndPairOverlapReachTheSamples) {
  auto entries = read_journal(test::data("journal/results-ok/journal.jsonl"));
  ASSERT_GE(entries.size(), 2u);
  entries[0].timing = RunTiming{.go = 100.0, .start = 100.5, .end = 101.5, .load_end = 102.0, .clock_error = 0.01};
  entries[0].overlap = RunOverlap{.partner = "t0002", .run = 0.97, .pair = 0.8};
  const SampleSet set = load_journal_samples(entries);
  const RunFacts& first = set.metrics.at(0).a.at(0).run();
  ASSERT_TRUE(first.overlap.has_value());
  EXPECT_EQ(*first.overlap, 0.8) << "the pair's, not the run's own share";
  EXPECT_EQ(first.timing, entries[0].timing);
  EXPECT_FALSE(set.metrics[0].a.at(1).run().overlap.has_value());
  EXPECT_FALSE(set.metrics[0].a.at(1).run().timing.has_value());

  const SampleSet fixture = load_results_dir(test::data("report/results-co-scheduled"));
  const RunFacts& s = fixture.metrics.at(0).a.at(0).run();  // t0000 run 0, the journal's first line
  ASSERT_TRUE(s.timing && s.overlap);
  EXPECT_EQ(*s.overlap, 0.9969);
  EXPECT_EQ(s.timing->go, 1764446405.0);
  EXPECT_EQ(s.timing->start, 1764446405.001);
  EXPECT_EQ(s.timing->load_end, 1764446406.07121);
}

// ---- JournalSamplesReader: the journal read as it grows ----

// What a SampleSet says, in one text, to compare two of them whole.
std::string describe(const SampleSet& set) {
  std::string out;
  for (const MetricSamples& m : set.metrics) {
    out += m.name + " " + m.unit + "\n";
    for (const auto* side : {&m.a, &m.b}) {
      for (const Sample& s : *side) {
        const RunFacts& run = s.run();
        out += std::to_string(s.value) + " " + std::to_string(s.order) + " " + run.boot.value_or("-") + " " +
               std::to_string(run.block.value_or(-1)) + " " + std::to_string(run.overlap.value_or(-1)) + " " +
               s.source() + "\n";
      }
      out += "|\n";
    }
  }
  for (const FailedRun& f : set.failures) out += "failed " + f.what + "\n";
  for (const MissingData& d : set.missing) out += "missing " + d.workload + "\n";
  for (const std::string& h : set.context_a.hosts) out += "host A " + h + "\n";
  for (const std::string& h : set.context_b.hosts) out += "host B " + h + "\n";
  for (const std::string& n : set.notes) out += "note " + n + "\n";
  return out;
}

// What a read gives: its SampleSet described, or its Error's message (a journal whose runs so far
// are all on one side is refused, by every reader alike).
template <typename Read>
std::string outcome_of(Read&& read) {
  try {
    return describe(read());
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

// The journal's text cut after its n-th '\n' (all of it when it has fewer).
std::string first_lines(const std::string& text, std::size_t n) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < n && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

TEST(JournalSamplesReader, EachReadGivesWhatAWholeReadGives) {
  const std::string journal = data_text("report/results-co-scheduled/journal.jsonl");
  test::TempDir dir("reader-grows");
  const auto path = dir.path() / "journal.jsonl";
  JournalSamplesReader reader(dir.path());
  int notes_checked = 0;
  // Lines arrive a few at a time, once with a line half written (its writer is still at it).
  for (std::size_t lines : {1u, 5u, 6u, 20u, 47u, 64u}) {
    std::string text = first_lines(journal, lines);
    write_file_atomic(path, text);
    EXPECT_EQ(outcome_of([&] { return reader.samples(); }), outcome_of([&] { return load_results_dir(dir.path()); }))
        << lines << " lines";
    const std::string next = first_lines(journal, lines + 1).substr(text.size());
    if (next.empty()) continue;
    write_file_atomic(path, text + next.substr(0, next.size() / 2));
    const std::string half = outcome_of([&] { return reader.samples(); });
    EXPECT_EQ(half, outcome_of([&] { return load_results_dir(dir.path()); })) << lines << " lines and a half";
    if (half.starts_with("error: ")) continue;  // a metric with no run on side B yet
    ++notes_checked;
    EXPECT_NE(half.find("note " + path.string() + ":" + std::to_string(lines + 1) +
                        ": unfinished last line ignored (its writer was stopped mid-line)"),
              std::string::npos)
        << half;
  }
  EXPECT_GE(notes_checked, 2);
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(test::data("report/results-co-scheduled"))));
}

TEST(JournalSamplesReader, AJournalThatHasLinesAlreadyIsReadWholeFirst) {
  // A resumed run: the first look meets the runs of the earlier sessions.
  JournalSamplesReader reader(data("journal/results-ok"));
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(data("journal/results-ok"))));
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(data("journal/results-ok"))));
  JournalSamplesReader killed(data("journal/results-truncated"));
  EXPECT_EQ(describe(killed.samples()), describe(load_results_dir(data("journal/results-truncated"))));
}

TEST(JournalSamplesReader, AnUnfinishedLineThatParsesCountsUntilItsNewlineAndThenOnce) {
  const std::string journal = first_lines(data_text("journal/results-ok/journal.jsonl"), 3);
  test::TempDir dir("reader-unterminated");
  const auto path = dir.path() / "journal.jsonl";
  write_file_atomic(path, journal.substr(0, journal.size() - 1));  // the last '\n' not yet written
  JournalSamplesReader reader(dir.path());
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(dir.path())));
  write_file_atomic(path, journal);
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(dir.path())));
  EXPECT_EQ(describe(reader.samples()), describe(load_results_dir(dir.path())));
}

TEST(JournalSamplesReader, KeepsTheJournalsErrors) {
  test::TempDir dir("reader-errors");
  const auto path = dir.path() / "journal.jsonl";
  JournalSamplesReader reader(dir.path());
  EXPECT_EQ(error_of([&] { reader.samples(); }),
            dir.path().string() + ": no journal.jsonl here: is this an abvm results directory? (abvm analyze DIR "
                                  "reads DIR/journal.jsonl)");
  write_file_atomic(path, "");
  EXPECT_EQ(error_of([&] { reader.samples(); }), path.string() + ": the journal holds no runs yet: nothing to analyze");
  const std::string good = first_lines(data_text("journal/results-ok/journal.jsonl"), 2);
  write_file_atomic(path, good + "{\"damaged\n");
  const std::string damage = error_of([&] { load_results_dir(dir.path()); });
  EXPECT_NE(damage.find(path.string() + ":3: "), std::string::npos) << damage;
  // A damaged line is met again at every read, not skipped after the first.
  EXPECT_EQ(error_of([&] { reader.samples(); }), damage);
  EXPECT_EQ(error_of([&] { reader.samples(); }), damage);
  write_file_atomic(path, "");
  EXPECT_NE(error_of([&] { reader.samples(); }).find("replaced or truncated"), std::string::npos);
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

JournalEntry costed_run(const std::string& trial, Side side, std::uint64_t disk_bytes) {
  JournalEntry e{.trial = trial, .side = side, .boot = trial, .workload = "dd-write"};
  e.metrics = {{"dd-write.bandwidth", "B/s", Better::higher, 1e9}};
  e.cost = RunCost{.tool_bytes = 1000, .host = HostWindowCost{.cpu_seconds = 1, .disk_bytes = disk_bytes}};
  return e;
}

// The one note the sample set of `entries` holds (every note, when it holds another number of them).
std::string only_note(const std::vector<JournalEntry>& entries) {
  const SampleSet s = load_journal_samples(entries);
  return s.notes.size() == 1 ? s.notes[0] : "notes: " + ::testing::PrintToString(s.notes);
}

// Issue 27: a window whose disk received less than 0.95 x the tool's bytes is said, once per workload
// and side with how many and the first; runs without a cost (older journals) say nothing.
TEST(Load, AWindowWhoseDiskSawTooFewBytesIsANote) {
  std::vector<JournalEntry> entries{costed_run("t0000", Side::a, 1000), costed_run("t0001", Side::b, 500),
                                    costed_run("t0002", Side::b, 100), costed_run("t0003", Side::a, 1000)};
  entries[3].cost.reset();
  EXPECT_EQ(only_note(entries),
            "dd-write on side B: in 2 window(s) (first trial t0001 run 0) the disk received less than 0.95 x the bytes "
            "the tool reports: a cache is in the way, and the host's cost per GiB of those windows is per byte that "
            "reached it");
}

// Issue 27: runs whose window has no host cost are counted per workload and side, with the first
// one's reason; a run with the host's cost, or with none sampled at all, is not one of them.
TEST(Load, RunsWithoutTheHostsCostAreANoteWithTheFirstReason) {
  std::vector<JournalEntry> entries{costed_run("t0000", Side::a, 1000), costed_run("t0001", Side::a, 1000),
                                    costed_run("t0002", Side::a, 1000), costed_run("t0003", Side::b, 1000)};
  for (const std::size_t k : {1u, 2u}) entries[k].cost->host.reset();
  entries[1].cost->host_missing = "at the go: virDomainListGetStats: the daemon went away";
  entries[2].cost->host_missing = "the window was not closed by a stop";
  entries[3].cost->host.reset();  // nothing sampled, nothing said
  EXPECT_EQ(only_note(entries),
            "dd-write on side A: 2 of 3 run(s) have no host cost (first trial t0001 run 0: at the go: "
            "virDomainListGetStats: the daemon went away): the host's CPU per GiB and per request leave them out");
}

// Issue 27: the guest's CPU of a dd run comes in 10 ms ticks; the report says how coarse that is
// against the runs' own count (the upper median, 25 ticks: one is 4 %), and that steal is not seen.
TEST(Load, TheGuestsTicksAreSaidWithTheShareOneTickIsOfARun) {
  std::vector<JournalEntry> entries;
  for (const std::uint64_t busy : {30u, 10u, 20u, 25u}) {  // both sides' runs: a median of 22.5, taken as 25
    const Side side = entries.size() % 2 == 0 ? Side::a : Side::b;
    entries.push_back(costed_run("t000" + std::to_string(entries.size()), side, 1000));
    entries.back().cost->guest_ticks = GuestTicks{.busy = busy, .all = 100};
  }
  EXPECT_EQ(only_note(entries),
            "dd-write: the guest's CPU is counted from its /proc/stat in 10 ms ticks, a median of 25 busy tick(s) a "
            "run, so one tick is 4.0 % of a run's figure; steal stays 0 where the hypervisor does not report it (TCG), "
            "so CPU the host took from the guest is not seen");
}

// How the host's CPU was counted is said per workload and side where a reader must know: windows in
// the process's 10 ms ticks, with the share one tick is of their median CPU (0.25 s, of 0.1, 0.25,
// 0.4: 4 %), and windows in which a thread of the QEMU ended.
TEST(Load, WindowsInTicksAndWindowsWhoseQemuThreadEndedAreNotes) {
  std::vector<JournalEntry> entries;
  for (const double cpu : {0.1, 0.25, 0.4, 0.3}) {
    entries.push_back(costed_run("t000" + std::to_string(entries.size()), Side::b, 1000));
    entries.back().cost->host->cpu_seconds = cpu;
    entries.back().cost->host->cpu_clock = entries.size() < 4 ? CpuClock::ticks : CpuClock::schedstat;
  }
  entries.push_back(costed_run("t0004", Side::a, 1000));  // no clock recorded (older journal): nothing said
  EXPECT_EQ(only_note(entries),
            "dd-write on side B: the host's CPU of 3 of 4 window(s) is counted in 10 ms ticks (/proc/<pid>/stat: its "
            "QEMU threads' schedstat was unreadable): one tick is 4.0 % of their median window's 0.250 s");
  for (auto& e : entries) e.cost->host->cpu_clock = CpuClock::schedstat;
  entries[2].cost->host->threads_ended = 1;
  EXPECT_EQ(only_note(entries),
            "dd-write on side B: in 1 of 4 window(s) a thread of its QEMU ended, and its CPU inside the window is not "
            "counted (QEMU's pool workers end after 10 s idle: what one spends in a window is its exit)");
}

}  // namespace
}  // namespace abvm
