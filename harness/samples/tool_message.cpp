#include "samples/tool_message.hpp"

#include "core/utf8.hpp"

namespace abvm {

namespace {

// "dd: ..." or "/usr/bin/dd: ...": the agent runs each tool by its path, and GNU tools name
// themselves by argv[0].
bool said_by(std::string_view line, std::string_view tool) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon + 1 >= line.size()) return false;
  const std::string_view program = line.substr(0, colon);
  if (program.find(' ') != std::string_view::npos) return false;
  const std::size_t slash = program.rfind('/');
  return (slash == std::string_view::npos ? program : program.substr(slash + 1)) == tool &&
         (slash == std::string_view::npos || program.starts_with('/'));
}

}  // namespace

std::string tool_message(std::string_view output, std::string_view tool) {
  std::string out;
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < output.size() && lines < kToolMessageLines) {
    std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    if (!said_by(line, tool)) continue;
    std::string kept;
    for (char c : line.substr(0, kToolMessageLineBytes)) {
      if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) kept += c;
    }
    out += (lines++ == 0 ? "" : " / ") + to_well_formed_utf8(kept);
  }
  return out;
}

}  // namespace abvm
