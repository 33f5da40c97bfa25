#pragma once
// Small text helpers shared by the input parsers of this stage (not a public API of abvm).
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

namespace abvm::text {

struct Line {
  std::string_view text;   // without the '\n' (and without a trailing '\r' from CRLF files)
  std::size_t number = 0;  // 1-based
};

// The lines of a text, split on '\n' as they are read: a range for `for (auto [text, number] : ...)`
// that holds no list (a file of 1M numbers is scanned several times, and a vector of its lines
// cost 24 MB each time). A final line without '\n' is kept; an empty text gives no lines. A UTF-8
// byte-order mark at the start of the text (editors on Windows write one) is skipped.
class Lines {
 public:
  class iterator {
   public:
    using value_type = Line;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(std::string_view text) : rest_(text), at_end_(false) { next(); }
    const Line& operator*() const { return line_; }
    const Line* operator->() const { return &line_; }
    iterator& operator++() {
      next();
      return *this;
    }
    void operator++(int) { next(); }
    bool operator==(std::default_sentinel_t) const { return at_end_; }

   private:
    void next();               // line_ becomes the next line of rest_, or at_end_ when none is left
    std::string_view rest_;    // the text after line_
    Line line_;
    bool at_end_ = true;
    bool last_ = false;        // line_ was the text's last line
  };

  explicit Lines(std::string_view text) : text_(text) {}
  iterator begin() const { return iterator(text_); }
  std::default_sentinel_t end() const { return {}; }

 private:
  std::string_view text_;      // without the byte-order mark
};

Lines split_lines(std::string_view text);

std::string_view trim(std::string_view s);

// The one number parser of the input formats. The whole of `s` as a double (a leading '+'
// allowed): ok with the value (denormals included; NaN and infinities as parsed: callers decide
// whether they are acceptable), out_of_range for a number too large or too small in magnitude for
// a double (1e400, 1e-400), not_a_number otherwise.
enum class NumberStatus { ok, out_of_range, not_a_number };
struct ParsedNumber {
  NumberStatus status = NumberStatus::not_a_number;
  double value = 0;
};
ParsedNumber parse_number(std::string_view s);

// parse_number's value when ok, else nothing.
std::optional<double> parse_double(std::string_view s);

// The whole of `s` as an unsigned 64-bit integer (digits only), or nothing (also on overflow).
std::optional<unsigned long long> parse_uint(std::string_view s);

}  // namespace abvm::text
