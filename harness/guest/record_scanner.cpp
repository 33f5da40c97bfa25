#include "guest/record_scanner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

namespace abvm::detail {
namespace {

// Kernel text inside a record line: the record's tail is looked for after this many line breaks.
constexpr int kMaxLines = 4;

// Problems about single records that a report lists; a count stands for the rest.
constexpr std::size_t kMaxListedProblems = 100;

bool is_record_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '=' || c == ',' || c == '.' || c == '_' || c == ':' || c == '-';
}

enum class Check { ok, malformed, foreign, bad_checksum };

// Checks one candidate record text "ABVM2:nonce:seq:type:payload:md5". At most six fields are
// split off, within kMaxRecordLength: a run of nested markers costs each marker a few fields,
// not the rest of the run.
Check check_record(std::string_view text, std::string_view nonce, Record& out, ParseWork& work) {
  if (text.substr(0, kMarker.size()) != kMarker) return Check::malformed;
  std::string_view rest = text.substr(kMarker.size(), kMaxRecordLength);
  std::array<std::string_view, 6> f;
  std::size_t n = 0;
  while (n < f.size()) {
    const auto colon = rest.find(':');
    f[n++] = rest.substr(0, colon);
    work.scanned += std::min(colon, rest.size());
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (n != 5) return n > 1 && f[0] != nonce ? Check::foreign : Check::malformed;
  if (f[0] != nonce) return Check::foreign;
  if (f[4].size() != 32 || text.size() > kMaxRecordLength) return Check::malformed;
  const std::string_view body = text.substr(kMarker.size(), text.size() - kMarker.size() - 33);
  work.hashed += body.size();
  if (md5_hex(body) != f[4]) return Check::bad_checksum;
  const auto [ptr, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), out.seq);
  if (ec != std::errc() || ptr != f[1].data() + f[1].size()) return Check::malformed;
  out.type = std::string(f[2]);
  out.payload = std::string(f[3]);
  return Check::ok;
}

// Record characters at the start of a line, after the line break(s) that ended kernel text.
struct Tail {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t colons = 0;
};

// Finds the records of one nonce, visiting each console byte a bounded number of times. Nested
// markers (ABVM2:ABVM2:...) share their run, their line and its tails, so those are cached;
// rebuilding split records hashes at most kRecoveryBudgetBase + kRecoveryBudgetPerByte bytes
// per console byte in all.
class RecordScanner {
 public:
  RecordScanner(std::string_view console, std::string_view nonce, ParseWork& work)
      : console_(console), nonce_(nonce), work_(work),
        budget_(kRecoveryBudgetBase + kRecoveryBudgetPerByte * console.size()) {}

  std::map<std::uint64_t, Record> collect(std::vector<std::string>& problems);

 private:
  std::size_t run_end(std::size_t from);
  std::size_t next_newline(std::size_t from);
  const std::vector<Tail>& tails(std::size_t head_end);
  std::optional<Record> recover(std::size_t start, std::size_t head_end);
  std::optional<Record> try_tail(std::size_t start, std::size_t head_end, const Tail& tail,
                                 const std::array<std::size_t, 5>& colons, std::size_t ncolons);
  template <typename... Args>
  void note(std::vector<std::string>& problems, fmt::format_string<Args...> text, Args&&... args);

  std::string_view console_;
  std::string_view nonce_;
  ParseWork& work_;
  std::uint64_t budget_;
  bool exhausted_ = false;
  std::size_t run_from_ = 1, run_to_ = 0;   // the last head run (empty at first)
  std::size_t nl_from_ = 1, nl_at_ = 0;     // the last newline query and its answer
  std::size_t tails_key_ = std::string_view::npos - 1;
  std::vector<Tail> tails_;
  std::size_t unlisted_ = 0;                // problems beyond kMaxListedProblems
};

// Every marker inside a run of record characters ends where the run ends.
std::size_t RecordScanner::run_end(std::size_t from) {
  if (from >= run_from_ && from < run_to_) return run_to_;
  std::size_t end = from;
  while (end < console_.size() && is_record_char(console_[end])) ++end;
  work_.scanned += end - from;
  run_from_ = from;
  run_to_ = end;
  return end;
}

// Queries come in increasing order from the main loop: a line is scanned once.
std::size_t RecordScanner::next_newline(std::size_t from) {
  if (from >= nl_from_ && from <= nl_at_) return nl_at_;
  nl_from_ = from;
  nl_at_ = console_.find('\n', from);
  work_.scanned += (nl_at_ == std::string_view::npos ? console_.size() : nl_at_) - from;
  return nl_at_;
}

// The candidate tails of a head ending at `head_end`: the record characters at the start of each
// of the next kMaxLines lines. Every head whose first line break is the same shares them.
const std::vector<Tail>& RecordScanner::tails(std::size_t head_end) {
  std::size_t nl = next_newline(head_end);
  if (nl == tails_key_) return tails_;
  tails_key_ = nl;
  tails_.clear();
  for (int line = 0; line < kMaxLines && nl != std::string_view::npos; ++line) {
    Tail t{.begin = nl + 1};
    while (t.begin < console_.size() && console_[t.begin] == '\r') ++t.begin;
    t.end = t.begin;
    while (t.end < console_.size() && t.end - t.begin <= kMaxRecordLength && is_record_char(console_[t.end])) {
      t.colons += console_[t.end++] == ':';
    }
    work_.scanned += t.end - nl;
    if (t.end > t.begin && t.end - t.begin <= kMaxRecordLength &&
        console_.substr(t.begin, kMarker.size()) != kMarker) {
      tails_.push_back(t);
    }
    const std::size_t next = console_.find('\n', t.end);
    work_.scanned += (next == std::string_view::npos ? console_.size() : next) - t.end;
    nl = next;
  }
  return tails_;
}

// Kernel text printed mid-record leaves the record's head, then the kernel's line(s), then the
// record's tail on a later line. The head's run may end with the first word of the kernel text
// (at most kMaxGluedKernelText bytes), and the record is at most kMaxRecordLength: the split
// points left are tried against the tail after each of the next few line breaks, and the
// checksum says which one is right.
std::optional<Record> RecordScanner::recover(std::size_t start, std::size_t head_end) {
  if (exhausted_ || head_end - start > kMaxRecordLength + kMaxGluedKernelText) return std::nullopt;
  // Where the head's first colons are says which field a split point falls in.
  std::array<std::size_t, 5> colons{};
  std::size_t ncolons = 0;
  const std::size_t limit = std::min(head_end, start + kMaxRecordLength);
  for (std::size_t i = start + kMarker.size(); i < limit && ncolons < colons.size(); ++i) {
    ++work_.scanned;
    if (console_[i] == ':') colons[ncolons++] = i;
  }
  for (const Tail& tail : tails(head_end)) {
    if (auto r = try_tail(start, head_end, tail, colons, ncolons)) return r;
    if (exhausted_) return std::nullopt;
  }
  return std::nullopt;
}

// The split points k (the head is console[start, k)) that give the candidate exactly five
// fields, longest head first.
std::optional<Record> RecordScanner::try_tail(std::size_t start, std::size_t head_end, const Tail& tail,
                                              const std::array<std::size_t, 5>& colons, std::size_t ncolons) {
  const std::size_t tail_size = tail.end - tail.begin;
  if (tail.colons > 4 || ncolons < 4 - tail.colons) return std::nullopt;
  const std::size_t c = 4 - tail.colons;  // colons the head part holds
  std::size_t lo = c == 0 ? start + kMarker.size() + 1 : colons[c - 1] + 1;
  std::size_t hi = c < ncolons ? colons[c] : head_end;
  if (c == 4) {  // the split falls inside the MD5: its 32 digits fix the split point
    if (tail_size > 32) return std::nullopt;
    lo = std::max(lo, colons[3] + 1 + 32 - tail_size);
    hi = std::min(hi, colons[3] + 1 + 32 - tail_size);
  }
  lo = std::max(lo, head_end - std::min(head_end, kMaxGluedKernelText));
  hi = std::min({hi, head_end, start + kMaxRecordLength - std::min(tail_size, kMaxRecordLength)});
  for (std::size_t k = hi; k >= lo && k > start; --k) {
    const std::size_t size = k - start + tail_size;
    if (size > budget_) {
      exhausted_ = true;
      return std::nullopt;
    }
    budget_ -= size;
    std::string candidate(console_.substr(start, k - start));
    candidate += console_.substr(tail.begin, tail_size);
    Record r;
    if (check_record(candidate, nonce_, r, work_) == Check::ok) return r;
  }
  return std::nullopt;
}

// A hostile console can hold millions of broken records: the first kMaxListedProblems are
// listed, the rest counted.
template <typename... Args>
void RecordScanner::note(std::vector<std::string>& problems, fmt::format_string<Args...> text, Args&&... args) {
  if (problems.size() < kMaxListedProblems) problems.push_back(fmt::format(text, std::forward<Args>(args)...));
  else ++unlisted_;
}

// Every record of this nonce by sequence number: checked, rebuilt where kernel text split it.
// What cannot be trusted goes to `problems`.
std::map<std::uint64_t, Record> RecordScanner::collect(std::vector<std::string>& problems) {
  std::map<std::uint64_t, Record> records;
  for (std::size_t pos = console_.find(kMarker); pos != std::string_view::npos;
       pos = console_.find(kMarker, pos + 1)) {
    const std::size_t end = run_end(pos);
    Record r;
    const Check check = check_record(console_.substr(pos, end - pos), nonce_, r, work_);
    if (check == Check::foreign) {
      note(problems, "console byte {}: record with a foreign nonce ignored", pos);
      continue;
    }
    if (check != Check::ok) {
      const bool was_exhausted = exhausted_;
      if (auto fixed = recover(pos, end)) {
        r = std::move(*fixed);
      } else {
        if (exhausted_ && !was_exhausted) {
          note(problems,
               "console byte {}: records split by other text are no longer rebuilt: the console needs more "
               "checksum work than {} bytes plus {} per console byte",
               pos, kRecoveryBudgetBase, kRecoveryBudgetPerByte);
        }
        note(problems, "console byte {}: {}; record ignored", pos,
             check == Check::bad_checksum ? "bad checksum" : "truncated or malformed record");
        continue;
      }
    }
    const auto seq = r.seq;
    if (auto [it, inserted] = records.emplace(seq, std::move(r)); !inserted) {
      note(problems, "record {} appears twice; the first one is kept", seq);
    }
  }
  if (unlisted_ > 0) problems.push_back(fmt::format("{} more problems of this kind are not listed", unlisted_));
  return records;
}

}  // namespace

std::map<std::uint64_t, Record> collect_records(std::string_view console, std::string_view nonce, ParseWork& work,
                                                std::vector<std::string>& problems) {
  return RecordScanner(console, nonce, work).collect(problems);
}

}  // namespace abvm::detail
