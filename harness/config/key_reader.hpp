#pragma once
// Internal to config/: what the experiment loader's sections (config/load_*.cpp) share. The parsed
// file, read key by key with the key table's types, ranges and choices (config/keys.hpp), every
// error at "file:line" naming the key, and the record of each key's effective value and origin
// (`abvm config show`). The schema check (config/load_schema.cpp) has run before: a value's TOML
// type is the key table's, so the getters only check ranges and choices.
#include <toml++/toml.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/experiment.hpp"
#include "config/keys.hpp"

namespace abvm::loader {

// ---- Values as the messages and `abvm config show` write them. ----

std::string quote(std::string_view text);
std::string node_type_name(const toml::node& node);  // "a string", "an integer", ...
std::string render_node(const toml::node& node);     // the value as the user wrote it
std::string render(bool value);
std::string render_list(const std::vector<std::string>& items);
std::string render_list(const std::vector<int>& items);
template <class T>
std::string render_optional(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "unset";
}

// A name of letters, digits, '_' and '-' (and '.' with allow_dot): it names files and metrics.
bool valid_name(std::string_view name, bool allow_dot);

class KeyReader {
 public:
  KeyReader(std::string file, std::filesystem::path base_dir, toml::table root);

  [[noreturn]] void fail(std::size_t line, const std::string& message) const;
  const std::string& file() const { return file_; }
  // Relative paths in the file (disk, fio job files) are relative to it.
  const std::filesystem::path& base_dir() const { return base_dir_; }

  const toml::node* at(std::string_view path) const;
  std::size_t line_of(std::string_view path) const;    // 0 when the key is not in the file
  std::string origin_of(std::string_view path) const;  // "file:line", or "default"
  static const KeySpec& spec_of(std::string_view path);

  // Records a key's effective value (in the order read: the order `abvm config show` prints).
  void note(std::string key, std::string value, std::string origin);
  void note(const std::string& key, std::string value);
  std::vector<EffectiveValue> take_effective() { return std::move(effective_); }

  // Each: the value at `path`, nullopt when the key is not in the file; an Error at its line when
  // it is out of the key table's range or not one of its choices.
  std::optional<std::string> get_string(std::string_view path) const;
  std::optional<bool> get_bool(std::string_view path) const;
  std::optional<std::int64_t> get_integer(std::string_view path) const;
  std::optional<int> get_int(std::string_view path) const;
  std::optional<double> get_number(std::string_view path) const;
  std::optional<std::uint64_t> get_size(std::string_view path) const;
  std::optional<std::chrono::milliseconds> get_duration(std::string_view path) const;
  std::optional<std::vector<std::string>> get_strings(std::string_view path) const;
  std::optional<std::vector<int>> get_ints(std::string_view path) const;

 private:
  void check_range(std::string_view path, double value, const std::string& shown) const;

  std::string file_;
  std::filesystem::path base_dir_;
  toml::table root_;
  std::vector<EffectiveValue> effective_;
};

}  // namespace abvm::loader
