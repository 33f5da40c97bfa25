#include "core/error.hpp"

#include <fmt/format.h>

namespace abvm {

std::string located(std::string_view file, std::size_t line, std::string_view message) {
  if (line == 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}: {}", file, line, message);
}

}  // namespace abvm
