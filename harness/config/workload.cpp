#include "config/workload.hpp"

#include <array>

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

}  // namespace abvm
