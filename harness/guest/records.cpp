#include "guest/records.hpp"

#include <fmt/format.h>

#include <map>

#include "guest/record_scanner.hpp"
#include "guest/report_reader.hpp"

// The record format's few words (a record line, its prefix, the end record) and the parser's two
// halves put together: guest/record_scanner.cpp finds and checks the records, guest/report_reader.cpp
// reads them into the report.
namespace abvm {

std::string format_guest_record(std::string_view nonce, std::uint64_t seq, std::string_view type,
                                std::string_view payload) {
  const std::string body = fmt::format("{}:{}:{}:{}", nonce, seq, type, payload);
  return fmt::format("{}{}:{}", detail::kMarker, body, md5_hex(body));
}

std::string record_prefix(std::string_view nonce) { return fmt::format("{}{}:", detail::kMarker, nonce); }

bool console_has_end_record(std::string_view console, std::string_view nonce) {
  const std::string head = record_prefix(nonce);
  std::size_t pos = 0;
  while ((pos = console.find(head, pos)) != std::string_view::npos) {
    const std::size_t eol = console.find('\n', pos);
    // Only a complete line: the checksum after END must have arrived.
    if (eol == std::string_view::npos) return false;
    const std::string_view line = console.substr(pos, eol - pos);
    // ABVM2:<nonce>:<seq>:END:<count>:<md5>
    const std::size_t seq_end = line.find(':', head.size());
    if (seq_end != std::string_view::npos && line.substr(seq_end + 1).starts_with("END:")) return true;
    pos = eol;
  }
  return false;
}

std::size_t find_kernel_panic(std::string_view console) { return console.find("Kernel panic - not syncing"); }

GuestReport parse_guest_console(std::string_view console, std::string_view nonce, ParseWork* work) {
  GuestReport report;
  ParseWork local;
  const std::map<std::uint64_t, detail::Record> records =
      detail::collect_records(console, nonce, work != nullptr ? *work : local, report.problems);
  detail::read_report(records, report);
  // An agent of the former format never says BEGIN in this one: say why there is nothing, not only
  // that nothing came.
  if (!report.begun && console.find(fmt::format("{}{}:", detail::kFormerMarker, nonce)) != std::string_view::npos) {
    report.problems.push_back(fmt::format(
        "the guest's agent writes records of the former format ({}...), this abvm reads {}...: its guest image was "
        "not built by this abvm (abvm builds its own under ~/.cache/abvm/images, keyed by the agent it holds)",
        detail::kFormerMarker, detail::kMarker));
  }
  return report;
}

}  // namespace abvm
