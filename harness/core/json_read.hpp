#pragma once
// The one way abvm reads back a JSON file (journal and ledger lines, plan.json, run.json, the
// calibration, kernels' records, bisect.json, analysis.json): a JsonField is one value of a
// document together with where it is: the file, the line of a line file, and the path of fields
// that leads to it. Every error names all three and what was expected, as an abvm::Error:
//
//   results/x/plan.json: field "trials[3].side" must be "A" or "B", not 5; the results directory is damaged
//   results/x/journal.jsonl:4: field "metrics[1].unit" is missing (a string)
//
// A file's typed struct is read by an overload `void read_json(const JsonField&, T&)` found by
// argument-dependent lookup, as nlohmann's from_json is found, so that `field.required<T>("x")`,
// `std::vector<T>` and `std::optional<T>` work for it. The hook takes a JsonField, not nlohmann's
// json: a json value does not know where it is, so its errors could name neither the file nor the
// field. It is not called from_json because nlohmann's get<T>() looks for from_json by the same
// lookup, and would trip over these overloads wherever JsonField is only declared. A type whose
// missing-field message should say more than "an object" (an enum read from a word) declares
// `std::string json_expected(const T*)` beside its read_json.
//
// A JsonField refers to its document and its source: it must not outlive the JsonDocument (or the
// json and JsonSource) it came from. Reading does not copy the document.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/vocabulary.hpp"

namespace abvm {

// Where a document came from: its file (as the user knows it), the 1-based line of a line file (0:
// the whole file), and what the user can do when it is wrong, appended to every error ("the
// results directory is damaged; start a new run"; empty: nothing).
struct JsonSource {
  std::string file;
  std::size_t line = 0;
  std::string remedy;
};

class JsonField;

namespace json_detail {
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_string_map : std::false_type {};
template <class T> struct is_string_map<std::map<std::string, T>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

// What a value of T must be, in the words of an error ("a string", "an integer >= 0").
template <class T>
std::string expected_of() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return "an integer >= 0";
  else if constexpr (std::is_integral_v<T>) return "an integer";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else if constexpr (is_vector<T>::value) return "a list";
  else if constexpr (is_optional<T>::value) return expected_of<typename T::value_type>() + " or null";
  else if constexpr (requires(const T* p) { json_expected(p); }) return json_expected(static_cast<const T*>(nullptr));
  else return "an object";
}

// Whether `j` is of the JSON kind a T is read from (its range and words are checked by the reading).
template <class T>
bool same_kind(const nlohmann::json& j) {
  if constexpr (std::is_same_v<T, std::string>) return j.is_string();
  else if constexpr (std::is_same_v<T, bool>) return j.is_boolean();
  else if constexpr (std::is_integral_v<T>) return j.is_number_integer();
  else if constexpr (std::is_floating_point_v<T>) return j.is_number();
  else if constexpr (is_vector<T>::value) return j.is_array();
  else return true;  // an object, a word, or a JsonField: the reading says what it wants
}
}  // namespace json_detail

class JsonField {
 public:
  // The root of a document, or a part of one at `path` ("metrics[2]") for a reader handed only that part.
  JsonField(const nlohmann::json& value, const JsonSource& source, std::string path = "")
      : value_(&value), source_(&source), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *value_; }
  const JsonSource& source() const { return *source_; }
  // "trials[3].side"; "" at the root.
  const std::string& path() const { return path_; }

  // This value as T: a string, bool, integer (range-checked), number, std::vector<T>, std::map<std::string, T>,
  // std::optional<T> (null: nullopt), JsonField itself, or a type with a read_json(const JsonField&, T&).
  template <class T>
  T as() const;

  // The member `key` of this object as T; an error when it is missing or not a T (or this is no object).
  template <class T>
  T required(std::string_view key) const {
    return member(key, json_detail::expected_of<T>()).template as<T>();
  }
  // The member as T, or nullopt when it is missing (null is a value: ask for std::optional<U> to allow it).
  template <class T>
  std::optional<T> optional(std::string_view key) const {
    if (const auto f = find(key)) return f->template as<T>();
    return std::nullopt;
  }
  // The member as T, or `fallback` when it is missing.
  template <class T>
  T value_or(std::string_view key, T fallback) const {
    if (const auto f = find(key)) return f->template as<T>();
    return fallback;
  }

  bool has(std::string_view key) const;
  // The member `key`, of any type; an error naming `expected` when it is missing.
  JsonField member(std::string_view key, std::string_view expected = "") const;
  // The member, or nullopt when it is missing; an error when this is no object.
  std::optional<JsonField> find(std::string_view key) const;
  // This list's elements ("trials[0]", ...); an error when this is no list.
  std::vector<JsonField> elements() const;
  // This object's members in the document's order; an error when this is no object.
  std::vector<std::pair<std::string, JsonField>> members() const;
  // An error unless this is an object (what a struct's read_json asks first, when it reads no field).
  void require_object() const;

  // `word` read through `parse` (parse_side, parse_outcome, ...); `choices` says what it may be.
  template <class E, class Parse>
  E word(Parse parse, std::string_view choices) const {
    if (value_->is_string()) {
      if (const std::optional<E> e = parse(value_->template get_ref<const std::string&>())) return *e;
    }
    expected(choices);
  }

  // Error "<file>[:line]: field "<path>" must be <what>, not <the value>[; <remedy>]".
  [[noreturn]] void expected(std::string_view what) const;
  // Error "<file>[:line]: field "<path>" <what>[; <remedy>]".
  [[noreturn]] void invalid(std::string_view what) const;
  // Error "<file>[:line]: <message>[; <remedy>]": a message that names its fields itself.
  [[noreturn]] void fail(std::string_view message) const;
  // Error "<file>[:line]: <message>", without the remedy: for a file that is not damaged but one this
  // abvm cannot read (a newer version), whose message says what to do instead.
  [[noreturn]] void refuse(std::string_view message) const;

 private:
  std::string subject() const;  // `field "path"`, or the line or file at the root

  template <class T>
  T integer() const;

  const nlohmann::json* value_;
  const JsonSource* source_;
  std::string path_;
};

// A parsed document and its source, the owner of the JsonFields read from it: neither copied nor
// moved, so that its fields stay valid (returned by value through guaranteed elision).
class JsonDocument {
 public:
  // Parses `text`; Error "<file>[:line]: not JSON (<the parser's words>)[; <remedy>]".
  JsonDocument(std::string_view text, JsonSource source);
  // Reads and parses a whole file, its source being the path (core/files.hpp read_file's errors).
  static JsonDocument read(const std::filesystem::path& path, std::string remedy = "");
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;

  JsonField root() const { return JsonField(value_, source_); }

 private:
  nlohmann::json value_;
  JsonSource source_;
};

// `text` parsed, for a reader that keeps the json itself (a JsonDocument does this): Error
// "<file>[:line]: not JSON (<the parser's words>)[; <remedy>]".
nlohmann::json parse_json(std::string_view text, const JsonSource& source);

// The shared words, read as the files write them (core/vocabulary.hpp).
void read_json(const JsonField& f, Side& out);
void read_json(const JsonField& f, Outcome& out);
void read_json(const JsonField& f, Better& out);
void read_json(const JsonField& f, Accelerator& out);
void read_json(const JsonField& f, CpuClock& out);
std::string json_expected(const Side*);
std::string json_expected(const Outcome*);
std::string json_expected(const Better*);
std::string json_expected(const Accelerator*);
std::string json_expected(const CpuClock*);

template <class T>
T JsonField::integer() const {
  const std::string what = json_detail::expected_of<T>();
  if (!value_->is_number_integer()) expected(what);
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  if (value_->is_number_unsigned()) {
    const auto v = value_->template get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(hi)) expected(fmt::format("{} up to {}", what, hi));
    return static_cast<T>(v);
  }
  const auto v = value_->template get<std::int64_t>();
  if (v < 0 && (std::is_unsigned_v<T> || v < static_cast<std::int64_t>(lo))) expected(what);
  if (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(hi)) expected(fmt::format("{} up to {}", what, hi));
  return static_cast<T>(v);
}

template <class T>
T JsonField::as() const {
  if constexpr (std::is_same_v<T, JsonField>) {
    return *this;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value_->is_string()) expected("a string");
    return value_->template get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value_->is_boolean()) expected("true or false");
    return value_->template get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    return integer<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value_->is_number()) expected("a number");
    return value_->template get<T>();
  } else if constexpr (json_detail::is_optional<T>::value) {
    if (value_->is_null()) return std::nullopt;
    // A value of the wrong kind says that null was allowed too ("a number or null").
    if (!json_detail::same_kind<typename T::value_type>(*value_)) expected(json_detail::expected_of<T>());
    return as<typename T::value_type>();
  } else if constexpr (json_detail::is_vector<T>::value) {
    if (!value_->is_array()) expected("a list");
    T out;
    out.reserve(value_->size());
    for (const JsonField& e : elements()) out.push_back(e.template as<typename T::value_type>());
    return out;
  } else if constexpr (json_detail::is_string_map<T>::value) {
    T out;
    for (const auto& [key, f] : members()) out.emplace(key, f.template as<typename T::mapped_type>());
    return out;
  } else {
    T out{};
    read_json(*this, out);
    return out;
  }
}

}  // namespace abvm
