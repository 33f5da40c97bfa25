#pragma once
// Whole-file reads and crash-safe writes. Writes go through a temporary file in the same
// directory and a rename, so a reader never sees half a file (ccache's AtomicFile).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace abvm {

// Reads a whole file; throws Error naming the file if it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Reads a file from byte `offset` to its end: what was appended since an earlier read of the first
// `offset` bytes. Throws Error naming the file if it cannot be read or is shorter than `offset`
// (it was replaced or truncated since).
std::string read_file_from(const std::filesystem::path& path, std::uintmax_t offset);

// Writes `content` to `path` atomically (temp file + fsync + rename); throws InfraError.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Appends one line (a '\n' is added) and flushes it to disk before returning, so a
// journal line survives the process being killed right after. Throws InfraError.
void append_line_durable(const std::filesystem::path& path, std::string_view line);

}  // namespace abvm
