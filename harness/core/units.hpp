#pragma once
// Sizes and durations as people write them in experiment files: "8M", "1G", "512K", "60s",
// "2m", "1h", "500ms". Parsing is strict (the whole string, no spaces, no fractions) because
// a silently misread size changes the experiment.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace abvm {

// Bytes from "<digits>[suffix]". Suffixes are binary, as in dd and fio: K = 1024, M = 1024^2,
// G = 1024^3, T = 1024^4; "KiB"/"MiB"/"GiB"/"TiB" mean the same; no suffix or "B" means
// bytes. Case-insensitive. Throws Error (message without location: callers add it) on
// anything else, including overflow of 64 bits.
std::uint64_t parse_size(std::string_view text);

// Milliseconds from "<digits><unit>", unit one of ms, s, m, h (no default unit: "60" is an
// error, since seconds and minutes are both plausible). Throws Error like parse_size.
std::chrono::milliseconds parse_duration(std::string_view text);

// The shortest exact spelling in the forms above: 8388608 -> "8M", 1000 -> "1000",
// 90000ms -> "90s", 7200000ms -> "2h". parse_size(format_size(x)) == x.
std::string format_size(std::uint64_t bytes);
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace abvm
