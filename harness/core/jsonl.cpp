#include "core/jsonl.hpp"

#include <exception>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {

void read_jsonl(const std::filesystem::path& path, const JsonlLineParser& parse, const JsonlWarning& warn,
                bool missing_is_empty) {
  JsonlFollower(path, missing_is_empty).read(parse, parse, warn);
}

JsonlFollower::JsonlFollower(std::filesystem::path path, bool missing_is_empty)
    : path_(std::move(path)), missing_is_empty_(missing_is_empty) {}

void JsonlFollower::read(const JsonlLineParser& parse_finished, const JsonlLineParser& parse_unfinished,
                         const JsonlWarning& warn) {
  if (missing_is_empty_ && !std::filesystem::exists(path_)) return;
  const std::string text = read_file_from(path_, finished_bytes_);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t line_no = finished_lines_ + 1;
    if (nl == std::string::npos) {
      // Not counted as read: the next read sees it again, finished or grown.
      try {
        parse_unfinished(std::string_view(text).substr(pos), line_no);
      } catch (const std::exception&) {
        if (warn) warn(located(path_.string(), line_no, "unfinished last line ignored (its writer was stopped mid-line)"));
      }
      return;
    }
    const std::string_view line = std::string_view(text).substr(pos, nl - pos);
    if (!line.empty()) parse_finished(line, line_no);
    // Past the line only once it parsed: a damaged line stays where the next read meets it again.
    pos = nl + 1;
    finished_bytes_ += line.size() + 1;
    finished_lines_ = line_no;
  }
}

}  // namespace abvm
