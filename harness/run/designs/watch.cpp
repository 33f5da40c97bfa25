#include "run/designs/watch.hpp"

#include <algorithm>
#include <charconv>

#include "guest/records.hpp"
#include "run/designs/windows.hpp"

namespace abvm {

void GuestWatch::attempt_started(const std::string& nonce) {
  prefix_ = record_prefix(nonce);
  scanned_ = 0;
  next_seen_ = false;
  log_ = {};
  reader_ = nullptr;
}

void GuestWatch::console(std::string_view text) {
  if (scanned_ > text.size()) return;  // the console was cut: the guest is being stopped
  const double now = host_now();
  while (true) {
    const std::size_t nl = text.find('\n', scanned_);
    if (nl == std::string_view::npos) break;
    std::string_view line = text.substr(scanned_, nl - scanned_);
    scanned_ = nl + 1;
    const std::size_t at = line.find(prefix_);
    if (at == std::string_view::npos) continue;
    line.remove_prefix(at + prefix_.size());
    // "<seq>:<type>:<payload>:<md5>"
    std::uint64_t seq = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), seq);
    if (ec != std::errc() || end == line.data() + line.size() || *end != ':') continue;
    line.remove_prefix(static_cast<std::size_t>(end - line.data()) + 1);
    const std::size_t colon = line.find(':'), last = line.rfind(':');
    if (colon == std::string_view::npos || last == colon) continue;
    log_.received.emplace(seq, now);
    const std::string_view type = line.substr(0, colon), payload = line.substr(colon + 1, last - colon - 1);
    // An unpaced run's edges as the host sees them (no partner measures then): its RUN and RUNEND
    // have four fields, a paced run's (printed after its window) more.
    // A paced run's window ends, for its cost, at its DONE: printed once its filler has started, so
    // that the window holds its run and not the filler's tail until the stop (in co-scheduled pairs
    // the faster side's tail is the partner's extra time: on ruler-3's 2.4 s dd it put 30 % more host
    // CPU per GiB on the faster side, the filler's dd held back by the throttle; README, "Cost").
    // An unpaced run's start is read at its NEXT (before its preparation, so that the read does not
    // fall into the tool's run), or at its RUN where no NEXT came (agents before it).
    const bool fields4 = std::count(payload.begin(), payload.end(), ',') == 3;
    const bool run_edge = type == "NEXT" || (type == "RUN" && fields4 && !next_seen_) || (type == "RUNEND" && fields4);
    if (type == "NEXT" || type == "RUN") next_seen_ = type == "NEXT";
    if (reader_ && (run_edge || type == "DONE") && log_.read_at.size() < kMaxClockMarks) {
      log_.read_at.emplace(seq, reader_());
    }
    on_record(seq, type, payload);
  }
}

std::string GuestWatch::input() {
  std::string word = next_word();
  if (word.empty()) return "";
  // A window's cost: read before the word goes out, so that nothing is read while the guest measures.
  std::optional<DomainStatsReading> stats;
  if (reader_ && (word.starts_with("go ") || word.starts_with("stop "))) stats = reader_();
  log_.typed.push_back({.word = word, .at = host_now(), .stats = std::move(stats)});
  return word + "\n";
}

}  // namespace abvm
