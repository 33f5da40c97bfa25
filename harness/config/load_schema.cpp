#include <fmt/format.h>

#include <algorithm>

#include "config/load_sections.hpp"
#include "core/error.hpp"

namespace abvm::loader {

namespace {

// Optimal string alignment distance: like Levenshtein, plus a transposition costs 1
// ("lable" is one step from "label").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::pair<std::string, std::string> split_parent(std::string_view path) {
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos) return {"", std::string(path)};
  return {std::string(path.substr(0, dot)), std::string(path.substr(dot + 1))};
}

// Collects every problem, so that the one reported is the first in the file, not the first found.
class SchemaCheck {
 public:
  std::vector<std::pair<std::size_t, std::string>> problems;

  void problem(const toml::node& node, std::string message) {
    problems.emplace_back(node.source().begin.line, std::move(message));
  }

  void check_table(const toml::table& table, const std::string& prefix) {
    for (const auto& [key, node] : table) {
      const std::string concrete = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
      if (prefix == "sides" && key.str() != "A" && key.str() != "B") {
        problem(node, fmt::format("unknown side '{}': the sides are named A and B", concrete));
        continue;
      }
      const std::string pattern = key_pattern(concrete);
      const KeySpec* spec = find_key(pattern);
      if (spec == nullptr) {
        problem(node, unknown_key_message(concrete, pattern));
        continue;
      }
      check_value(node, concrete, *spec);
    }
  }

  static std::string unknown_key_message(const std::string& concrete, const std::string& pattern) {
    const auto [parent, leaf] = split_parent(pattern);
    const std::size_t limit = leaf.size() <= 4 ? 1 : 2;
    const KeySpec* best = nullptr;
    std::size_t best_distance = limit + 1;
    for (const KeySpec& spec : key_table()) {
      const auto [spec_parent, spec_leaf] = split_parent(spec.path);
      if (spec_parent != parent) continue;
      const std::size_t d = edit_distance(leaf, spec_leaf);
      if (d < best_distance) best = &spec, best_distance = d;
    }
    if (best != nullptr) {
      return fmt::format("unknown key '{}' (did you mean '{}'?)", concrete, split_parent(best->path).second);
    }
    // The right key in the wrong section ("vcpus" at the top instead of in [guest]).
    for (const KeySpec& spec : key_table()) {
      if (split_parent(spec.path).second == leaf && spec.type != KeyType::table) {
        return fmt::format("unknown key '{}' (did you mean '{}'?)", concrete, spec.path);
      }
    }
    return fmt::format("unknown key '{}': remove it, or check its spelling and its [section]", concrete);
  }

  void check_value(const toml::node& node, const std::string& concrete, const KeySpec& spec) {
    const auto wrong = [&] {
      problem(node, fmt::format("key '{}' must be {}, not {}", concrete, describe_type(spec.type),
                                node_type_name(node)));
    };
    const auto check_elements = [&](const toml::array& array, auto is_ok, const char* element_type) {
      std::size_t i = 0;
      for (const toml::node& element : array) {
        if (!is_ok(element)) {
          problem(element, fmt::format("key '{}' must be {}: element {} is {}, not {}", concrete,
                                       describe_type(spec.type), i, node_type_name(element), element_type));
          return;
        }
        ++i;
      }
    };
    switch (spec.type) {
      case KeyType::string:
      case KeyType::duration:
        if (!node.is_string()) wrong();
        break;
      case KeyType::boolean:
        if (!node.is_boolean()) wrong();
        break;
      case KeyType::integer:
        if (!node.is_integer()) wrong();
        break;
      case KeyType::number:
        if (!node.is_integer() && !node.is_floating_point()) wrong();
        break;
      case KeyType::size:
        if (!node.is_string() && !node.is_integer()) wrong();
        break;
      case KeyType::string_list:
        if (const auto* array = node.as_array()) {
          check_elements(*array, [](const toml::node& n) { return n.is_string(); }, "a string");
        } else {
          wrong();
        }
        break;
      case KeyType::integer_list:
        if (const auto* array = node.as_array()) {
          check_elements(*array, [](const toml::node& n) { return n.is_integer(); }, "an integer");
        } else {
          wrong();
        }
        break;
      case KeyType::string_table:
        if (const auto* table = node.as_table()) {
          for (const auto& [key, value] : *table) {
            if (!value.is_string() && !value.is_integer()) {
              problem(value, fmt::format("key '{}.{}' must be a string or an integer, not {}", concrete,
                                         key.str(), node_type_name(value)));
            }
          }
        } else {
          wrong();
        }
        break;
      case KeyType::table:
        if (const auto* table = node.as_table()) {
          check_table(*table, concrete);
        } else {
          wrong();
        }
        break;
      case KeyType::table_list:
        if (const auto* array = node.as_array()) {
          std::size_t i = 0;
          for (const toml::node& element : *array) {
            if (const auto* table = element.as_table()) {
              check_table(*table, fmt::format("{}[{}]", concrete, i));
            } else {
              problem(element, fmt::format("key '{}' must be {}: element {} is {}, not a table", concrete,
                                           describe_type(spec.type), i, node_type_name(element)));
            }
            ++i;
          }
        } else {
          wrong();
        }
        break;
    }
  }
};

}  // namespace

void check_schema(const toml::table& root, const std::string& file) {
  SchemaCheck check;
  check.check_table(root, "");
  if (check.problems.empty()) return;
  const auto first = std::min_element(check.problems.begin(), check.problems.end(),
                                      [](const auto& x, const auto& y) { return x.first < y.first; });
  throw Error(located(file, first->first, first->second));
}

}  // namespace abvm::loader
