#include "guest/records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>

namespace abvm {
namespace {

// ---- MD5 (RFC 1321), compact: records are short and few. ----
constexpr std::array<std::uint32_t, 64> kMd5K = [] {
  // floor(abs(sin(i + 1)) * 2^32), tabulated in RFC 1321.
  return std::array<std::uint32_t, 64>{
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
      0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
      0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
      0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
      0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
      0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
      0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
}();
constexpr std::array<int, 64> kMd5S = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                       5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                       4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                       6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

std::uint32_t rotl(std::uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

// Streaming MD5: the parser hashes a candidate record as two pieces (a head and a tail) without
// building it, and nothing is copied or padded in a second buffer.
class Md5 {
 public:
  void update(std::string_view data) {
    length_ += data.size();
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t n = data.size();
    if (used_ > 0) {
      const std::size_t take = std::min(64 - used_, n);
      std::memcpy(buf_.data() + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ < 64) return;
      block(buf_.data());
      used_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(p);
    std::memcpy(buf_.data(), p, n);
    used_ = n;
  }

  std::string hex() {
    const std::uint64_t bits = length_ * 8;
    const unsigned char pad = 0x80;
    update(std::string_view(reinterpret_cast<const char*>(&pad), 1));
    while (used_ != 56) update(std::string_view("\0", 1));
    for (int i = 0; i < 8; ++i) buf_[used_++] = static_cast<unsigned char>((bits >> (8 * i)) & 0xff);
    block(buf_.data());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(32, '0');
    for (std::size_t i = 0; i < 16; ++i) {
      const unsigned byte = (h_[i / 4] >> (8 * (i % 4))) & 0xff;
      out[2 * i] = kHex[byte >> 4];
      out[2 * i + 1] = kHex[byte & 15];
    }
    return out;
  }

 private:
  void block(const unsigned char* p) {
    std::uint32_t m[16];
    for (std::size_t i = 0; i < 16; ++i) {
      m[i] = p[4 * i] | (p[4 * i + 1] << 8) | (p[4 * i + 2] << 16) | (static_cast<std::uint32_t>(p[4 * i + 3]) << 24);
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t f;
      int g;
      if (i < 16) { f = (b & c) | (~b & d); g = i; }
      else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16; }
      else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16; }
      else { f = c ^ (b | ~d); g = (7 * i) % 16; }
      const std::uint32_t next = b + rotl(a + f + kMd5K[static_cast<std::size_t>(i)] + m[g], kMd5S[static_cast<std::size_t>(i)]);
      a = d; d = c; c = b; b = next;
    }
    h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
  }

  std::array<std::uint32_t, 4> h_ = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  std::array<unsigned char, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace

std::string md5_hex(std::string_view data) {
  Md5 md5;
  md5.update(data);
  return md5.hex();
}

namespace {

// The only spelling of the record format's marker (and its version).
constexpr std::string_view kMarker = "ABVM1:";

// Kernel text inside a record line: the record's tail is looked for after this many line breaks.
constexpr int kMaxLines = 4;

// Problems about single records that a report lists; a count stands for the rest.
constexpr std::size_t kMaxListedProblems = 100;

}  // namespace

std::string format_guest_record(std::string_view nonce, std::uint64_t seq, std::string_view type,
                                std::string_view payload) {
  const std::string body = fmt::format("{}:{}:{}:{}", nonce, seq, type, payload);
  return fmt::format("{}{}:{}", kMarker, body, md5_hex(body));
}

std::string record_prefix(std::string_view nonce) { return fmt::format("{}{}:", kMarker, nonce); }

bool console_has_end_record(std::string_view console, std::string_view nonce) {
  const std::string head = record_prefix(nonce);
  std::size_t pos = 0;
  while ((pos = console.find(head, pos)) != std::string_view::npos) {
    const std::size_t eol = console.find('\n', pos);
    // Only a complete line: the checksum after END must have arrived.
    if (eol == std::string_view::npos) return false;
    const std::string_view line = console.substr(pos, eol - pos);
    // ABVM1:<nonce>:<seq>:END:<count>:<md5>
    const std::size_t seq_end = line.find(':', head.size());
    if (seq_end != std::string_view::npos && line.substr(seq_end + 1).starts_with("END:")) return true;
    pos = eol;
  }
  return false;
}

std::size_t find_kernel_panic(std::string_view console) { return console.find("Kernel panic - not syncing"); }

namespace {

bool is_record_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '=' || c == ',' || c == '.' || c == '_' || c == ':' || c == '-';
}

struct Record {
  std::uint64_t seq = 0;
  std::string type;
  std::string payload;
};

enum class Check { ok, malformed, foreign, bad_checksum };

// Checks one candidate record text "ABVM1:nonce:seq:type:payload:md5". At most six fields are
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
// markers (ABVM1:ABVM1:...) share their run, their line and its tails, so those are cached;
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

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (true) {
    const auto p = s.find(sep);
    out.emplace_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

template <typename T>
bool parse_number(const std::string& text, T& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
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

// Reads the checked records, in sequence order, into a GuestReport.
class ReportReader {
 public:
  explicit ReportReader(GuestReport& report) : report_(report) {}

  void take(std::uint64_t seq, const Record& rec) {
    if (report_.ended) {
      bad(rec, "after the end record");
      return;
    }
    if (seq != expected_) {
      report_.problems.push_back(
          seq == expected_ + 1 ? fmt::format("record {} is missing", expected_)
                               : fmt::format("records {} to {} are missing", expected_, seq - 1));
    }
    expected_ = seq + 1;
    const auto fields = split(rec.payload, ',');
    if (rec.type == "BEGIN") {
      report_.begun = true;
      if (fields.size() == 2) {
        report_.trial_id = base64_decode(fields[0]).value_or("");
        if (parse_number(fields[1], report_.boot_uptime)) mark({.seq = seq, .t = report_.boot_uptime});
      }
    } else if (rec.type == "UNAME") {
      if (auto t = text(rec)) report_.kernel_release = *t;
    } else if (rec.type == "KVERSION") {
      if (auto t = text(rec)) report_.kernel_version = *t;
    } else if (rec.type == "CMDLINE") {
      if (auto t = text(rec)) report_.cmdline = *t;
    } else if (rec.type == "FEATURES") {
      features(rec);
    } else if (rec.type == "NEXT") {
      next_run_record(seq, rec, fields);
    } else if (rec.type == "RUN") {
      start_run(seq, rec, fields);
    } else if (rec.type == "OUT") {
      if (!open_run_) bad(rec, "output outside a run");
      else open_b64_ += rec.payload;
    } else if (rec.type == "RUNEND") {
      end_run(seq, rec, fields);
    } else if (rec.type == "CPU") {
      run_cpu(rec, fields);
    } else if (rec.type == "MODPARAM") {
      module_param(rec);
    } else if (rec.type == "DMESG") {
      if (auto t = text(rec)) report_.dmesg.push_back(*t);
    } else if (rec.type == "ERROR") {
      if (auto t = text(rec)) report_.agent_errors.push_back(*t);
    } else if (rec.type == "READY" || rec.type == "DONE") {
      step_record(seq, rec, fields);
    } else if (rec.type == "END") {
      report_.ended = true;
    } else {
      bad(rec, "unknown record type");
    }
  }

  // What the whole sequence lacks: a run left open, the begin or the end record.
  void finish() {
    if (open_run_) {
      report_.problems.push_back(fmt::format("run {} #{} started but never ended (guest stopped mid-run?)",
                                             open_run_->workload, open_run_->index));
    }
    if (!report_.begun) report_.problems.push_back("no begin record: the agent never reported");
    if (report_.begun && !report_.ended) report_.problems.push_back("no end record: the guest output stops early");
  }

 private:
  void bad(const Record& rec, std::string_view why) {
    report_.problems.push_back(fmt::format("record {} ({}): {}", rec.seq, rec.type, why));
  }

  std::optional<std::string> text(const Record& rec) {
    auto decoded = base64_decode(rec.payload);
    if (!decoded) bad(rec, "payload is not base64");
    return decoded;
  }

  // "[<serial>,]<bits>|none": one per scratch disk (the agent before job version 2: no serial).
  void features(const Record& rec) {
    std::string_view payload = rec.payload;
    std::string serial;
    if (const auto comma = payload.find(','); comma != std::string_view::npos) {
      serial = std::string(payload.substr(0, comma));
      payload.remove_prefix(comma + 1);
      if (serial.empty() || serial.size() > 20 || !std::all_of(serial.begin(), serial.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
          })) {
        bad(rec, "disk serial is not a plain name");
        return;
      }
    }
    if (payload == "none") return;
    // sysfs prints one '0'/'1' per feature bit, bit 0 first (virtio's features_show).
    std::uint64_t bits = 0;
    bool good = !payload.empty();
    for (std::size_t i = 0; i < payload.size() && good; ++i) {
      if (payload[i] != '0' && payload[i] != '1') good = false;
      else if (payload[i] == '1' && i < 64) bits |= std::uint64_t{1} << i;
    }
    if (!good) {
      bad(rec, "feature bits are not 0/1");
      return;
    }
    if (!serial.empty()) {
      if (report_.disk_features.size() >= kMaxReportedDisks && !report_.disk_features.contains(serial)) {
        bad(rec, fmt::format("more than {} disks", kMaxReportedDisks));
        return;
      }
      report_.disk_features[serial] = bits;
    }
    if (report_.blk_features) return;  // the first disk's are the guest's
    report_.blk_features = bits;
    report_.access_platform = (bits >> kVirtioFAccessPlatform) & 1;
  }

  // "<module>.<param>=<value>": the name becomes a JSON key and is shown in reports, so it
  // must look like one sysfs could have (module and parameter names are C identifiers).
  void module_param(const Record& rec) {
    const auto t = text(rec);
    if (!t) return;
    const auto eq = t->find('=');
    const std::string name = t->substr(0, eq);
    const auto dot = name.find('.');
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
    if (eq == std::string::npos || dot == 0 || dot == std::string::npos || dot + 1 == name.size() || !plain) {
      bad(rec, "not a module parameter (<module>.<param>=<value>)");
    } else if (report_.module_params.size() >= kMaxModuleParams) {
      bad(rec, fmt::format("more than {} module parameters", kMaxModuleParams));
    } else {
      report_.module_params[name] = t->substr(eq + 1);
    }
  }

  // A paced step: the host reads READY and DONE from the live console; here they are clock marks.
  // READY is "step,t". DONE is "step" (the agent makes it before READY, so that no checksum runs as
  // the measured run ends: its time comes with the run's RUNEND, t_done) or "step,t" (older agents).
  void step_record(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    long step = -1;
    double t = 0;
    const bool timeless_done = rec.type == "DONE" && fields.size() == 1;
    if ((fields.size() != 2 && !timeless_done) || !parse_number(fields[0], step) || step < 0 ||
        (!timeless_done && !parse_number(fields[1], t))) {
      bad(rec, "malformed step record");
      return;
    }
    if (timeless_done) {
      done_seq_[step] = seq;  // a mark once its RUNEND gives the time (bounded: at most one per step)
      if (done_seq_.size() > kMaxClockMarks) done_seq_.erase(step);
    } else {
      mark({.seq = seq, .t = t, .step = step});
    }
    if (rec.type == "DONE" && report_.steps_done.size() < kMaxClockMarks) report_.steps_done.push_back(step);
  }

  void mark(const GuestClockMark& m) {
    if (report_.clock_marks.size() < kMaxClockMarks) report_.clock_marks.push_back(m);
  }
  long next_run() const { return static_cast<long>(report_.runs.size()); }

  // "workload,index,warmup": the unpaced run that RUN will start next is being prepared.
  void next_run_record(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    int index = -1;
    if (fields.size() != 3 || !parse_number(fields[1], index) || (fields[2] != "0" && fields[2] != "1")) {
      bad(rec, "malformed next-run record");
      return;
    }
    next_ = NextRun{.seq = seq, .workload = fields[0], .index = index, .warmup = fields[2] == "1"};
  }

  // "workload,index,warmup,t_start" as the run starts, or after a paced run's window with
  // ",step,t_ready,t_go" more.
  void start_run(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    if (open_run_) bad(rec, fmt::format("run {} #{} has no end", open_run_->workload, open_run_->index));
    open_run_.reset();
    open_b64_.clear();
    open_mark_.reset();
    GuestRun run;
    const bool paced = fields.size() == 7;
    if ((fields.size() != 4 && !paced) || !parse_number(fields[1], run.index) ||
        (fields[2] != "0" && fields[2] != "1") || !parse_number(fields[3], run.t_start)) {
      bad(rec, "malformed run start");
      return;
    }
    if (paced) {
      GuestWindow w;
      if (!parse_number(fields[4], w.step) || w.step < 0 || !parse_number(fields[5], w.t_ready) ||
          !parse_number(fields[6], w.t_go)) {
        bad(rec, "malformed run start");
        return;
      }
      run.window = w;
    } else {
      open_mark_ = GuestClockMark{.seq = seq, .t = run.t_start};  // kept once the run has ended well
    }
    // The name becomes a file name on the host (trials/<id>/<workload>-run<i>.out): only the
    // job's own name characters, so a guest cannot name a run "../../x".
    if (fields[0].empty() || fields[0] == "." || fields[0] == ".." ||
        !std::all_of(fields[0].begin(), fields[0].end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        })) {
      bad(rec, fmt::format("workload name '{}' is not a plain name", fields[0]));
      return;
    }
    run.workload = fields[0];
    run.warmup = fields[2] == "1";
    if (next_ && !run.window && next_->workload == run.workload && next_->index == run.index &&
        next_->warmup == run.warmup) {
      run.next_seq = next_->seq;
    }
    next_.reset();
    open_run_ = std::move(run);
  }

  // "workload,index,status,t_end", or for a paced run ",t_fill,t_stop,t_load_end,fills" more, and
  // ",t_done" (when DONE was printed) from agents whose DONE carries no time.
  void end_run(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    if (!open_run_) {
      bad(rec, "run end without a run start");
      return;
    }
    GuestRun run = std::move(*open_run_);
    open_run_.reset();
    int index = -1;
    const bool with_done = run.window && fields.size() == 9;
    const std::size_t expected = run.window ? (with_done ? 9 : 8) : 4;
    if (fields.size() != expected || fields[0] != run.workload || !parse_number(fields[1], index) ||
        index != run.index || !parse_number(fields[2], run.exit_status) || !parse_number(fields[3], run.t_end)) {
      bad(rec, "run end does not match its start");
      return;
    }
    if (run.window) {
      GuestWindow& w = *run.window;
      if (!parse_number(fields[4], w.t_fill) || !parse_number(fields[5], w.t_stop) ||
          !parse_number(fields[6], w.t_load_end) || !parse_number(fields[7], w.fills) || w.fills < 0) {
        bad(rec, "malformed paced run end");
        return;
      }
      if (with_done) {
        double t_done = 0;
        if (!parse_number(fields[8], t_done)) {
          bad(rec, "malformed paced run end");
          return;
        }
        if (const auto done = done_seq_.find(w.step); done != done_seq_.end()) {
          mark({.seq = done->second, .t = t_done, .step = w.step});
        }
      }
    }
    auto out = base64_decode(open_b64_);
    if (!out) {
      bad(rec, "run output is not base64 (a chunk is missing?)");
      return;
    }
    run.output = std::move(*out);
    if (!run.window && open_mark_) {
      mark({.seq = open_mark_->seq, .t = open_mark_->t, .run = next_run()});
      mark({.seq = seq, .t = run.t_end, .run = next_run()});
    }
    report_.runs.push_back(std::move(run));
  }

  // "workload,index,busy,all": the CPU ticks of the run that just ended (the last one reported).
  void run_cpu(const Record& rec, const std::vector<std::string>& fields) {
    GuestCpuTicks t;
    int index = -1;
    if (fields.size() != 4 || !parse_number(fields[1], index) || !parse_number(fields[2], t.busy) ||
        !parse_number(fields[3], t.all) || t.busy > t.all) {
      bad(rec, "malformed CPU record");
      return;
    }
    if (open_run_ || report_.runs.empty() || report_.runs.back().workload != fields[0] ||
        report_.runs.back().index != index || report_.runs.back().cpu) {
      bad(rec, "CPU record without the end of its run just before");
      return;
    }
    report_.runs.back().cpu = t;
  }

  GuestReport& report_;
  std::optional<GuestRun> open_run_;
  std::optional<GuestClockMark> open_mark_;  // an unpaced run's start, until it has ended
  std::map<long, std::uint64_t> done_seq_;    // a timeless DONE's sequence number by its step
  struct NextRun {
    std::uint64_t seq = 0;
    std::string workload;
    int index = 0;
    bool warmup = false;
  };
  std::optional<NextRun> next_;               // the last NEXT, until the RUN it announced
  std::string open_b64_;    // the open run's OUT payloads so far
  std::uint64_t expected_ = 0;
};

}  // namespace

GuestReport parse_guest_console(std::string_view console, std::string_view nonce, ParseWork* work) {
  GuestReport report;
  ParseWork local;
  const std::map<std::uint64_t, Record> records =
      RecordScanner(console, nonce, work != nullptr ? *work : local).collect(report.problems);
  ReportReader reader(report);
  for (const auto& [seq, rec] : records) reader.take(seq, rec);
  reader.finish();
  return report;
}

}  // namespace abvm
