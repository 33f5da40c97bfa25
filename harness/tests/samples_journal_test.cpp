// Tests of samples/journal.hpp: the line format, strict parsing with exact messages, reading
// a journal with a killed writer's last line, the version check, and the metric helpers.
#include "samples/journal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/files.hpp"
#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data;
using test::data_text;
using test::error_of;

JournalEntry sample_entry() {
  JournalEntry e;
  e.trial = "t0007";
  e.side = Side::b;
  e.boot = "t0007";
  e.run = 2;
  e.order = 14;
  e.block = 3;
  e.workload = "dd-write";
  e.outcome = Outcome::ok;
  e.host = "hostname";
  e.accelerator = Accelerator::tcg;
  e.time = "2026-11-29T20:01:02Z";
  e.metrics = {{"dd-write.bandwidth", "B/s", Better::higher, 1234567890.125},
               {"dd-write.seconds", "s", Better::lower, 0.1}};
  return e;
}

TEST(Journal, LineFormatIsStable) {
  EXPECT_EQ(to_journal_line(sample_entry()),
            R"({"journal_version":3,"trial":"t0007","side":"B","boot":"t0007","run":2,)"
            R"("order":14,"block":3,"workload":"dd-write","outcome":"ok","host":"hostname",)"
            R"("accelerator":"tcg","time":"2026-11-29T20:01:02Z","metrics":[{"name":)"
            R"("dd-write.bandwidth","unit":"B/s","better":"higher","value":1234567890.125},)"
            R"({"name":"dd-write.seconds","unit":"s","better":"lower","value":0.1}],"detail":""})");
}

TEST(Journal, RoundTrip) {
  JournalEntry e = sample_entry();
  e.detail = "line one\nline \"two\"";  // must stay on one journal line
  std::string line = to_journal_line(e);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  JournalEntry back = parse_journal_line(line, "j", 1);
  EXPECT_EQ(back.journal_version, 3);
  EXPECT_EQ(back.trial, e.trial);
  EXPECT_EQ(back.side, Side::b);
  EXPECT_EQ(back.boot, e.boot);
  EXPECT_EQ(back.run, 2);
  EXPECT_EQ(back.order, 14);
  EXPECT_EQ(back.block, 3);
  EXPECT_EQ(back.workload, e.workload);
  EXPECT_EQ(back.outcome, Outcome::ok);
  EXPECT_EQ(back.host, e.host);
  EXPECT_EQ(back.accelerator, e.accelerator);
  EXPECT_EQ(back.time, e.time);
  EXPECT_EQ(back.detail, e.detail);
  ASSERT_EQ(back.metrics.size(), 2u);
  EXPECT_EQ(back.metrics[0].name, "dd-write.bandwidth");
  EXPECT_EQ(back.metrics[0].unit, "B/s");
  EXPECT_EQ(back.metrics[0].better, Better::higher);
  EXPECT_EQ(back.metrics[0].value, 1234567890.125);  // exact: doubles round-trip
  EXPECT_EQ(back.metrics[1].better, Better::lower);
  EXPECT_EQ(back.metrics[1].value, 0.1);

  // A failed run without a block.
  JournalEntry f = sample_entry();
  f.outcome = Outcome::timeout;
  f.metrics.clear();
  f.block.reset();
  f.detail = "no output within 600 s";
  JournalEntry fb = parse_journal_line(to_journal_line(f), "j", 1);
  EXPECT_EQ(fb.outcome, Outcome::timeout);
  EXPECT_FALSE(fb.block.has_value());
  EXPECT_TRUE(fb.metrics.empty());
}

TEST(Journal, Outcomes) {
  for (Outcome o : {Outcome::ok, Outcome::workload_failed, Outcome::panic, Outcome::timeout,
                    Outcome::infra_error, Outcome::invalid_output})
    EXPECT_EQ(parse_outcome(to_string(o)), o);
  EXPECT_STREQ(to_string(Outcome::workload_failed), "workload-failed");
  EXPECT_STREQ(to_string(Outcome::invalid_output), "invalid-output");
  EXPECT_FALSE(parse_outcome("crashed").has_value());
}

TEST(Journal, NonFiniteValueIsRefused) {
  JournalEntry e = sample_entry();
  e.metrics[0].value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of([&] { to_journal_line(e); }),
            "trial t0007: metric \"dd-write.bandwidth\" has the non-finite value nan: record the "
            "run as invalid-output instead");
}

// Each case: a change to a good line, and the exact message it must give at "j.jsonl:7".
struct BadLine {
  const char* from;
  const char* to;
  const char* message;
};

class JournalBadLine : public ::testing::TestWithParam<BadLine> {};

TEST_P(JournalBadLine, IsRejectedWithFileLineAndField) {
  std::string line = to_journal_line(sample_entry());
  const BadLine& c = GetParam();
  std::size_t at = line.find(c.from);
  ASSERT_NE(at, std::string::npos) << c.from;
  line.replace(at, std::string(c.from).size(), c.to);
  EXPECT_EQ(error_of([&] { parse_journal_line(line, "j.jsonl", 7); }),
            std::string("j.jsonl:7: ") + c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, JournalBadLine,
    ::testing::Values(
        BadLine{R"("trial":"t0007",)", "", R"(field "trial" is missing (a string))"},
        BadLine{R"("boot":"t0007")", R"("boot":7)", R"(field "boot" must be a string, not 7)"},
        BadLine{R"("run":2)", R"("run":"2")", R"(field "run" must be an integer, not "2")"},
        BadLine{R"("run":2)", R"("run":-1)",
                R"(field "run" must be between 0 and 1000000000, not -1)"},
        BadLine{R"("order":14)", R"("order":1.5)",
                R"(field "order" must be an integer, not 1.5)"},
        BadLine{R"("block":3)", R"("block":"x")",
                R"(field "block" must be an integer or null, not "x")"},
        BadLine{R"("side":"B")", R"("side":"C")",
                R"(field "side" must be "A" or "B", not "C")"},
        BadLine{R"("outcome":"ok")", R"("outcome":"crashed")",
                R"(field "outcome" must be one of ok, workload-failed, panic, timeout, infra-error, )"
                R"(invalid-output, mismatch, partner-failed, not "crashed")"},
        BadLine{R"("outcome":"ok")", R"("outcome":"panic")",
                "journal entry has outcome panic but carries metrics: only ok runs have "
                "measurements"},
        BadLine{R"(,"detail":"")", "", R"(field "detail" is missing (a string))"},
        BadLine{R"("host":"hostname",)", "", R"(field "host" is missing (a string))"},
        BadLine{R"("unit":"s",)", "", R"(field "metrics[1].unit" is missing (a string))"},
        BadLine{R"("better":"lower")", R"("better":"down")",
                R"(field "metrics[1].better" must be "higher" or "lower", not "down")"},
        BadLine{R"("value":0.1)", R"("value":null)",
                R"(field "metrics[1].value" must be a number, not null)"},
        BadLine{R"("journal_version":3)", R"("journal_version":"1")",
                R"(field "journal_version" must be an integer, not "1")"},
        BadLine{R"("journal_version":3)", R"("journal_version":0)",
                "journal_version 0 is not valid (versions start at 1)"},
        BadLine{R"("journal_version":3)", R"("journal_version":4)",
                "journal_version 4 is newer than this abvm reads (up to 3): use a newer abvm to "
                "analyze these results"}));

// Version 2: the run's size, its scale and the sizing block (run/sizing.hpp), written only when set
// and read back; version 1 lines (none of them) still load.
TEST(Journal, SizeScaleAndSizingBlockRoundTrip) {
  JournalEntry e = sample_entry();
  e.size = "bs=8M count=80";
  e.scale = 5;
  e.sizing_block = true;
  const std::string line = to_journal_line(e);
  EXPECT_NE(line.find(R"("size":"bs=8M count=80","scale":5,"sizing_block":true)"), std::string::npos) << line;
  const JournalEntry back = parse_journal_line(line, "j", 1);
  EXPECT_EQ(back.size, "bs=8M count=80");
  EXPECT_EQ(back.scale, 5u);
  EXPECT_TRUE(back.sizing_block);
  std::string v1 = to_journal_line(sample_entry());
  v1.replace(v1.find("\"journal_version\":3"), 19, "\"journal_version\":1");
  const JournalEntry old = parse_journal_line(v1, "j", 1);
  EXPECT_EQ(old.journal_version, 1);
  EXPECT_EQ(old.size, "");
  EXPECT_EQ(old.scale, 0u);
  EXPECT_FALSE(old.sizing_block);
  std::string zero = line;
  zero.replace(zero.find("\"scale\":5"), 9, "\"scale\":0");
  EXPECT_THROW(parse_journal_line(zero, "j", 1), Error);
  std::string word = line;
  word.replace(word.find("\"sizing_block\":true"), 19, "\"sizing_block\":1");
  EXPECT_THROW(parse_journal_line(word, "j", 1), Error);
}

TEST(Journal, OkWithoutMetricsAndNotJson) {
  JournalEntry e = sample_entry();
  e.metrics.clear();
  std::string line = to_journal_line(e);
  EXPECT_EQ(error_of([&] { parse_journal_line(line, "j", 3); }),
            "j:3: journal entry has outcome ok but no metrics: an ok run must carry its "
            "measurements");
  EXPECT_EQ(error_of([] { parse_journal_line("[1]", "j", 4); }),
            "j:4: the line must be an object, not [1]");
  EXPECT_EQ(error_of([] { parse_journal_line("{\"trial\":", "j", 5); }),
            "j:5: not JSON (parse error at line 1, column 10: syntax error while parsing value - unexpected end of "
            "input; expected '[', '{', or a literal)");
}

TEST(Journal, UnknownFieldsAreIgnored) {
  std::string line = to_journal_line(sample_entry());
  line.insert(1, R"("console_log":"t0007.log",)");
  EXPECT_EQ(parse_journal_line(line, "j", 1).trial, "t0007");
}

// What the boot's guest reported (issue 14): written only when there is something, read back
// whole, and optional so that journals older than it still load.
TEST(Journal, GuestReportRoundTripsAndIsOptional) {
  JournalEntry e = sample_entry();
  e.kernel_release = "6.1.0-41-cloud-amd64";
  e.module_params = {{"virtio_blk.queue_depth", "1"}, {"virtio_pci.force_legacy", "N"}};
  const std::string line = to_journal_line(e);
  EXPECT_NE(line.find(R"("detail":"","guest":{"kernel_release":"6.1.0-41-cloud-amd64","module_params":)"
                      R"({"virtio_blk.queue_depth":"1","virtio_pci.force_legacy":"N"}}})"),
            std::string::npos)
      << line;
  const JournalEntry back = parse_journal_line(line, "j", 1);
  EXPECT_EQ(back.kernel_release, e.kernel_release);
  EXPECT_EQ(back.module_params, e.module_params);

  const JournalEntry old = parse_journal_line(to_journal_line(sample_entry()), "j", 2);
  EXPECT_TRUE(old.kernel_release.empty());
  EXPECT_TRUE(old.module_params.empty());
  std::string partial = to_journal_line(sample_entry());
  partial.insert(partial.size() - 1, R"(,"guest":{})");
  EXPECT_TRUE(parse_journal_line(partial, "j", 3).module_params.empty());
}

TEST(Journal, GuestReportOfTheWrongShapeIsAnError) {
  const auto with = [](const std::string& guest) {
    std::string line = to_journal_line(sample_entry());
    line.insert(line.size() - 1, ",\"guest\":" + guest);
    return error_of([&] { parse_journal_line(line, "j", 4); });
  };
  EXPECT_EQ(with("[]"), R"(j:4: field "guest" must be an object, not [])");
  EXPECT_EQ(with(R"({"kernel_release":6})"), R"(j:4: field "guest.kernel_release" must be a string, not 6)");
  EXPECT_EQ(with(R"({"module_params":[1]})"), R"(j:4: field "guest.module_params" must be an object, not [1])");
  EXPECT_EQ(with(R"({"module_params":{"virtio_blk.queue_depth":1}})"),
            R"(j:4: field "guest.module_params.virtio_blk.queue_depth" must be a string, not 1)");
}

TEST(Journal, ReadsAWholeJournal) {
  std::vector<std::string> warnings;
  auto entries = read_journal(data("journal/results-ok/journal.jsonl"),
                              [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[4].boot, "t0003");
  EXPECT_EQ(entries[4].run, 1);
  EXPECT_EQ(entries[5].outcome, Outcome::panic);
  EXPECT_EQ(entries[5].detail, "Kernel panic - not syncing: VFS: Unable to mount root fs");
}

TEST(Journal, IgnoresOnlyAnUnfinishedLastLine) {
  std::vector<std::string> warnings;
  auto path = data("journal/results-truncated/journal.jsonl");
  auto entries = read_journal(path, [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_EQ(entries.size(), 5u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], path.string() +
                             ":6: unfinished last line ignored (its writer was stopped mid-line)");
  // Without a callback it is still ignored.
  EXPECT_EQ(read_journal(path).size(), 5u);
}

TEST(Journal, BadLineInTheMiddleIsAnError) {
  auto path = data("journal/bad-middle.jsonl");
  std::string message = error_of([&] { read_journal(path); });
  EXPECT_EQ(message.substr(0, path.string().size() + 35),
            path.string() + ":3: not JSON (parse error at line 1");
}

TEST(Journal, TerminatedBadLastLineIsAnError) {
  test::TempDir dir("journal-last");
  auto path = dir.path() / "journal.jsonl";
  std::string good = to_journal_line(sample_entry());
  write_file_atomic(path, good + "\n" + good.substr(0, 40) + "\n");
  EXPECT_EQ(error_of([&] { read_journal(path); }).substr(0, path.string().size() + 35),
            path.string() + ":2: not JSON (parse error at line 1");
  // The same cut line without its newline is a killed writer.
  write_file_atomic(path, good + "\n" + good.substr(0, 40));
  EXPECT_EQ(read_journal(path).size(), 1u);
}

// Version 3: what the run cost, written only when known and read back whole; a line without it
// (version 2 and older) reads as no cost, never as a cost of zero; a negative figure is an error.
TEST(Journal, CostRoundTripsAndIsAbsentFromOlderLines) {
  JournalEntry e = sample_entry();
  e.cost = RunCost{.tool_bytes = 671088640, .tool_runs = 3, .guest_cpu_seconds = 0.42,
                   .guest_ticks = GuestTicks{.busy = 42, .all = 210}, .fio_ctx = 1203,
                   .host = HostWindowCost{.cpu_seconds = 2.5, .user_seconds = 2, .system_seconds = 0.5,
                                          .vcpu_seconds = 1.75, .disk_bytes = 2013265920, .disk_requests = 240},
                   .host_missing = ""};
  const std::string line = to_journal_line(e);
  EXPECT_NE(line.find(R"("cost":{"tool_bytes":671088640,"tool_runs":3,"guest_cpu":0.42,)"
                      R"("guest_ticks":{"busy":42,"all":210},"fio_ctx":1203,"host":{"cpu":2.5,"user":2.0,)"
                      R"("system":0.5,"vcpu":1.75,"disk_bytes":2013265920,"disk_requests":240}})"),
            std::string::npos)
      << line;
  EXPECT_EQ(parse_journal_line(line, "j", 1).cost, e.cost);
  e.cost = RunCost{.tool_bytes = 8, .host_missing = "virDomainListGetStats: no domain"};
  EXPECT_EQ(parse_journal_line(to_journal_line(e), "j", 1).cost, e.cost);
  std::string v2 = to_journal_line(sample_entry());
  v2.replace(v2.find("\"journal_version\":3"), 19, "\"journal_version\":2");
  EXPECT_FALSE(parse_journal_line(v2, "j", 1).cost);
  std::string negative = line;
  const std::string vcpu = "\"vcpu\":1.75";
  negative.replace(negative.find(vcpu), vcpu.size(), "\"vcpu\":-1.0");
  EXPECT_EQ(error_of([&] { parse_journal_line(negative, "j", 1); }),
            "j:1: field \"cost.host.vcpu\" must be >= 0, not -1");
}

// How the host's CPU was counted rides with it, and a line without it (written before abvm recorded
// it) reads as not known, not as one of the clocks.
TEST(Journal, TheHostsCpuClockRoundTripsAndIsOptional) {
  JournalEntry e = sample_entry();
  e.cost = RunCost{.tool_bytes = 8,
                   .host = HostWindowCost{.cpu_seconds = 0.25, .cpu_clock = CpuClock::schedstat, .threads_ended = 2}};
  const std::string line = to_journal_line(e);
  EXPECT_NE(line.find(R"("host":{"cpu":0.25,"cpu_clock":"schedstat","threads_ended":2,"user":0.0,)"), std::string::npos)
      << line;
  EXPECT_EQ(parse_journal_line(line, "j", 1).cost, e.cost);
  e.cost->host->threads_ended = 0;  // none ended: not written
  EXPECT_EQ(to_journal_line(e).find("threads_ended"), std::string::npos);
  std::string older = line;
  older.erase(older.find(R"("cpu_clock":"schedstat","threads_ended":2,)"), 42);
  const auto cost = parse_journal_line(older, "j", 1).cost;
  ASSERT_TRUE(cost && cost->host);
  EXPECT_FALSE(cost->host->cpu_clock);
  std::string bad = line;
  bad.replace(bad.find("\"schedstat\""), 11, "\"jiffies\"");
  EXPECT_EQ(error_of([&] { parse_journal_line(bad, "j", 1); }),
            "j:1: field \"cost.host.cpu_clock\" must be \"libvirt\", \"schedstat\" or \"ticks\", not \"jiffies\"");
}

// The metrics of a run's cost, by hand: 0.5 s of guest CPU over 512 MiB is 1 s/GiB; 3 s of host CPU
// over 1.5 GiB the disk received is 2 s/GiB, and over 3000 requests 1000 us/req (fio only); a run
// whose guest counted no busy tick, or whose host figures are missing, has no such metric.
TEST(Journal, CostMetricsAreCpuPerGibAndPerRequest) {
  const RunCost cost{.tool_bytes = 512u << 20, .guest_cpu_seconds = 0.5,
                     .host = HostWindowCost{.cpu_seconds = 3, .disk_bytes = 3u << 29, .disk_requests = 3000}};
  const auto fio = cost_metrics("w", cost, true);
  ASSERT_EQ(fio.size(), 3u);
  EXPECT_EQ(fio[0].name, "w.guest_cpu_per_gib");
  EXPECT_EQ(fio[0].unit, "s/GiB");
  EXPECT_EQ(fio[0].better, Better::lower);
  EXPECT_DOUBLE_EQ(fio[0].value, 1.0);
  EXPECT_EQ(fio[1].name, "w.host_cpu_per_gib");
  EXPECT_DOUBLE_EQ(fio[1].value, 2.0);
  EXPECT_EQ(fio[2].name, "w.host_cpu_per_req");
  EXPECT_EQ(fio[2].unit, "us/req");
  EXPECT_DOUBLE_EQ(fio[2].value, 1000.0);
  EXPECT_EQ(cost_metrics("w", cost, false).size(), 2u);
  EXPECT_TRUE(cost_metrics("w", RunCost{.tool_bytes = 1u << 20, .guest_cpu_seconds = 0}, false).empty());
  EXPECT_TRUE(cost_metrics("w", RunCost{.tool_bytes = 1u << 20, .host_missing = "no stats"}, true).empty());
  EXPECT_TRUE(is_cost_metric("w.host_cpu_per_req"));
  EXPECT_FALSE(is_cost_metric("w.bandwidth"));
  EXPECT_FALSE(is_cost_metric(".host_cpu_per_gib"));
}

// A window whose disk received less than 0.95 x the tool's bytes (times the runs it held) is flagged.
TEST(Journal, ADiskThatSawFewerBytesThanTheToolIsFlagged) {
  RunCost cost{.tool_bytes = 1000, .tool_runs = 2, .host = HostWindowCost{.cpu_seconds = 1, .disk_bytes = 1900}};
  EXPECT_FALSE(disk_saw_too_little(cost));  // 1900 = 0.95 x 2000
  cost.host->disk_bytes = 1899;
  EXPECT_TRUE(disk_saw_too_little(cost));
  cost.host.reset();
  EXPECT_FALSE(disk_saw_too_little(cost));  // nothing to compare
}

TEST(Journal, NewerVersionIsRejected) {
  auto path = data("journal/newer-version.jsonl");
  EXPECT_EQ(error_of([&] { read_journal(path); }),
            path.string() +
                ":1: journal_version 4 is newer than this abvm reads (up to 3): use a newer abvm "
                "to analyze these results");
}

TEST(Journal, AppendedLinesReadBack) {
  test::TempDir dir("journal-append");
  auto path = dir.path() / "journal.jsonl";
  JournalEntry e = sample_entry();
  for (int i = 0; i < 3; ++i) {
    e.order = i;
    append_line_durable(path, to_journal_line(e));
  }
  auto entries = read_journal(path);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].order, 2);
}

TEST(Journal, DdMetrics) {
  DdRun run{8589934592, 1.95557, 8589934592 / 1.95557, 7, ""};
  auto m = dd_metrics("dd-write", run);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].name, "dd-write.bandwidth");
  EXPECT_EQ(m[0].unit, "B/s");
  EXPECT_EQ(m[0].better, Better::higher);
  EXPECT_EQ(m[0].value, run.bandwidth);
}

TEST(Journal, FioMetricsOfASingleJobNamedLikeTheWorkload) {
  auto doc = parse_fio(data_text("fio/seqwrite.json"), "seqwrite.json").at(0);
  auto m = fio_metrics("seqwrite", doc);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].name, "seqwrite.write.bandwidth");
  EXPECT_EQ(m[0].value, 2396745142.0);
  EXPECT_EQ(m[1].name, "seqwrite.write.iops");
  EXPECT_EQ(m[1].unit, "IOPS");
  EXPECT_EQ(m[2].name, "seqwrite.write.clat_mean");
  EXPECT_EQ(m[2].better, Better::lower);
  EXPECT_EQ(m[3].name, "seqwrite.write.clat_p50");
  EXPECT_EQ(m[3].value, 296960.0);
  EXPECT_EQ(m[4].name, "seqwrite.write.clat_p99");
  EXPECT_EQ(m[4].unit, "ns");
  EXPECT_EQ(m[4].value, 1368064.0);
  // Another workload name keeps the job part.
  EXPECT_EQ(fio_metrics("fio-write", doc).at(0).name, "fio-write.seqwrite.write.bandwidth");
}

TEST(Journal, FioMetricsSkipFailedJobs) {
  auto doc = parse_fio(data_text("fio/error-devfull.json"), "e.json").at(0);
  auto m = fio_metrics("w", doc);
  ASSERT_EQ(m.size(), 5u);
  for (const auto& metric : m) EXPECT_EQ(metric.name.rfind("w.okjob.write.", 0), 0u) << metric.name;
}

TEST(Journal, FioMetricsWithoutPercentiles) {
  auto doc = parse_fio(R"({"jobs":[{"jobname":"j","error":0,"read":{"io_bytes":4096,)"
                       R"("bw_bytes":4096,"iops":1.0,"clat_ns":{"mean":10.0}}}]})",
                       "p.json")
                 .at(0);
  auto m = fio_metrics("j", doc);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[2].name, "j.read.clat_mean");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

// The facts a side is checked against (issue 11 item 2) ride in "guest.facts", strictly typed.
TEST(Journal, GuestFactsRoundTripAndAreStrict) {
  JournalEntry e = sample_entry();
  e.facts = {{"kernel_version", "#1 SMP abvm-41398041b319"}, {"virtio_f_access_platform", "negotiated"}};
  const std::string line = to_journal_line(e);
  EXPECT_NE(line.find(R"("facts":{"kernel_version":"#1 SMP abvm-41398041b319","virtio_f_access_platform":"negotiated"})"),
            std::string::npos)
      << line;
  EXPECT_EQ(parse_journal_line(line, "j", 1).facts, e.facts);
  std::string bad = to_journal_line(sample_entry());
  bad.insert(bad.size() - 1, R"(,"guest":{"facts":{"dma_api_in_use":true}})");
  EXPECT_EQ(error_of([&] { parse_journal_line(bad, "j", 5); }),
            R"(j:5: field "guest.facts.dma_api_in_use" must be a string, not true)");
}

}  // namespace
}  // namespace abvm

namespace abvm {
namespace {

JournalEntry timed_entry() {
  JournalEntry e = sample_entry();
  e.timing = RunTiming{.go = 1764446405.0, .start = 1764446405.001, .end = 1764446405.979769,
                       .load_end = 1764446406.07121, .clock_error = 0.0005};
  e.overlap = RunOverlap{.partner = "t0006", .run = 0.9969, .pair = 0.9969};
  return e;
}

// When the run ran and how much its partner overlapped it: written after "detail" in the documented
// order, read back exactly (doubles round-trip), "go" null without a barrier.
TEST(Journal, TimingAndOverlapRoundTrip) {
  const std::string line = to_journal_line(timed_entry());
  EXPECT_NE(line.find(R"("detail":"","timing":{"go":1764446405.0,"start":1764446405.001,"end":1764446405.979769,)"
                      R"("load_end":1764446406.07121,"clock_error":0.0005},)"
                      R"("overlap":{"partner":"t0006","run":0.9969,"pair":0.9969}})"),
            std::string::npos)
      << line;
  const JournalEntry back = parse_journal_line(line, "j", 1);
  EXPECT_EQ(back.timing, timed_entry().timing);
  EXPECT_EQ(back.overlap, timed_entry().overlap);

  // No barrier: "go" is null. A failed run may carry its timing too.
  JournalEntry f = timed_entry();
  f.timing->go.reset();
  f.outcome = Outcome::timeout;
  f.metrics.clear();
  f.overlap.reset();
  const std::string failed = to_journal_line(f);
  EXPECT_NE(failed.find(R"("timing":{"go":null,"start":)"), std::string::npos) << failed;
  EXPECT_EQ(failed.find("\"overlap\""), std::string::npos) << failed;
  const JournalEntry fb = parse_journal_line(failed, "j", 2);
  ASSERT_TRUE(fb.timing.has_value());
  EXPECT_FALSE(fb.timing->go.has_value());
  EXPECT_EQ(fb.timing->end, 1764446405.979769);
  EXPECT_FALSE(fb.overlap.has_value());

  // Journals older than them have neither.
  const JournalEntry old = parse_journal_line(to_journal_line(sample_entry()), "j", 3);
  EXPECT_FALSE(old.timing.has_value());
  EXPECT_FALSE(old.overlap.has_value());
  EXPECT_EQ(to_journal_line(sample_entry()).find("timing"), std::string::npos);

  // The names the run stage may spell either way.
  JournalEntry::RunTiming t = *timed_entry().timing;
  EXPECT_EQ(t.start, 1764446405.001);
}

class JournalBadTiming : public ::testing::TestWithParam<BadLine> {};

TEST_P(JournalBadTiming, IsRejectedWithFileLineAndField) {
  std::string line = to_journal_line(timed_entry());
  const BadLine& c = GetParam();
  const std::size_t at = line.find(c.from);
  ASSERT_NE(at, std::string::npos) << c.from;
  line.replace(at, std::string(c.from).size(), c.to);
  EXPECT_EQ(error_of([&] { parse_journal_line(line, "j.jsonl", 9); }), std::string("j.jsonl:9: ") + c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, JournalBadTiming,
    ::testing::Values(
        BadLine{R"("timing":{"go":1764446405.0,)", R"("timing":[1],"x":{"go":1764446405.0,)",
                R"(field "timing" must be an object, not [1])"},
        BadLine{R"("go":1764446405.0)", R"("go":"now")", R"(field "timing.go" must be a number or null, not "now")"},
        BadLine{R"("start":1764446405.001,)", "", R"(field "timing.start" is missing (a number))"},
        BadLine{R"("end":1764446405.979769)", R"("end":null)", R"(field "timing.end" must be a number, not null)"},
        BadLine{R"("end":1764446405.979769)", R"("end":1764446405.0)",
                R"(field "timing" must have start <= end <= load_end (a run ends after it starts, its load )"
                R"(with or after it), not start 1764446405.001, end 1764446405, load_end 1764446406.07121)"},
        BadLine{R"("load_end":1764446406.07121)", R"("load_end":1764446405.5)",
                R"(field "timing" must have start <= end <= load_end (a run ends after it starts, its load )"
                R"(with or after it), not start 1764446405.001, end 1764446405.979769, load_end 1764446405.5)"},
        BadLine{R"("clock_error":0.0005)", R"("clock_error":-0.001)",
                R"(field "timing.clock_error" must be >= 0, not -0.001)"},
        BadLine{R"(,"clock_error":0.0005)", "", R"(field "timing.clock_error" is missing (a number))"},
        BadLine{R"("overlap":{"partner":"t0006",)", R"("overlap":0.99,"x":{"partner":"t0006",)",
                R"(field "overlap" must be an object, not 0.99)"},
        BadLine{R"("partner":"t0006")", R"("partner":6)", R"(field "overlap.partner" must be a string, not 6)"},
        BadLine{R"("partner":"t0006")", R"("partner":"")",
                R"(field "overlap.partner" must name the partner run's trial, not "")"},
        BadLine{R"("run":0.9969)", R"("run":1.5)", R"(field "overlap.run" must be a share between 0 and 1, not 1.5)"},
        BadLine{R"("pair":0.9969)", R"("pair":-0.25)",
                R"(field "overlap.pair" must be a share between 0 and 1, not -0.25)"},
        BadLine{R"(,"pair":0.9969)", "", R"(field "overlap.pair" is missing (a number))"}));

// The writer refuses what the reader would: a journal never holds a line that reads back as an error.
TEST(Journal, InvalidTimingOrOverlapIsNotWritten) {
  JournalEntry e = timed_entry();
  e.timing->load_end = e.timing->end - 1;
  EXPECT_EQ(error_of([&] { to_journal_line(e); }),
            "trial t0007: journal field \"timing\" must have start <= end <= load_end (a run ends after it starts, "
            "its load with or after it), not start 1764446405.001, end 1764446405.979769, load_end 1764446404.979769");
  e = timed_entry();
  e.timing->go = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of([&] { to_journal_line(e); }),
            "trial t0007: journal field \"timing.go\" must be a finite number, not inf");
  e = timed_entry();
  e.overlap->pair = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of([&] { to_journal_line(e); }),
            "trial t0007: journal field \"overlap.pair\" must be a share between 0 and 1, not nan");
}

}  // namespace
}  // namespace abvm
