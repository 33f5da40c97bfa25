// Tests of samples/dd.hpp on the seed and on real GNU dd output captured for the fixtures
// (tests/data/dd/README.md says how each file was made). Expected bytes and seconds are
// copied from the fixture text; bandwidth must be exactly bytes / seconds.
#include "samples/dd.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data_text;
using test::error_of;

void expect_runs(const std::vector<DdRun>& runs, std::uint64_t bytes,
                 const std::vector<double>& seconds, const std::vector<std::size_t>& lines) {
  ASSERT_EQ(runs.size(), seconds.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(runs[i].bytes, bytes);
    EXPECT_EQ(runs[i].seconds, seconds[i]);
    EXPECT_DOUBLE_EQ(runs[i].bandwidth, static_cast<double>(bytes) / seconds[i]);
    EXPECT_EQ(runs[i].line, lines[i]);
    EXPECT_EQ(runs[i].partial_records, "");
  }
}

// The summary lines sit at lines 7, 11, ..., 43 of both seed files (two header lines, a blank
// one, then four lines per run).
const std::vector<std::size_t> kSeedLines = {7, 11, 15, 19, 23, 27, 31, 35, 39, 43};
constexpr std::uint64_t kSeedBytes = 8589934592;

TEST(Dd, SeedWithoutPatches) {
  auto runs = parse_dd(data_text("seed/dd-without-patches.txt"), "dd-without-patches.txt");
  expect_runs(runs, kSeedBytes,
              {1.95557, 2.05176, 1.88314, 1.84899, 5.37184, 1.9205, 6.85166, 1.74049, 6.31699,
               2.47057},
              kSeedLines);
  // Not the rounded "4.4 GB/s" of the rate field.
  EXPECT_NEAR(runs[0].bandwidth, 4392547744.1, 0.1);
}

TEST(Dd, SeedWithPatches) {
  auto runs = parse_dd(data_text("seed/dd-with-patches.txt"), "dd-with-patches.txt");
  expect_runs(runs, kSeedBytes,
              {2.25993, 1.82438, 1.93856, 1.83405, 7.50199, 2.28742, 5.74958, 1.99149, 5.67647,
               2.93957},
              kSeedLines);
}

struct RealCase {
  const char* file;
  std::uint64_t bytes;
  double seconds;
  std::size_t line;
  const char* partial;
};

class DdReal : public ::testing::TestWithParam<RealCase> {};

TEST_P(DdReal, ParsesTheSummary) {
  const RealCase& c = GetParam();
  auto runs = parse_dd(data_text(std::string("dd/") + c.file), c.file);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].bytes, c.bytes);
  EXPECT_EQ(runs[0].seconds, c.seconds);
  EXPECT_DOUBLE_EQ(runs[0].bandwidth, static_cast<double>(c.bytes) / c.seconds);
  EXPECT_EQ(runs[0].line, c.line);
  EXPECT_EQ(runs[0].partial_records, c.partial);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DdReal,
    ::testing::Values(
        RealCase{"gnu-1M-64.txt", 67108864, 0.00111468, 3, ""},              // GB/s, MiB
        RealCase{"gnu-4KiB-10.txt", 40960, 3.991e-05, 3, ""},                // kB, KiB
        RealCase{"gnu-8M-16-direct.txt", 134217728, 0.0723784, 3, ""},
        RealCase{"gnu-1G-4.txt", 4294967296, 3.65079, 3, ""},                // GiB
        RealCase{"gnu-1-100.txt", 100, 7.2458e-05, 3, ""},                   // no human part
        RealCase{"gnu-1byte.txt", 1, 3.3359e-05, 3, ""},                     // "1 byte", kB/s
        RealCase{"gnu-slow-partial.txt", 3, 1.20309, 3, "0+1 records in"},   // 0.0 kB/s
        RealCase{"gnu-partial-1K.txt", 1048600, 0.00463992, 3, "1024+1 records in"},  // MB/s
        // The progress updates on line 1 (whole seconds, '\r'-separated) are not runs.
        RealCase{"gnu-progress.txt", 1572864000, 3.78431, 4, ""}),
    [](const auto& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST(Dd, RunsWithOtherTextBetween) {
  auto runs = parse_dd(data_text("dd/gnu-five-runs.txt"), "gnu-five-runs.txt");
  ASSERT_EQ(runs.size(), 5u);
  const std::vector<double> seconds = {0.00336897, 0.00972838, 0.00828109, 0.0104624, 0.0172474};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(runs[i].bytes, 209715200u * (i + 1));
    EXPECT_EQ(runs[i].seconds, seconds[i]);
    EXPECT_EQ(runs[i].line, 5 + 5 * i);
  }
}

// Forms this machine's dd does not print, written as the respective dd versions print them.
TEST(Dd, OtherForms) {
  auto runs = parse_dd(
      "8589934592 bytes copied, 1.95557 s\n"                               // no rate field
      "8589934592 bytes (8.6 GB) copied, 2.5 seconds, 3.4 GB/s\n"          // coreutils < 8.24
      "1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.5 s, 2.0 MiB/s\n"         // binary rate unit
      "  4096 bytes copied, 0.25 s, 16.4 kB/s  \r\n"                       // indented, CRLF
      "4096 bytes (4,1 kB, 4,0 KiB) copied, 0,125 s, 32,8 kB/s\n",         // decimal comma
      "forms.txt");
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[0].seconds, 1.95557);
  EXPECT_EQ(runs[1].bytes, 8589934592u);
  EXPECT_EQ(runs[1].seconds, 2.5);
  EXPECT_EQ(runs[2].bandwidth, 2097152.0);
  EXPECT_EQ(runs[3].bandwidth, 16384.0);
  EXPECT_EQ(runs[4].seconds, 0.125);
  EXPECT_EQ(runs[4].line, 5u);
}

TEST(Dd, LinesThatAreNotSummaries) {
  // "bytes" not right after the number, and "bytesize" are other text.
  auto runs = parse_dd("total of 100 bytes\n100 bytesize\n10 bytes copied, 1 s\n", "x.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].line, 3u);
}

TEST(Dd, NoSummaryLine) {
  EXPECT_EQ(error_of([] { parse_dd("hello\nworld\n", "a.txt"); }),
            "a.txt: no dd summary line (\"N bytes ... copied, S s, ...\"): pass the standard "
            "error of dd (dd ... 2>FILE), or choose another --format");
  EXPECT_EQ(error_of([] { parse_dd("", "empty.txt"); }),
            "empty.txt: no dd summary line (\"N bytes ... copied, S s, ...\"): pass the standard "
            "error of dd (dd ... 2>FILE), or choose another --format");
}

TEST(Dd, BusyboxWithoutSummary) {
  EXPECT_EQ(error_of([] { parse_dd(data_text("dd/busybox-no-summary.txt"), "bb.txt"); }),
            "bb.txt: dd \"records in/out\" lines but no summary line (\"N bytes ... copied, S s, "
            "...\"): this dd does not print one (busybox?); use GNU dd, or give the times as "
            "plain numbers with --format numbers");
}

TEST(Dd, MalformedSummary) {
  const std::string expected_tail =
      ": expected \"N bytes (H, H) copied, S s, R UNIT/s\" as GNU dd prints it";
  EXPECT_EQ(error_of([] { parse_dd("1+0 records in\n8589934592 bytes garbage\n", "m.txt"); }),
            "m.txt:2: malformed dd summary line \"8589934592 bytes garbage\"" + expected_tail);
  // Cut off, e.g. a console log that ended mid-line.
  EXPECT_EQ(error_of([] { parse_dd("8589934592 bytes (8.6 GB, 8", "m.txt"); }),
            "m.txt:1: malformed dd summary line \"8589934592 bytes (8.6 GB, 8\"" + expected_tail);
  EXPECT_EQ(error_of([] { parse_dd("1 bytes copied, 2 s, 4.4\n", "m.txt"); }),
            "m.txt:1: malformed dd summary line \"1 bytes copied, 2 s, 4.4\"" + expected_tail);
  EXPECT_EQ(error_of([] { parse_dd("99999999999999999999 bytes copied, 2 s\n", "m.txt"); }),
            "m.txt:1: malformed dd summary line \"99999999999999999999 bytes copied, 2 s\"" +
                expected_tail);
}

TEST(Dd, BadSeconds) {
  const std::string tail =
      " s\"; a run must take a positive, finite time (use a larger count= so that each run "
      "lasts at least a second)";
  EXPECT_EQ(error_of([] { parse_dd("ok\n1024 bytes (1.0 kB, 1.0 KiB) copied, 0 s, Infinity B/s\n",
                                   "t.txt"); }),
            "t.txt:2: dd reports a time of \"0" + tail);
  EXPECT_EQ(error_of([] { parse_dd("1024 bytes copied, -1.5 s, 1 kB/s\n", "t.txt"); }),
            "t.txt:1: dd reports a time of \"-1.5" + tail);
  EXPECT_EQ(error_of([] { parse_dd("1024 bytes copied, nan s\n", "t.txt"); }),
            "t.txt:1: dd reports a time of \"nan" + tail);
  EXPECT_EQ(error_of([] { parse_dd("1024 bytes copied, fast s\n", "t.txt"); }),
            "t.txt:1: dd reports a time of \"fast" + tail);
}

TEST(Dd, LooksLikeDd) {
  EXPECT_TRUE(looks_like_dd(data_text("seed/dd-with-patches.txt")));
  EXPECT_FALSE(looks_like_dd(data_text("dd/busybox-no-summary.txt")));
  EXPECT_FALSE(looks_like_dd("1\n2\n3\n"));
}

}  // namespace
}  // namespace abvm
