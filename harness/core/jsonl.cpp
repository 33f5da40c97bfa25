#include "core/jsonl.hpp"

#include <exception>

#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm {

void read_jsonl(const std::filesystem::path& path,
                const std::function<void(std::string_view line, std::size_t line_no)>& parse,
                const JsonlWarning& warn, bool missing_is_empty) {
  if (missing_is_empty && !std::filesystem::exists(path)) return;
  const std::string text = read_file(path);
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t nl = text.find('\n', pos);
    const bool terminated = nl != std::string::npos;
    const std::string_view line =
        std::string_view(text).substr(pos, terminated ? nl - pos : std::string_view::npos);
    pos = terminated ? nl + 1 : text.size();
    if (line.empty()) continue;
    try {
      parse(line, line_no);
    } catch (const std::exception&) {
      if (terminated) throw;
      if (warn) warn(located(path.string(), line_no, "unfinished last line ignored (its writer was stopped mid-line)"));
    }
  }
}

}  // namespace abvm
