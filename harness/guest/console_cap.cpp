#include "guest/console_cap.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace abvm {

ConsoleCap::ConsoleCap(std::uint64_t limit) : limit_(limit) {}

bool ConsoleCap::add(std::string_view more) {
  const std::uint64_t before = seen_;
  seen_ += more.size();
  if (seen_ <= limit_) {
    head_.append(more);
    return false;
  }
  const std::size_t half = static_cast<std::size_t>(limit_ / 2);
  if (before <= limit_) {
    // Crossing the limit: the head keeps the first half; what follows starts the tail.
    if (head_.size() > half) {
      tail_ = head_.substr(half);
      head_.resize(half);
    } else {
      const std::size_t take = std::min(half - head_.size(), more.size());
      head_.append(more.substr(0, take));
      more.remove_prefix(take);
    }
  }
  if (more.size() >= half) {
    tail_.assign(more.substr(more.size() - half));
  } else {
    tail_.append(more);
    // Trimmed only when twice the size needed: each byte is moved a bounded number of times.
    if (tail_.size() > 2 * half) tail_.erase(0, tail_.size() - half);
  }
  return true;
}

std::string ConsoleCap::text() const {
  if (!cut()) return head_;
  const std::size_t half = static_cast<std::size_t>(limit_ / 2);
  const std::string_view tail = std::string_view(tail_).substr(tail_.size() > half ? tail_.size() - half : 0);
  const std::uint64_t left_out = seen_ - head_.size() - tail.size();
  return fmt::format("{}\n[abvm: {} console bytes left out here: the guest printed {} bytes, more than "
                     "schedule.console_limit = {}; the first and the last {} are kept]\n{}",
                     head_, left_out, seen_, limit_, half, tail);
}

void keep_console(const ConsoleCap& console, GuestOutcome& outcome) {
  outcome.console = console.text();
  outcome.console_cut = console.cut();
  outcome.console_bytes = console.seen();
  if (outcome.console_cut && outcome.end != GuestOutcome::End::infra_error) {
    outcome.end = GuestOutcome::End::finished;
    outcome.detail = fmt::format("the guest printed {} console bytes, more than schedule.console_limit = {}, and was "
                                 "destroyed",
                                 console.seen(), console.limit());
  }
}

}  // namespace abvm
