#include <fmt/format.h>

#include <algorithm>

#include "config/load_sections.hpp"
#include "config/rules.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace {

// A dd flag list as written, else dd's default for that end (rules::dd_default_flags: O_DIRECT
// on the scratch disk only), its origin saying which end decided it.
std::vector<std::string> read_dd_flags(KeyReader& r, const std::string& key, const std::string& end,
                                       const std::string& path) {
  const auto written = r.get_strings(key);
  if (!written) {
    std::vector<std::string> flags = rules::dd_default_flags(path);
    r.note(key, render_list(flags),
           fmt::format("default for {} = {} ({})", end, quote(path),
                       flags.empty() ? "not the scratch disk: no O_DIRECT" : "the scratch disk: O_DIRECT"));
    return flags;
  }
  r.note(key, render_list(*written));
  if (std::find(written->begin(), written->end(), "direct") != written->end() && rules::refuses_direct(path)) {
    r.fail(r.line_of(key), fmt::format("key '{}' = {} asks for O_DIRECT on {} = {}, which cannot be opened with "
                                       "O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" from "
                                       "it",
                                       key, render_list(*written), end, quote(path)));
  }
  return *written;
}

}  // namespace

void read_kind(KeyReader& r, const std::string& p, DdWorkload& dd) {
  if (auto bs = r.get_size(p + ".bs")) dd.block_size = format_size(*bs);
  r.note(p + ".bs", quote(dd.block_size));
  if (auto count = r.get_integer(p + ".count")) dd.count = static_cast<std::uint64_t>(*count);
  r.note(p + ".count", fmt::format("{}", dd.count));
  dd.input = r.get_string(p + ".if").value_or(dd.input);
  r.note(p + ".if", quote(dd.input));
  dd.output = r.get_string(p + ".of").value_or(dd.output);
  r.note(p + ".of", quote(dd.output));
  dd.iflag = read_dd_flags(r, p + ".iflag", "if", dd.input);
  dd.oflag = read_dd_flags(r, p + ".oflag", "of", dd.output);
}

}  // namespace abvm::loader
