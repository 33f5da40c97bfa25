#include "core/json_read.hpp"

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/utf8.hpp"

namespace abvm {
namespace {

using nlohmann::json;

// What was found, short: a value as the file spells it, cut at 60 bytes (a whole object or list
// quoted in an error would drown it), well-formed UTF-8 whatever the file held.
std::string found(const json& value) {
  constexpr std::size_t kMax = 60;
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return to_well_formed_utf8(text);
}

std::string with_remedy(const JsonSource& source, std::string_view message) {
  const std::string text = source.remedy.empty() ? std::string(message) : fmt::format("{}; {}", message, source.remedy);
  return located(source.file, source.line, text);
}

// nlohmann's words without its "[json.exception.parse_error.101] " prefix, which says nothing to the user.
std::string parser_words(const json::exception& e) {
  std::string_view what = e.what();
  if (what.starts_with("[json.exception.")) {
    if (const auto end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return to_well_formed_utf8(what);  // it quotes what it read, which need not be UTF-8
}

}  // namespace

std::string JsonField::subject() const {
  if (!path_.empty()) return fmt::format("field \"{}\"", path_);
  return source_->line > 0 ? "the line" : "the file";
}

void JsonField::expected(std::string_view what) const {
  fail(fmt::format("{} must be {}, not {}", subject(), what, found(*value_)));
}

void JsonField::invalid(std::string_view what) const { fail(fmt::format("{} {}", subject(), what)); }

void JsonField::fail(std::string_view message) const { throw Error(with_remedy(*source_, message)); }

void JsonField::refuse(std::string_view message) const { throw Error(located(source_->file, source_->line, message)); }

void JsonField::require_object() const {
  if (!value_->is_object()) expected("an object");
}

bool JsonField::has(std::string_view key) const { return find(key).has_value(); }

std::optional<JsonField> JsonField::find(std::string_view key) const {
  require_object();
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonField(*it, *source_, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
}

JsonField JsonField::member(std::string_view key, std::string_view expected) const {
  if (auto f = find(key)) return *std::move(f);
  const std::string path = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  fail(expected.empty() ? fmt::format("field \"{}\" is missing", path)
                        : fmt::format("field \"{}\" is missing ({})", path, expected));
}

std::vector<JsonField> JsonField::elements() const {
  if (!value_->is_array()) expected("a list");
  std::vector<JsonField> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(JsonField((*value_)[i], *source_, fmt::format("{}[{}]", path_, i)));
  return out;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
  require_object();
  std::vector<std::pair<std::string, JsonField>> out;
  for (const auto& [key, value] : value_->items()) {
    out.emplace_back(key, JsonField(value, *source_, path_.empty() ? key : fmt::format("{}.{}", path_, key)));
  }
  return out;
}

json parse_json(std::string_view text, const JsonSource& source) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw Error(with_remedy(source, fmt::format("not JSON ({})", parser_words(e))));
  }
}

JsonDocument::JsonDocument(std::string_view text, JsonSource source)
    : value_(parse_json(text, source)), source_(std::move(source)) {}

JsonDocument JsonDocument::read(const std::filesystem::path& path, std::string remedy) {
  return JsonDocument(read_file(path), JsonSource{.file = path.string(), .remedy = std::move(remedy)});
}

void read_json(const JsonField& f, Side& out) { out = f.word<Side>(parse_side, json_expected(&out)); }
void read_json(const JsonField& f, Outcome& out) { out = f.word<Outcome>(parse_outcome, json_expected(&out)); }
void read_json(const JsonField& f, Better& out) { out = f.word<Better>(parse_better, json_expected(&out)); }
void read_json(const JsonField& f, Accelerator& out) { out = f.word<Accelerator>(parse_accelerator, json_expected(&out)); }
void read_json(const JsonField& f, CpuClock& out) { out = f.word<CpuClock>(parse_cpu_clock, json_expected(&out)); }
std::string json_expected(const Side*) { return "\"A\" or \"B\""; }
std::string json_expected(const Outcome*) { return fmt::format("one of {}", outcome_words()); }
std::string json_expected(const Better*) { return "\"higher\" or \"lower\""; }
std::string json_expected(const Accelerator*) { return "\"kvm\" or \"tcg\""; }
std::string json_expected(const CpuClock*) { return "\"libvirt\", \"schedstat\" or \"ticks\""; }

}  // namespace abvm
