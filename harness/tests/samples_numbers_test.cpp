// Tests of samples/numbers.hpp on the hand-written fixtures in tests/data/numbers/.
#include "samples/numbers.hpp"

#include <gtest/gtest.h>

#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data_text;
using test::error_of;

TEST(Numbers, ValuesCommentsAndBlankLines) {
  auto values = parse_numbers(data_text("numbers/latency-a.txt"), "latency-a.txt");
  ASSERT_EQ(values.size(), 5u);
  const double expected[] = {12.5, 13.0, 12.8, 13.0, 12.9};
  const std::size_t lines[] = {2, 3, 5, 6, 7};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(values[i].value, expected[i]);
    EXPECT_EQ(values[i].line, lines[i]);
  }
}

TEST(Numbers, NegativeAndCrlf) {
  auto values = parse_numbers("-1.5\r\n2e-3\r\n", "x.txt");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].value, -1.5);
  EXPECT_EQ(values[1].value, 0.002);
}

TEST(Numbers, Errors) {
  EXPECT_EQ(error_of([] { parse_numbers(data_text("numbers/nan.txt"), "nan.txt"); }),
            "nan.txt:2: \"nan\" is not a finite number: remove the line or replace it with the "
            "measured value");
  EXPECT_EQ(error_of([] { parse_numbers(data_text("numbers/inf.txt"), "inf.txt"); }),
            "inf.txt:2: \"-inf\" is not a finite number: remove the line or replace it with the "
            "measured value");
  EXPECT_EQ(error_of([] { parse_numbers(data_text("numbers/unit-on-line.txt"), "u.txt"); }),
            "u.txt:2: \"13 ms\" is not a number: write one value per line ('#' starts a comment)");
  EXPECT_EQ(error_of([] { parse_numbers(data_text("numbers/comments-only.txt"), "c.txt"); }),
            "c.txt: no values: write one number per line");
  EXPECT_EQ(error_of([] { parse_numbers("", "e.txt"); }),
            "e.txt: no values: write one number per line");
}

// Issue 11 item 5. Before: "\xEF\xBB\xBF1010" is not a number; "1e400" is not a number.
TEST(Numbers, ByteOrderMarkIsSkippedAndOutOfRangeSaysSo) {
  auto values = parse_numbers("\xEF\xBB\xBF" "1010\n1020\n", "bom.txt");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].value, 1010);
  EXPECT_EQ(values[0].line, 1u);
  EXPECT_TRUE(looks_like_numbers("\xEF\xBB\xBF" "1010\n"));

  for (const char* big : {"1e400", "-1e400", "1e-400"}) {
    EXPECT_EQ(error_of([&] { parse_numbers(std::string("1\n") + big + "\n", "r.txt"); }),
              std::string("r.txt:2: \"") + big +
                  "\" is out of range: a value must lie between about 4.9e-324 and 1.8e308 in magnitude; check its unit");
    EXPECT_TRUE(looks_like_numbers(std::string("1\n") + big + "\n")) << big;  // auto-detection names the line
  }
  // Denormals and values near the top of the range are numbers.
  auto edge = parse_numbers("1e-310\n1.7e308\n4.9e-324\n", "edge.txt");
  ASSERT_EQ(edge.size(), 3u);
  EXPECT_EQ(edge[0].value, 1e-310);
  EXPECT_EQ(edge[1].value, 1.7e308);
  EXPECT_GT(edge[2].value, 0);
}

TEST(Numbers, LooksLikeNumbers) {
  std::size_t bad = 99;
  EXPECT_TRUE(looks_like_numbers(data_text("numbers/latency-b.txt"), &bad));
  EXPECT_TRUE(looks_like_numbers(data_text("numbers/nan.txt")));  // so that the parser names it
  EXPECT_FALSE(looks_like_numbers(data_text("numbers/unit-on-line.txt"), &bad));
  EXPECT_EQ(bad, 2u);
  EXPECT_FALSE(looks_like_numbers("# only\n", &bad));
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace abvm
