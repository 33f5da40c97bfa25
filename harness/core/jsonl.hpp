#pragma once
// The one reader of abvm's line files (the run journal, the trial ledger): one JSON object per
// line, appended durably as things happen. A writer killed mid-line leaves an unterminated,
// unparsable last line; that one line is skipped and reported. Anything else that does not
// parse is damage, and an Error naming file:line.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace abvm {

// Called with a plain-words message when read_jsonl skips the unfinished last line.
using JsonlWarning = std::function<void(const std::string&)>;
// Called with each non-empty line and its 1-based number.
using JsonlLineParser = std::function<void(std::string_view line, std::size_t line_no)>;

// Calls `parse(line, line_no)` for every non-empty line of `path` (1-based numbers). When
// `parse` throws on the last line and that line has no '\n', the line is skipped and `warn`
// told; otherwise the exception propagates. A missing file reads as empty when
// `missing_is_empty`, else it is an Error naming it.
void read_jsonl(const std::filesystem::path& path, const JsonlLineParser& parse, const JsonlWarning& warn,
                bool missing_is_empty = false);

// A line file read as it grows (a sequential run's looks read its journal after every block):
// each read() parses only what was appended since the last one, with read_jsonl's rules. A
// finished line (its '\n' written) is handed to `parse_finished` once, in the read that first
// sees it. A last line without its '\n' may still be being written: it is handed to
// `parse_unfinished` in every read until its '\n' arrives (so what is made of it must not outlive
// the read), and when that throws it is skipped and `warn` told, as read_jsonl does.
class JsonlFollower {
 public:
  explicit JsonlFollower(std::filesystem::path path, bool missing_is_empty = false);
  void read(const JsonlLineParser& parse_finished, const JsonlLineParser& parse_unfinished, const JsonlWarning& warn);

 private:
  std::filesystem::path path_;
  bool missing_is_empty_;
  std::uintmax_t finished_bytes_ = 0;  // the finished lines parsed so far, '\n' included
  std::size_t finished_lines_ = 0;     // their count (empty lines too: line numbers count them)
};

}  // namespace abvm
