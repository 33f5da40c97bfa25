#include "config/key_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "core/units.hpp"

namespace abvm::loader {

using std::chrono::milliseconds;

std::string node_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The value as the user wrote it, for messages.
std::string render_node(const toml::node& node) {
  if (const auto* s = node.as_string()) return quote(s->get());
  if (const auto* i = node.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = node.as_floating_point()) return fmt::format("{}", f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return node_type_name(node);
}

std::string render(bool value) { return value ? "true" : "false"; }
std::string render_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back(quote(item));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}
std::string render_list(const std::vector<int>& items) { return fmt::format("[{}]", fmt::join(items, ", ")); }

bool valid_name(std::string_view name, bool allow_dot) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || (allow_dot && c == '.');
  });
}

KeyReader::KeyReader(std::string file, std::filesystem::path base_dir, toml::table root)
    : file_(std::move(file)), base_dir_(std::move(base_dir)), root_(std::move(root)) {}

void KeyReader::fail(std::size_t line, const std::string& message) const { throw Error(located(file_, line, message)); }

const toml::node* KeyReader::at(std::string_view path) const { return root_.at_path(path).node(); }
std::size_t KeyReader::line_of(std::string_view path) const {
  const toml::node* n = at(path);
  return n == nullptr ? 0 : n->source().begin.line;
}
std::string KeyReader::origin_of(std::string_view path) const {
  const toml::node* n = at(path);
  return n == nullptr ? "default" : fmt::format("{}:{}", file_, n->source().begin.line);
}
void KeyReader::note(std::string key, std::string value, std::string origin) {
  effective_.push_back({std::move(key), std::move(value), std::move(origin)});
}
void KeyReader::note(const std::string& key, std::string value) { note(key, std::move(value), origin_of(key)); }

const KeySpec& KeyReader::spec_of(std::string_view path) {
  const KeySpec* spec = find_key(key_pattern(path));
  if (spec == nullptr) throw std::logic_error("key missing from the key table: " + std::string(path));
  return *spec;
}

void KeyReader::check_range(std::string_view path, double value, const std::string& shown) const {
  const KeySpec& spec = spec_of(path);
  if (!spec.range) return;
  const KeyRange& r = *spec.range;
  const bool below = r.min_open ? value <= r.min : value < r.min;
  const bool above = r.max_open ? value >= r.max : value > r.max;
  if (below || above) {
    fail(line_of(path), fmt::format("key '{}' = {} is out of range: use {}", path, shown, describe_allowed(spec)));
  }
}

std::optional<std::string> KeyReader::get_string(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  std::string value = n->as_string()->get();
  const KeySpec& spec = spec_of(path);
  if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
    fail(line_of(path), fmt::format("key '{}' = {} is not one of {}", path, quote(value),
                                    fmt::join(spec.choices, ", ")));
  }
  return value;
}
std::optional<bool> KeyReader::get_bool(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  return n->as_boolean()->get();
}
std::optional<std::int64_t> KeyReader::get_integer(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  const std::int64_t value = n->as_integer()->get();
  check_range(path, static_cast<double>(value), fmt::format("{}", value));
  return value;
}
std::optional<int> KeyReader::get_int(std::string_view path) const {
  const auto value = get_integer(path);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);  // every int key's range fits in int
}
std::optional<double> KeyReader::get_number(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  const double value = n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
  if (!std::isfinite(value)) fail(line_of(path), fmt::format("key '{}' must be a finite number", path));
  check_range(path, value, render_node(*n));
  return value;
}
std::optional<std::uint64_t> KeyReader::get_size(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  std::uint64_t bytes = 0;
  if (const auto* i = n->as_integer()) {
    if (i->get() < 0) fail(line_of(path), fmt::format("key '{}' = {} is negative", path, i->get()));
    bytes = static_cast<std::uint64_t>(i->get());
  } else {
    try {
      bytes = parse_size(n->as_string()->get());
    } catch (const Error& e) {
      fail(line_of(path), fmt::format("key '{}': {}", path, e.what()));
    }
  }
  check_range(path, static_cast<double>(bytes), render_node(*n));
  return bytes;
}
std::optional<milliseconds> KeyReader::get_duration(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  milliseconds value{};
  try {
    value = parse_duration(n->as_string()->get());
  } catch (const Error& e) {
    fail(line_of(path), fmt::format("key '{}': {}", path, e.what()));
  }
  check_range(path, static_cast<double>(value.count()), render_node(*n));
  return value;
}
std::optional<std::vector<std::string>> KeyReader::get_strings(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  std::vector<std::string> out;
  for (const toml::node& element : *n->as_array()) out.push_back(element.as_string()->get());
  return out;
}
std::optional<std::vector<int>> KeyReader::get_ints(std::string_view path) const {
  const toml::node* n = at(path);
  if (n == nullptr) return std::nullopt;
  std::vector<int> out;
  for (const toml::node& element : *n->as_array()) {
    const std::int64_t value = element.as_integer()->get();
    const KeyRange& r = *spec_of(path).range;
    if (value < r.min || value > r.max) {
      fail(element.source().begin.line,
           fmt::format("key '{}' has {}, out of range: use {}", path, value, describe_allowed(spec_of(path))));
    }
    out.push_back(static_cast<int>(value));
  }
  return out;
}

}  // namespace abvm::loader
