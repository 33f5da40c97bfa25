#pragma once
// The one table of every experiment-file key (after ccache's config key table). The loader
// (config/experiment.cpp and its sections, config/load_*.cpp) validates every file against it: an
// unknown key, a wrong type, a value outside the range or the choices listed here is an Error
// naming file, line and key.
// The defaults shown here are asserted against the loader's effective defaults by
// tests/config_keys_test.cpp, so this table is also the reference documentation.
//
// Paths are dotted; two placeholders stand for repeated parts:
//   "sides.*.label"     * is the side, A or B
//   "workload[].bs"     every [[workload]] table ("workload[0].bs" in messages)
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abvm {

enum class KeyType {
  string,
  boolean,
  integer,
  number,        // floating point; integers are accepted too (margin = 1 is a number)
  size,          // "8M" (core/units.hpp) or a whole number of bytes
  duration,      // "60s" (core/units.hpp)
  string_list,   // ["direct", "sync"]
  integer_list,  // [0, 2]
  string_table,  // { name = "value", ... } (extra fio options)
  table,         // a section: [guest], [sides.A], [sides.A.device]
  table_list,    // an array of tables: [[workload]], metrics = [{...}]
};

struct KeyRange {
  double min = 0;
  double max = 0;
  bool min_open = false;  // min itself is not allowed
  bool max_open = false;
};

struct KeySpec {
  std::string path;                    // see the placeholders above
  KeyType type = KeyType::string;
  std::string default_text;            // as describe_effective_config prints the default
  std::string doc;                     // one line
  std::vector<std::string> choices;    // allowed values of a string key (empty: any)
  std::optional<KeyRange> range;       // allowed values of a numeric key (sizes in bytes)
  std::string only_for;                // a workload kind ("dd", "fio"): a key of that kind only
  bool required = false;
};

// Every key, sections included, in documentation order.
const std::vector<KeySpec>& key_table();

// The spec of a pattern path ("sides.*.label"), or nullptr.
const KeySpec* find_key(std::string_view pattern);

// "sides.B.device.cache" -> "sides.*.device.cache", "workload[3].bs" -> "workload[].bs".
std::string key_pattern(std::string_view concrete_path);

// "an integer", "a string", "a list of strings" ... for messages.
std::string describe_type(KeyType type);

// "1..64", "none|writethrough|...", "" when unrestricted: the allowed values for a key.
std::string describe_allowed(const KeySpec& spec);

// The whole table as aligned text (key, type, default, allowed, doc), for `abvm config keys`
// and the README.
std::string describe_key_table();

}  // namespace abvm
