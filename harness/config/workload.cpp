#include "config/workload.hpp"

#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace abvm {

namespace {

// The kinds' names as a table, built from WorkloadSpec's alternatives: a new kind is in it with
// no further line here.
template <std::size_t... I>
constexpr auto kind_names(std::index_sequence<I...>) {
  return std::array<std::string_view, sizeof...(I)>{std::variant_alternative_t<I, WorkloadSpec>::kind...};
}
constexpr auto kKindNames = kind_names(std::make_index_sequence<std::variant_size_v<WorkloadSpec>>{});

template <std::size_t... I>
std::optional<WorkloadSpec> spec_named(std::string_view name, std::index_sequence<I...>) {
  std::optional<WorkloadSpec> out;
  ((name == kKindNames[I] ? (void)out.emplace(std::in_place_index<I>) : void()), ...);
  return out;
}

}  // namespace

std::string_view kind_name(const WorkloadSpec& spec) { return kKindNames[spec.index()]; }

std::vector<std::string> workload_kind_names() { return {kKindNames.begin(), kKindNames.end()}; }

std::optional<WorkloadSpec> default_spec(std::string_view name) {
  return spec_named(name, std::make_index_sequence<std::variant_size_v<WorkloadSpec>>{});
}

namespace {

constexpr const char* kScratch = "@scratch";

// A fio option that is a byte count ("128M"), or nullopt.
std::optional<std::uint64_t> fio_bytes(const FioWorkload& fio, const std::string& key) {
  const auto it = fio.options.find(key);
  if (it == fio.options.end()) return std::nullopt;
  try {
    return parse_size(it->second);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string fio_option(const FioWorkload& fio, const std::string& key) {
  const auto it = fio.options.find(key);
  return it == fio.options.end() ? "" : it->second;
}

}  // namespace

std::string run_size(const WorkloadSpec& spec) {
  return visit_kind(overloaded{[](const DdWorkload& dd) { return fmt::format("bs={} count={}", dd.block_size, dd.count); },
                               [](const FioWorkload& fio) {
                                 if (fio.job_file) return std::string("job file");
                                 std::string out = fmt::format("bs={} size={}", fio_option(fio, "bs"), fio_option(fio, "size"));
                                 if (const std::string n = fio_option(fio, "number_ios"); !n.empty()) out += " number_ios=" + n;
                                 if (const std::string t = fio_option(fio, "runtime"); !t.empty()) out += " runtime=" + t;
                                 return out;
                               }},
                    spec);
}

std::optional<std::string> unsizable(const WorkloadSpec& spec) {
  return visit_kind(overloaded{[](const DdWorkload&) -> std::optional<std::string> { return std::nullopt; },
                               [](const FioWorkload& fio) -> std::optional<std::string> {
                                 if (fio.job_file) return "a fio job file sets its own size";
                                 if (fio.options.contains("runtime") || fio.options.contains("time_based")) {
                                   return "fio's runtime= already sets its length";
                                 }
                                 if (fio.options.contains("number_ios")) {
                                   try {
                                     (void)std::stoull(fio_option(fio, "number_ios"));
                                     return std::nullopt;
                                   } catch (const std::exception&) {
                                     return "fio's number_ios= is no whole number";
                                   }
                                 }
                                 if (!fio_bytes(fio, "size")) return "fio's size= is no byte count";
                                 return std::nullopt;
                               }},
                    spec);
}

WorkloadSpec scaled(const WorkloadSpec& spec, std::uint64_t factor) {
  WorkloadSpec out = spec;
  visit_kind(overloaded{[&](DdWorkload& dd) { dd.count *= factor; },
                        [&](FioWorkload& fio) {
                          if (fio.options.contains("number_ios")) {
                            fio.options["number_ios"] = std::to_string(std::stoull(fio.options["number_ios"]) * factor);
                          } else if (const auto bytes = fio_bytes(fio, "size")) {
                            fio.options["size"] = format_size(*bytes * factor);
                          }
                        }},
             out);
  return out;
}

std::optional<std::uint64_t> scratch_extent(const WorkloadSpec& spec) {
  return visit_kind(overloaded{[](const DdWorkload& dd) -> std::optional<std::uint64_t> {
                                 if (dd.input != kScratch && dd.output != kScratch) return std::nullopt;
                                 try {
                                   return parse_size(dd.block_size) * dd.count;
                                 } catch (const Error&) {
                                   return std::nullopt;
                                 }
                               },
                               [](const FioWorkload& fio) -> std::optional<std::uint64_t> {
                                 if (fio.job_file || fio_option(fio, "filename") != kScratch) return std::nullopt;
                                 if (fio.options.contains("number_ios")) return std::nullopt;
                                 return fio_bytes(fio, "size");
                               }},
                    spec);
}

}  // namespace abvm
