#pragma once
// abvm's one error model (after ccache's core/exceptions.hpp).
//
// Two exception types, both caught once at the top (cli/), which prints
// "abvm: error: <message>" and exits with the type's code:
//   Error       the user can fix it: bad input file, bad config, bad usage.   exit 2
//   InfraError  the machine failed us: libvirt, QEMU, a disk, a process.      exit 3
// A failed *trial* (guest panic, fio error, timeout) is not an exception: it is data,
// recorded with its outcome. Messages carry their location ("file:line: ...") and say
// what to do next.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace abvm {

// Process exit codes, documented in README.md.
enum class ExitCode : int {
  ok = 0,              // no_change or improvement
  regression = 1,
  usage = 2,           // usage or input error
  infrastructure = 3,
  inconclusive = 4,
  interrupted = 130,   // abvm run stopped by Ctrl-C or SIGTERM; continue with --resume
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InfraError : public std::runtime_error {
 public:
  explicit InfraError(const std::string& message) : std::runtime_error(message) {}
};

// "file:line: message" (line 0 means the whole file: "file: message").
std::string located(std::string_view file, std::size_t line, std::string_view message);

}  // namespace abvm
