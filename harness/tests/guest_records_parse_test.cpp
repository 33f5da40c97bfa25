// The console record parser: MD5 against RFC 1321's test vectors, records printed by the
// real agent (busybox md5sum/base64), a console log captured from a real boot, and
// garbage, forged, truncated and interleaved input.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "hostile_console.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

const fs::path kAgent = fs::path(ABVM_SOURCE_DIR) / "guests/agent/init.sh";

bool has_problem(const GuestReport& r, std::string_view text) {
  for (const auto& p : r.problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(GuestRecords, Md5MatchesRfc1321) {
  // RFC 1321, appendix A.5.
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("a"), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5_hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(md5_hex("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(GuestRecords, Base64RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 255u, 256u}) {
    const std::string s = all.substr(0, n);
    EXPECT_EQ(base64_decode(base64_encode(s)), s) << n;
  }
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_FALSE(base64_decode("aGVsbG8").has_value());
  EXPECT_FALSE(base64_decode("aG=sbG8=").has_value());
  EXPECT_FALSE(base64_decode("aGV$bG8=").has_value());
}

// The agent's own emitter, run by busybox on the host: what the guest prints, byte for byte.
std::string agent_emit(const std::string& nonce, const std::string& output) {
  const fs::path dir = fs::temp_directory_path() / ("abvm-rec-" + make_nonce().substr(0, 8));
  fs::create_directories(dir);
  const ProcessResult r = run_process({"busybox", "sh", kAgent.string()},
                                      {.extra_env = {"ABVM_AGENT_MODE=emit", "ABVM_NONCE=" + nonce,
                                                     "ABVM_OUTPUT=" + output, "ABVM_WORK=" + dir.string()}});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(GuestRecords, ParsesWhatTheAgentPrints) {
  // Long enough for more than ten 600-character OUT chunks (their checksums come from one md5sum
  // over files that must sort in order), with bytes a terminal would mangle.
  std::string output = "1+0 records in\n\x01\x7f\xff tab\there \"quotes\" $(x)\n";
  while (output.size() < 8000) output += "0123456789abcdef";
  const std::string console = agent_emit("nonce0123", output);
  const GuestReport r = parse_guest_console(console, "nonce0123");
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(r.begun);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.trial_id, "test");
  EXPECT_DOUBLE_EQ(r.boot_uptime, 1.25);
  EXPECT_FALSE(r.kernel_release.empty());
  // The emitter's feature string sets bits 1, 2 and 33.
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_EQ(*r.blk_features, (1ull << 1) | (1ull << 2) | (1ull << 33));
  EXPECT_TRUE(r.access_platform);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].workload, "demo");
  EXPECT_EQ(r.runs[0].exit_status, 3);
  EXPECT_DOUBLE_EQ(r.runs[0].t_start, 1.5);
  EXPECT_DOUBLE_EQ(r.runs[0].t_end, 2.75);
  EXPECT_EQ(r.runs[0].output, output);
  EXPECT_FALSE(r.runs[0].window);
  EXPECT_EQ(r.runs[0].cpu, (GuestCpuTicks{.busy = 7, .all = 25}));
  EXPECT_EQ(r.runs[1].cpu, (GuestCpuTicks{.busy = 120, .all = 130}));
  // The paced run: its window's guest times, printed after the window closed.
  const GuestRun& p = r.runs[1];
  EXPECT_EQ(p.workload, "paced");
  EXPECT_DOUBLE_EQ(p.t_start, 3.1);
  EXPECT_DOUBLE_EQ(p.t_end, 4.4);
  ASSERT_TRUE(p.window);
  EXPECT_EQ(p.window->step, 0);
  EXPECT_DOUBLE_EQ(p.window->t_ready, 3.000001);
  EXPECT_DOUBLE_EQ(p.window->t_go, 3.05);
  EXPECT_DOUBLE_EQ(p.window->t_fill, 4.45);
  EXPECT_DOUBLE_EQ(p.window->t_stop, 5.0);
  EXPECT_DOUBLE_EQ(p.window->t_load_end, 5.1);
  EXPECT_EQ(p.window->fills, 2);
  EXPECT_EQ(p.output, output);
  EXPECT_EQ(r.steps_done, std::vector<long>{0});
  // Clock marks: BEGIN, the unpaced run's RUN and RUNEND, READY and DONE (the paced RUN and
  // RUNEND were printed after the window: no marks; DONE's time is RUNEND's t_done).
  std::vector<GuestClockMark> marks = r.clock_marks;
  std::sort(marks.begin(), marks.end(), [](const auto& x, const auto& y) { return x.seq < y.seq; });
  ASSERT_EQ(marks.size(), 5u);
  EXPECT_DOUBLE_EQ(marks[0].t, 1.25);
  EXPECT_EQ(marks[1].run, 0);
  EXPECT_DOUBLE_EQ(marks[1].t, 1.5);
  EXPECT_EQ(marks[2].run, 0);
  EXPECT_DOUBLE_EQ(marks[2].t, 2.75);
  EXPECT_EQ(marks[3].step, 0);
  EXPECT_DOUBLE_EQ(marks[3].t, 3.000001);
  EXPECT_EQ(marks[4].step, 0);
  EXPECT_DOUBLE_EQ(marks[4].t, 4.5);
}

// Appends records of nonce0123 to `console`, numbered from 0.
auto record_writer(std::string& console) {
  return [&console, seq = std::uint64_t{0}](std::string_view type, const std::string& payload) mutable {
    console += format_guest_record("nonce0123", seq++, type, payload) + "\n";
  };
}

// Agents before issue 26 printed DONE with its time ("step,t") and a paced RUNEND of eight fields:
// their consoles read as before, DONE a clock mark of its own time.
TEST(GuestRecords, DoneWithItsOwnTimeFromOlderAgentsIsAClockMark) {
  std::string console;
  auto rec = record_writer(console);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("READY", "0,3.0");
  rec("DONE", "0,4.5");
  rec("RUN", "dd,0,0,3.1,0,3.0,3.05");
  rec("RUNEND", "dd,0,0,4.4,4.45,5.0,5.1,2");
  rec("END", "5");
  const GuestReport r = parse_guest_console(console, "nonce0123");
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.steps_done, std::vector<long>{0});
  ASSERT_EQ(r.clock_marks.size(), 3u);  // BEGIN, READY, DONE
  EXPECT_EQ(r.clock_marks[2].seq, 2u);
  EXPECT_DOUBLE_EQ(r.clock_marks[2].t, 4.5);
}

// A timeless DONE becomes a clock mark only with its step's RUNEND time: a RUNEND of another step
// or of eight fields adds none.
TEST(GuestRecords, ATimelessDoneTakesItsTimeFromItsStepsRunEnd) {
  std::string console;
  auto rec = record_writer(console);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("DONE", "0");
  rec("DONE", "1");
  rec("RUN", "dd,0,0,3.1,1,3.0,3.05");
  rec("RUNEND", "dd,0,0,4.4,4.45,5.0,5.1,2,4.47");
  rec("RUN", "dd,1,0,6.1,2,6.0,6.05");
  rec("RUNEND", "dd,1,0,7.4,7.45,8.0,8.1,2,7.47");
  rec("END", "7");
  const GuestReport r = parse_guest_console(console, "nonce0123");
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  ASSERT_EQ(r.clock_marks.size(), 2u);  // BEGIN, and DONE of step 1 (seq 2) at 4.47
  EXPECT_EQ(r.clock_marks[1].seq, 2u);
  EXPECT_EQ(r.clock_marks[1].step, 1);
  EXPECT_DOUBLE_EQ(r.clock_marks[1].t, 4.47);
}

// A CPU record belongs to the run whose RUNEND it follows; one that does not, or that counts more
// busy ticks than ticks, is a problem and gives no run its CPU. Runs of agents before it have none.
TEST(GuestRecords, ACpuRecordGoesWithTheRunJustEnded) {
  std::string console;
  auto rec = record_writer(console);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("RUN", "dd,0,0,1.0");
  rec("RUNEND", "dd,0,0,2.0");
  rec("CPU", "dd,0,40,200");
  rec("RUN", "dd,1,0,3.0");
  rec("RUNEND", "dd,1,0,4.0");
  rec("CPU", "dd,0,40,200");    // of the run before
  rec("RUN", "dd,2,0,5.0");
  rec("RUNEND", "dd,2,0,6.0");
  rec("CPU", "dd,2,201,200");   // more busy than all
  rec("RUN", "dd,3,0,7.0");
  rec("RUNEND", "dd,3,0,8.0");
  rec("END", "13");
  const GuestReport r = parse_guest_console(console, "nonce0123");
  ASSERT_EQ(r.runs.size(), 4u);
  EXPECT_EQ(r.runs[0].cpu, (GuestCpuTicks{.busy = 40, .all = 200}));
  EXPECT_FALSE(r.runs[1].cpu);
  EXPECT_FALSE(r.runs[2].cpu);
  EXPECT_FALSE(r.runs[3].cpu);
  ASSERT_EQ(r.problems.size(), 2u) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.problems[0], "record 6 (CPU): CPU record without the end of its run just before");
  EXPECT_EQ(r.problems[1], "record 9 (CPU): malformed CPU record");
}

// NEXT announces the unpaced run its RUN starts (the host reads the run's starting statistics then,
// before the preparation): the run keeps its sequence number; a NEXT of another run gives none, and a
// malformed one is a problem.
TEST(GuestRecords, ANextRecordGoesWithTheRunItAnnounces) {
  std::string console;
  auto rec = record_writer(console);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("NEXT", "dd,0,0");        // seq 1
  rec("RUN", "dd,0,0,1.0");
  rec("RUNEND", "dd,0,0,2.0");
  rec("NEXT", "dd,5,0");        // announces another run
  rec("RUN", "dd,1,0,3.0");
  rec("RUNEND", "dd,1,0,4.0");
  rec("RUN", "dd,2,0,5.0");     // an agent before NEXT
  rec("RUNEND", "dd,2,0,6.0");
  rec("NEXT", "dd,3");          // malformed
  rec("END", "10");
  const GuestReport r = parse_guest_console(console, "nonce0123");
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_EQ(r.runs[0].next_seq, std::optional<std::uint64_t>(1));
  EXPECT_FALSE(r.runs[1].next_seq);
  EXPECT_FALSE(r.runs[2].next_seq);
  ASSERT_EQ(r.problems.size(), 1u) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.problems[0], "record 9 (NEXT): malformed next-run record");
}

TEST(GuestRecords, MalformedPacedRecordsAreProblemsNotRuns) {
  std::string console;
  auto rec = record_writer(console);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("READY", "x,1.0");
  rec("DONE", "y");
  rec("RUN", "dd,0,0,3.1,0,3.0");       // six fields: neither form
  rec("RUN", "dd,0,0,3.1,0,3.0,3.05");
  rec("RUNEND", "dd,0,0,4.4");           // a paced run ends with eight fields
  rec("END", "6");
  const GuestReport r = parse_guest_console(console, "nonce0123");
  EXPECT_TRUE(r.runs.empty());
  EXPECT_TRUE(r.clock_marks.size() == 1u) << r.clock_marks.size();  // BEGIN only
  EXPECT_EQ(r.problems.size(), 4u) << ::testing::PrintToString(r.problems);
}

// The record format's version is its marker: an agent of format 1 (before the CPU and NEXT
// records) is not read as this one, and the report says why it holds nothing.
TEST(GuestRecords, RecordsOfTheFormerFormatAreNotReadAndTheReportSaysWhy) {
  std::string current;
  auto rec = record_writer(current);
  rec("BEGIN", base64_encode("t") + ",1.0");
  rec("END", "1");
  std::string former = current;
  for (std::size_t at = former.find("ABVM2:"); at != std::string::npos; at = former.find("ABVM2:", at)) former[at + 4] = '1';
  EXPECT_TRUE(parse_guest_console(current, "nonce0123").begun);
  const GuestReport r = parse_guest_console(former, "nonce0123");
  EXPECT_FALSE(r.begun);
  EXPECT_TRUE(has_problem(r, "the guest's agent writes records of the former format (ABVM1:...), this abvm reads "
                             "ABVM2:..."))
      << ::testing::PrintToString(r.problems);
  // Another nonce's former records are not this guest's: nothing said of them.
  EXPECT_FALSE(has_problem(parse_guest_console(former, "nonce9999"), "former format"));
}

TEST(GuestRecords, BootNoiseAroundRecordsIsIgnored) {
  const std::string records = agent_emit("nonce0123", "ok\n");
  std::string console = "SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n[    0.000000] Linux version 6.1.0\r\n";
  console += "[    1.234567] ------------[ cut here ]------------\r\nABVM2 is not a record\r\nABVM2:\r\n";
  for (char c : records) {
    if (c == '\n') console += "\r\n";  // the serial console's onlcr
    else console.push_back(c);
  }
  console += "[    2.000000] reboot: Power down\r\n";
  const GuestReport r = parse_guest_console(console, "nonce0123");
  EXPECT_TRUE(r.ended);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].output, "ok\n");
  // The bare "ABVM2:" is a truncated record: noted, nothing else.
  EXPECT_EQ(r.problems.size(), 1u) << ::testing::PrintToString(r.problems);
}

TEST(GuestRecords, KernelTextInsideARecordLineIsRecovered) {
  const std::string good = format_guest_record("n0nce123", 0, "BEGIN", "dA==,0.5") + "\n" +
                           format_guest_record("n0nce123", 1, "UNAME", base64_encode("6.1.0-57-cloud-amd64")) + "\n" +
                           format_guest_record("n0nce123", 2, "END", "2") + "\n";
  // printk lands in the middle of the UNAME record, with and without a timestamp.
  for (const std::string printk : {"[    3.141592] virtio_blk virtio1: [vda] 131072 512-byte logical blocks\r\n",
                                   "random: crng init done\r\n"}) {
    const auto cut = good.find("UNAME:") + 9;
    const std::string console = good.substr(0, cut) + printk + good.substr(cut);
    const GuestReport r = parse_guest_console(console, "n0nce123");
    EXPECT_EQ(r.kernel_release, "6.1.0-57-cloud-amd64") << printk;
    EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  }
}

// MODPARAM: one "<module>.<param>=<value>" each (issue 14); a value may hold anything, a
// name only what sysfs could show, and a flood stops at kMaxModuleParams.
TEST(GuestRecords, ModuleParameters) {
  const std::string n = "modnonce1";
  std::vector<std::string> payloads = {"virtio_blk.queue_depth=1", "virtio_pci.force_legacy=N",
                                       "virtio_ring.x=a=b c", "noparam=1", "../etc.x=1", "virtio_blk.=1"};
  std::string console = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n";
  std::uint64_t seq = 1;
  for (const auto& p : payloads) console += format_guest_record(n, seq++, "MODPARAM", base64_encode(p)) + "\n";
  console += format_guest_record(n, seq, "END", std::to_string(seq)) + "\n";
  const GuestReport r = parse_guest_console(console, n);
  EXPECT_EQ(r.module_params, (std::map<std::string, std::string>{{"virtio_blk.queue_depth", "1"},
                                                                 {"virtio_pci.force_legacy", "N"},
                                                                 {"virtio_ring.x", "a=b c"}}));
  ASSERT_EQ(r.problems.size(), 3u) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.problems[0], "record 4 (MODPARAM): not a module parameter (<module>.<param>=<value>)");

  std::string flood = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n";
  for (seq = 1; seq <= kMaxModuleParams + 1; ++seq) {
    flood += format_guest_record(n, seq, "MODPARAM", base64_encode(fmt::format("m.p{}=1", seq))) + "\n";
  }
  const GuestReport f = parse_guest_console(flood, n);
  EXPECT_EQ(f.module_params.size(), kMaxModuleParams);
  EXPECT_TRUE(has_problem(f, fmt::format("more than {} module parameters", kMaxModuleParams)));
}

TEST(GuestRecords, ForgedRecordsAreRejected) {
  const std::string n = "realnonce1";
  std::string console = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n";
  // Right checksum, wrong nonce: a stale log or another trial.
  console += format_guest_record("othernonce", 1, "UNAME", base64_encode("evil")) + "\n";
  // Right nonce, checksum not matching the body (a workload printing a fake record).
  std::string forged = format_guest_record(n, 1, "UNAME", base64_encode("6.1.0"));
  forged.replace(forged.find(base64_encode("6.1.0")), 4, base64_encode("evil").substr(0, 4));
  console += forged + "\n";
  console += format_guest_record(n, 1, "UNAME", base64_encode("6.1.0")) + "\n";
  console += format_guest_record(n, 2, "END", "2") + "\n";
  const GuestReport r = parse_guest_console(console, n);
  EXPECT_EQ(r.kernel_release, "6.1.0");
  EXPECT_TRUE(has_problem(r, "foreign nonce")) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(has_problem(r, "bad checksum")) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.problems.size(), 2u);
}

TEST(GuestRecords, TruncatedConsoleIsReported) {
  const std::string n = "realnonce1";
  std::string console = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n" +
                        format_guest_record(n, 1, "RUN", "dd,0,0,1.00") + "\n" +
                        format_guest_record(n, 2, "OUT", base64_encode("some output")) + "\n";
  const std::string cut = format_guest_record(n, 3, "OUT", base64_encode("more"));
  console += cut.substr(0, cut.size() - 10);  // the guest died mid-line
  const GuestReport r = parse_guest_console(console, n);
  EXPECT_TRUE(r.begun);
  EXPECT_FALSE(r.ended);
  EXPECT_TRUE(r.runs.empty());
  EXPECT_TRUE(has_problem(r, "truncated or malformed")) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(has_problem(r, "run dd #0 started but never ended")) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(has_problem(r, "no end record")) << ::testing::PrintToString(r.problems);
}

TEST(GuestRecords, MissingRecordsAreNamed) {
  const std::string n = "realnonce1";
  const std::string console = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n" +
                              format_guest_record(n, 3, "END", "3") + "\n";
  const GuestReport r = parse_guest_console(console, n);
  EXPECT_TRUE(has_problem(r, "records 1 to 2 are missing")) << ::testing::PrintToString(r.problems);
}

TEST(GuestRecords, GarbageNeverThrows) {
  std::string garbage;
  unsigned state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1103515245u + 12345u;
    const char* pieces[] = {"ABVM2:", "realnonce1:", ":", "0", "\n", "\r", "RUN", "OUT", "==", "x"};
    if (state % 7 == 0) garbage += pieces[(state >> 8) % 10];
    else garbage.push_back(static_cast<char>(state >> 16));
  }
  GuestReport r;
  EXPECT_NO_THROW(r = parse_guest_console(garbage, "realnonce1"));
  EXPECT_FALSE(r.ended);
  EXPECT_TRUE(parse_guest_console("", "realnonce1").problems.size() == 1);
}

// A console log captured from a real boot of the Debian cloud kernel (harness/tests/data/guest/,
// see README there), parsed with the nonce that boot used.
TEST(GuestRecords, RealCapturedConsole) {
  const fs::path dir = fs::path(ABVM_TEST_DATA) / "guest";
  const std::string console = read_file(dir / "console-debian-cloud.log");
  std::string nonce = read_file(dir / "console-debian-cloud.nonce");
  while (!nonce.empty() && nonce.back() == '\n') nonce.pop_back();
  const GuestReport r = parse_guest_console(console, nonce);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.kernel_release.rfind("6.1.0-", 0), 0u) << r.kernel_release;
  EXPECT_NE(r.kernel_release.find("cloud-amd64"), std::string::npos);
  ASSERT_TRUE(r.blk_features.has_value());
  EXPECT_FALSE(r.access_platform);
  ASSERT_EQ(r.runs.size(), 4u);
  EXPECT_TRUE(r.runs[0].warmup);
  EXPECT_NE(r.runs[1].output.find("16777216 bytes"), std::string::npos) << r.runs[1].output;
  EXPECT_NE(r.runs[3].output.find("\"jobname\" : \"fio-write\""), std::string::npos);
  // The same log with another trial's nonce yields nothing trustworthy.
  const GuestReport other = parse_guest_console(console, "0000000000000000");
  EXPECT_FALSE(other.begun);
  EXPECT_TRUE(other.runs.empty());
  EXPECT_TRUE(has_problem(other, "foreign nonce"));
}

// Guest output is hostile input (issue 11): every worst case of hostile_console.hpp costs a
// bounded amount of work per console byte, counted (ParseWork) rather than timed, so a rescan
// that makes parsing superlinear fails here; bench/records_parse_bench.cpp times it.
TEST(GuestRecords, ParsingIsLinearInTheConsoleSize) {
  const std::string n = "hostilenonce1";
  for (const auto kind : test::kHostileKinds) {
    ParseWork small, large;
    const std::string one = test::hostile_console(n, 1 << 20, kind);
    const std::string four = test::hostile_console(n, 4 << 20, kind);
    parse_guest_console(one, n, &small);
    const GuestReport r = parse_guest_console(four, n, &large);
    EXPECT_FALSE(r.begun) << test::to_string(kind);
    // Visiting: a few times per byte, and four times the bytes is about four times the work.
    EXPECT_LE(large.scanned, 16 * four.size()) << test::to_string(kind);
    EXPECT_LE(large.scanned, 5 * std::max<std::uint64_t>(small.scanned, 1)) << test::to_string(kind);
    // Hashing: whole records at most once each, rebuilding within its budget.
    EXPECT_LE(large.hashed, kRecoveryBudgetBase + (kRecoveryBudgetPerByte + 1) * four.size()) << test::to_string(kind);
    EXPECT_LE(r.problems.size(), 102u) << test::to_string(kind);
  }
}

// The agent never prints a record longer than kMaxRecordLength, so a longer one, even with the
// right checksum, is not a record of the agent's.
TEST(GuestRecords, RecordsLongerThanTheAgentPrintsAreRejected) {
  const std::string n = "n0nce123";
  const std::string head = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n";
  const std::string end = "\n" + format_guest_record(n, 2, "END", "2") + "\n";
  const std::size_t fixed = format_guest_record(n, 1, "DMESG", "").size();
  const std::string longest = format_guest_record(n, 1, "DMESG", std::string(kMaxRecordLength - fixed, 'A'));
  ASSERT_EQ(longest.size(), kMaxRecordLength);
  EXPECT_TRUE(parse_guest_console(head + longest + end, n).problems.empty());
  const std::string longer = format_guest_record(n, 1, "DMESG", std::string(kMaxRecordLength - fixed + 4, 'A'));
  const GuestReport r = parse_guest_console(head + longer + end, n);
  EXPECT_TRUE(has_problem(r, "truncated or malformed record")) << ::testing::PrintToString(r.problems);
  EXPECT_TRUE(has_problem(r, "record 1 is missing"));
}

// Records printed whole still count after a hostile flood; a record that kernel text split is
// rebuilt until the flood has used up the rebuilding budget, and the report says so after that.
TEST(GuestRecords, AFloodUsesUpRebuildingNotParsing) {
  const std::string n = "n0nce123";
  const std::string uname = format_guest_record(n, 1, "UNAME", base64_encode("6.1.0-57-cloud-amd64"));
  const std::string split = uname.substr(0, 30) + "random: crng init done\r\n" + uname.substr(30) + "\n";
  const std::string begin = format_guest_record(n, 0, "BEGIN", "dA==,0.5") + "\n";
  const std::string end = format_guest_record(n, 2, "END", "2") + "\n";
  EXPECT_TRUE(parse_guest_console(begin + split + end, n).problems.empty());

  const std::string flood = test::hostile_console(n, 1 << 20, test::Hostile::broken_records) + "\n";
  const GuestReport whole = parse_guest_console(flood + begin + uname + "\n" + end, n);
  EXPECT_TRUE(whole.ended);
  EXPECT_EQ(whole.kernel_release, "6.1.0-57-cloud-amd64");
  EXPECT_TRUE(has_problem(whole, "more problems of this kind are not listed")) << whole.problems.size();
  EXPECT_LE(whole.problems.size(), 102u);

  const GuestReport broken = parse_guest_console(flood + begin + split + end, n);
  EXPECT_TRUE(broken.ended);
  EXPECT_EQ(broken.kernel_release, "");
  EXPECT_TRUE(has_problem(broken, "are no longer rebuilt")) << ::testing::PrintToString(broken.problems);
}

}  // namespace
