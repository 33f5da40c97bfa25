#include "samples/tool_message.hpp"

#include "core/utf8.hpp"

namespace abvm {

std::string tool_message(std::string_view output, std::string_view tool) {
  std::string out;
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < output.size() && lines < kToolMessageLines) {
    std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    if (line.size() <= tool.size() || !line.starts_with(tool) || line[tool.size()] != ':') continue;
    std::string kept;
    for (char c : line.substr(0, kToolMessageLineBytes)) {
      if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) kept += c;
    }
    out += (lines++ == 0 ? "" : " / ") + to_well_formed_utf8(kept);
  }
  return out;
}

}  // namespace abvm
