#include "samples/fio.hpp"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"
#include "samples/text.hpp"

namespace abvm {
namespace {

using nlohmann::json;

struct Span {
  std::size_t begin = 0;  // offset of '{'
  std::size_t end = 0;    // one past the matching '}'
  std::size_t line = 0;
};

// Finds the offset of the next line (from `pos`, which is at a line start) whose first
// non-blank character is '{'. Updates `line` to that line's number.
std::optional<std::size_t> next_document_start(std::string_view text, std::size_t pos,
                                               std::size_t& line) {
  while (pos < text.size()) {
    std::size_t i = pos;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i < text.size() && text[i] == '{') return i;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return std::nullopt;
    pos = nl + 1;
    ++line;
  }
  return std::nullopt;
}

// Offset one past the '}' matching the '{' at `begin`, or nullopt when the text ends first.
// Braces inside strings do not count. `line` advances over the newlines crossed.
std::optional<std::size_t> matching_brace(std::string_view text, std::size_t begin,
                                          std::size_t& line) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = begin; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) return i + 1;
  }
  return std::nullopt;
}

class DocumentReader {
 public:
  DocumentReader(std::string_view source, std::size_t line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(located(source_, line_, message));
  }

  const json& member(const json& object, const char* key, const std::string& where) const {
    auto it = object.find(key);
    if (it == object.end())
      fail(fmt::format("fio JSON: {} has no \"{}\": is this fio >= 3.0 output "
                       "(--output-format=json)?", where, key));
    return *it;
  }

  double number(const json& object, const char* key, const std::string& where) const {
    const json& v = member(object, key, where);
    if (!v.is_number())
      fail(fmt::format("fio JSON: {}.{} is not a number ({})", where, key, v.dump()));
    return v.get<double>();
  }

  FioDocument read(const json& doc) const {
    if (!doc.is_object() || !doc.contains("jobs"))
      fail("JSON document without \"jobs\": not fio output; run fio with --output-format=json");
    FioDocument out;
    out.line = line_;
    if (auto v = doc.find("fio version"); v != doc.end() && v->is_string())
      out.fio_version = v->get<std::string>();
    const json& jobs = doc["jobs"];
    if (!jobs.is_array() || jobs.empty())
      fail("fio JSON: \"jobs\" is empty or not a list: fio ran no job");
    for (std::size_t j = 0; j < jobs.size(); ++j) out.jobs.push_back(read_job(jobs[j], j));
    return out;
  }

 private:
  FioJob read_job(const json& job, std::size_t index) const {
    std::string where = fmt::format("jobs[{}]", index);
    if (!job.is_object()) fail(fmt::format("fio JSON: {} is not an object", where));
    const json& name = member(job, "jobname", where);
    if (!name.is_string()) fail(fmt::format("fio JSON: {}.jobname is not a string", where));
    FioJob out;
    out.name = name.get<std::string>();
    where = fmt::format("job '{}'", out.name);
    const json& error = member(job, "error", where);
    if (!error.is_number_integer())
      fail(fmt::format("fio JSON: {}.error is not an integer", where));
    out.error = error.get<int>();
    if (out.error != 0) return out;
    out.cpu = read_cpu(job, where);
    for (const char* dir : {"read", "write", "trim"}) {
      auto it = job.find(dir);
      if (it == job.end()) continue;  // fio leaves out directions it does not support
      std::string dwhere = fmt::format("{} {}", where, dir);
      if (!it->is_object()) fail(fmt::format("fio JSON: {} is not an object", dwhere));
      double io_bytes = number(*it, "io_bytes", dwhere);
      if (io_bytes <= 0) continue;
      FioDirection d;
      d.direction = dir;
      d.io_bytes = static_cast<std::uint64_t>(io_bytes);
      d.bandwidth = number(*it, "bw_bytes", dwhere);
      d.iops = number(*it, "iops", dwhere);
      const json& clat = member(*it, "clat_ns", dwhere);
      if (!clat.is_object()) fail(fmt::format("fio JSON: {}.clat_ns is not an object", dwhere));
      d.clat_mean_ns = number(clat, "mean", dwhere + ".clat_ns");
      if (auto p = clat.find("percentile"); p != clat.end()) {
        if (!p->is_object())
          fail(fmt::format("fio JSON: {}.clat_ns.percentile is not an object", dwhere));
        for (const auto& [key, value] : p->items()) {
          auto pct = text::parse_double(key);
          if (!pct || !value.is_number())
            fail(fmt::format("fio JSON: {}.clat_ns.percentile has a bad entry \"{}\": {}",
                             dwhere, key, value.dump()));
          d.clat_percentiles_ns[*pct] = value.get<double>();
        }
      }
      out.directions.push_back(std::move(d));
    }
    return out;
  }

  // Absent from older fio: nullopt. Present, they must be what fio writes.
  std::optional<FioCpu> read_cpu(const json& job, const std::string& where) const {
    for (const char* key : {"usr_cpu", "sys_cpu", "job_runtime", "ctx"}) {
      if (!job.contains(key)) return std::nullopt;
    }
    FioCpu cpu{.usr_pct = number(job, "usr_cpu", where), .sys_pct = number(job, "sys_cpu", where),
               .runtime_ms = number(job, "job_runtime", where)};
    const double ctx = number(job, "ctx", where);
    if (cpu.usr_pct < 0 || cpu.sys_pct < 0 || cpu.runtime_ms < 0 || ctx < 0) {
      fail(fmt::format("fio JSON: {} has a negative usr_cpu, sys_cpu, job_runtime or ctx", where));
    }
    cpu.ctx = static_cast<std::uint64_t>(ctx);
    return cpu;
  }

  std::string_view source_;
  std::size_t line_;
};

}  // namespace

std::vector<FioDocument> parse_fio(std::string_view text, std::string_view source) {
  std::vector<FioDocument> docs;
  std::size_t pos = 0;
  std::size_t line = 1;
  while (auto begin = next_document_start(text, pos, line)) {
    std::size_t start_line = line;
    auto end = matching_brace(text, *begin, line);
    if (!end)
      throw Error(located(source, start_line,
                          "fio JSON document starting here is truncated (the text ends inside "
                          "it): was fio or its writer killed? Rerun the job or remove the "
                          "partial document"));
    json doc;
    try {
      doc = json::parse(text.substr(*begin, *end - *begin));
    } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
      throw Error(located(source, start_line,
                          fmt::format("invalid fio JSON document starting here: {}", e.what())));
    }
    docs.push_back(DocumentReader(source, start_line).read(doc));
    // Continue at the line after the one holding the closing brace.
    std::size_t nl = text.find('\n', *end);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  if (docs.empty())
    throw Error(located(source, 0,
                        "no fio JSON document (a line starting with '{'): run fio with "
                        "--output-format=json, or choose another --format"));
  return docs;
}

bool looks_like_fio(std::string_view text) {
  if (text.find('{') == std::string_view::npos) return false;  // no line can start with one
  bool brace_line = false;
  for (const auto& line : text::split_lines(text)) {
    if (text::trim(line.text).starts_with('{')) {
      brace_line = true;
      break;
    }
  }
  return brace_line && (text.find("\"fio version\"") != std::string_view::npos ||
                        text.find("\"jobs\"") != std::string_view::npos);
}

std::string describe_fio_error(const FioJob& job) {
  return fmt::format("fio job '{}' reported error {} ({})", job.name, job.error,
                     std::strerror(job.error));
}

}  // namespace abvm
