#include "core/units.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "core/error.hpp"

namespace abvm {
namespace {

using std::chrono::milliseconds;

std::string size_error(std::string_view text) {
  try {
    parse_size(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string duration_error(std::string_view text) {
  try {
    parse_duration(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Units, SizesAreBinaryLikeDdAndFio) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("17B"), 17u);
  EXPECT_EQ(parse_size("512K"), 512u * 1024);
  EXPECT_EQ(parse_size("8M"), 8u * 1024 * 1024);
  EXPECT_EQ(parse_size("8m"), 8u * 1024 * 1024);
  EXPECT_EQ(parse_size("8MiB"), 8u * 1024 * 1024);
  EXPECT_EQ(parse_size("1G"), 1024u * 1024 * 1024);
  EXPECT_EQ(parse_size("10gib"), 10ull * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
  // The seed's transfer: bs=8M count=1024 is 8589934592 bytes.
  EXPECT_EQ(parse_size("8M") * 1024, 8589934592ull);
}

TEST(Units, SizeErrorsSayWhatIsAccepted) {
  EXPECT_EQ(size_error("1Q"),
            "invalid size '1Q': write a whole number of bytes with an optional K, M, G or T suffix "
            "(binary: 1K = 1024), e.g. \"512K\", \"8M\", \"1G\"");
  for (const char* bad : {"", "M", "1.5G", " 1G", "1G ", "-1", "1 G", "1KB", "99999999999999999999",
                          "17179869184G"}) {
    EXPECT_NE(size_error(bad), "(no error)") << "'" << bad << "'";
  }
  // The largest representable size still parses; one more overflows.
  EXPECT_EQ(parse_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_NE(size_error("18446744073709551616"), "(no error)");
  EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);
  EXPECT_NE(size_error("16777216T"), "(no error)");
}

TEST(Units, Durations) {
  EXPECT_EQ(parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(parse_duration("60s"), milliseconds(60'000));
  EXPECT_EQ(parse_duration("2m"), milliseconds(120'000));
  EXPECT_EQ(parse_duration("1h"), milliseconds(3'600'000));
  EXPECT_EQ(parse_duration("1H"), milliseconds(3'600'000));
  EXPECT_EQ(parse_duration("0s"), milliseconds(0));
}

TEST(Units, DurationErrorsSayWhatIsAccepted) {
  EXPECT_EQ(duration_error("60"),
            "invalid duration '60': write a whole number with a unit ms, s, m or h, e.g. \"500ms\", "
            "\"60s\", \"2m\", \"1h\"");
  for (const char* bad : {"", "s", "1.5s", "1d", "1 s", "-1s", "99999999999999999999h"}) {
    EXPECT_NE(duration_error(bad), "(no error)") << "'" << bad << "'";
  }
}

TEST(Units, FormattingRoundTrips) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(1024), "1K");
  EXPECT_EQ(format_size(8u << 20), "8M");
  EXPECT_EQ(format_size(1536u << 20), "1536M");
  EXPECT_EQ(format_size(1ull << 30), "1G");
  EXPECT_EQ(format_size(3ull << 40), "3T");
  EXPECT_EQ(format_duration(milliseconds(500)), "500ms");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "90s");
  EXPECT_EQ(format_duration(milliseconds(120'000)), "2m");
  EXPECT_EQ(format_duration(milliseconds(7'200'000)), "2h");
  EXPECT_EQ(format_duration(milliseconds(0)), "0s");
  for (std::uint64_t bytes : {0ull, 1ull, 1023ull, 4096ull, 3ull << 20, (1ull << 40) + 1}) {
    EXPECT_EQ(parse_size(format_size(bytes)), bytes);
  }
  for (long ms : {0L, 1L, 999L, 1500L, 61'000L, 3'600'001L}) {
    EXPECT_EQ(parse_duration(format_duration(milliseconds(ms))), milliseconds(ms));
  }
}

}  // namespace
}  // namespace abvm
