#pragma once
// What a tool said when it failed, in its own words, for a run's detail and the messages that quote
// it: GNU dd and busybox dd write "dd: failed to open '/dev/null': Invalid argument" (named by
// argv[0]: "/usr/bin/dd: ..." when the agent runs it by its path), fio writes
// "fio: pid=123, err=22/file:filesetup.c:805, func=open(/dev/null), error=Invalid argument" before
// its JSON. The output is a guest's and may be anything: the scan is linear and the result short.
#include <cstddef>
#include <string>
#include <string_view>

namespace abvm {

// The most abvm quotes of a tool's output: its first few error lines, each cut to a line's length.
inline constexpr std::size_t kToolMessageLines = 3;
inline constexpr std::size_t kToolMessageLineBytes = 200;

// The lines of `output` that start with "<tool>:" or "/<path>/<tool>:" (the first kToolMessageLines, each at most
// kToolMessageLineBytes, control characters dropped, bytes that are not UTF-8 as U+FFFD), joined
// by " / "; "" when there is none.
std::string tool_message(std::string_view output, std::string_view tool);

}  // namespace abvm
