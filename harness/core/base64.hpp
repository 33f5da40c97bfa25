#pragma once
// Standard base64 (RFC 4648) with padding: guest records carry free text in it (as busybox
// `base64 -w 0` prints it) and the HTML report embeds plots as data: URIs.
#include <optional>
#include <string>
#include <string_view>

namespace abvm {

std::string base64_encode(std::string_view data);

// Decoding; nullopt on invalid input (bad characters, length, or padding anywhere but the end).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace abvm
