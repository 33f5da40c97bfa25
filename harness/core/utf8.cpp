#include "core/utf8.hpp"

#include <cstdint>

namespace abvm {

std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1fu; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0fu; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07u; }
    else return i;
    if (i + n >= s.size()) return i;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0u) != 0x80u) return i;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    // Overlong forms, UTF-16 surrogates, beyond U+10FFFF, and U+FFFE/U+FFFF (not XML characters).
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
        cp == 0xfffe || cp == 0xffff) {
      return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

std::string to_well_formed_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t bad = first_invalid_utf8(s);
    out += s.substr(0, bad);
    if (bad == std::string_view::npos) break;
    out += "\xEF\xBF\xBD";
    s.remove_prefix(bad + 1);
  }
  return out;
}

}  // namespace abvm
