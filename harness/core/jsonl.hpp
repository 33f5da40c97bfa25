#pragma once
// The one reader of abvm's line files (the run journal, the trial ledger): one JSON object per
// line, appended durably as things happen. A writer killed mid-line leaves an unterminated,
// unparsable last line; that one line is skipped and reported. Anything else that does not
// parse is damage, and an Error naming file:line.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace abvm {

// Called with a plain-words message when read_jsonl skips the unfinished last line.
using JsonlWarning = std::function<void(const std::string&)>;

// Calls `parse(line, line_no)` for every non-empty line of `path` (1-based numbers). When
// `parse` throws on the last line and that line has no '\n', the line is skipped and `warn`
// told; otherwise the exception propagates. A missing file reads as empty when
// `missing_is_empty`, else it is an Error naming it.
void read_jsonl(const std::filesystem::path& path,
                const std::function<void(std::string_view line, std::size_t line_no)>& parse,
                const JsonlWarning& warn, bool missing_is_empty = false);

}  // namespace abvm
