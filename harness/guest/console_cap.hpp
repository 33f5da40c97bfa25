#pragma once
// What abvm keeps of a guest's console: all of it up to a limit; beyond it, the first and the
// last half of the limit, and a line between them saying how much was left out. Memory stays
// within the limit (plus one read) however much the guest prints. The libvirt driver and the
// tests' fake driver keep a console through this, so the trial sees the same text from both.
#include <cstdint>
#include <string>
#include <string_view>

#include "guest/driver.hpp"

namespace abvm {

class ConsoleCap {
 public:
  explicit ConsoleCap(std::uint64_t limit);

  // Appends what the guest printed next. True from the moment more than the limit was seen.
  bool add(std::string_view more);
  bool cut() const { return seen_ > limit_; }
  std::uint64_t seen() const { return seen_; }
  std::uint64_t limit() const { return limit_; }

  // The console while it is within the limit (what `done` predicates look at).
  std::string_view so_far() const { return head_; }

  // The whole console; once cut: head, "\n[abvm: N console bytes left out: ...]\n", tail.
  std::string text() const;

 private:
  std::uint64_t limit_;
  std::uint64_t seen_ = 0;
  std::string head_;   // the first bytes (all of them while not cut)
  std::string tail_;   // once cut: the last limit/2 bytes at least, trimmed now and then
};

// Puts the console into `outcome` as the trial sees it: whole, or cut (driver.hpp, GuestOutcome).
void keep_console(const ConsoleCap& console, GuestOutcome& outcome);

}  // namespace abvm
