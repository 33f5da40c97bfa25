// What abvm keeps of a console (guest/console_cap.hpp): all of it within the limit; beyond it
// the first and the last half of the limit, whatever the size of the pieces it arrives in.
#include <gtest/gtest.h>

#include <string>

#include "guest/console_cap.hpp"

using namespace abvm;

namespace {

std::string numbered(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += std::to_string(i) + "\n";
  s.resize(n);
  return s;
}

TEST(ConsoleCap, WithinTheLimitEverythingIsKept) {
  ConsoleCap c(100);
  EXPECT_FALSE(c.add(std::string(60, 'a')));
  EXPECT_FALSE(c.add(std::string(40, 'b')));
  EXPECT_FALSE(c.cut());
  EXPECT_EQ(c.text(), std::string(60, 'a') + std::string(40, 'b'));
  EXPECT_EQ(c.so_far(), c.text());
}

TEST(ConsoleCap, BeyondTheLimitHeadAndTailWhateverThePieces) {
  const std::string text = numbered(100000);
  const std::string expected = text.substr(0, 500) +
                               "\n[abvm: 99000 console bytes left out here: the guest printed 100000 bytes, more "
                               "than schedule.console_limit = 1000; the first and the last 500 are kept]\n" +
                               text.substr(100000 - 500);
  for (const std::size_t piece : {1ul, 7ul, 499ul, 500ul, 1001ul, 100000ul}) {
    ConsoleCap c(1000);
    for (std::size_t at = 0; at < text.size(); at += piece) c.add(std::string_view(text).substr(at, piece));
    EXPECT_TRUE(c.cut());
    EXPECT_EQ(c.seen(), 100000u);
    EXPECT_EQ(c.text(), expected) << "pieces of " << piece;
  }
}

TEST(ConsoleCap, KeepConsoleMarksTheOutcome) {
  ConsoleCap c(1000);
  c.add(std::string(1001, 'x'));
  GuestOutcome o{.end = GuestOutcome::End::powered_off};
  keep_console(c, o);
  EXPECT_TRUE(o.console_cut);
  EXPECT_EQ(o.console_bytes, 1001u);
  EXPECT_EQ(o.end, GuestOutcome::End::finished);
  EXPECT_EQ(o.detail, "the guest printed 1001 console bytes, more than schedule.console_limit = 1000, and was destroyed");
}

}  // namespace
