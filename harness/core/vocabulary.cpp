#include "core/vocabulary.hpp"

#include <utility>

namespace abvm {
namespace {

// One table per word set: to_string and parse read the same pairs.
template <typename Enum, std::size_t N>
const char* name_of(const std::pair<Enum, const char*> (&table)[N], Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::pair<Enum, const char*> (&table)[N], std::string_view text) {
  for (const auto& [v, name] : table)
    if (text == name) return v;
  return std::nullopt;
}

constexpr std::pair<Side, const char*> kSideNames[] = {{Side::a, "A"}, {Side::b, "B"}};
constexpr std::pair<Outcome, const char*> kOutcomeNames[] = {
    {Outcome::ok, "ok"},           {Outcome::workload_failed, "workload-failed"},
    {Outcome::panic, "panic"},     {Outcome::timeout, "timeout"},
    {Outcome::infra_error, "infra-error"}, {Outcome::invalid_output, "invalid-output"},
    {Outcome::mismatch, "mismatch"},       {Outcome::partner_failed, "partner-failed"}};
constexpr std::pair<Better, const char*> kBetterNames[] = {{Better::higher, "higher"}, {Better::lower, "lower"}};
constexpr std::pair<Accelerator, const char*> kAcceleratorNames[] = {{Accelerator::kvm, "kvm"},
                                                                    {Accelerator::tcg, "tcg"}};
constexpr std::pair<CpuClock, const char*> kCpuClockNames[] = {
    {CpuClock::libvirt, "libvirt"}, {CpuClock::schedstat, "schedstat"}, {CpuClock::ticks, "ticks"}};

}  // namespace

const char* to_string(Side side) { return name_of(kSideNames, side); }
std::optional<Side> parse_side(std::string_view text) { return value_of(kSideNames, text); }

const char* to_string(Outcome outcome) { return name_of(kOutcomeNames, outcome); }
std::optional<Outcome> parse_outcome(std::string_view text) { return value_of(kOutcomeNames, text); }
const char* outcome_words() { return "ok, workload-failed, panic, timeout, infra-error, invalid-output, mismatch, partner-failed"; }

const char* to_string(Better better) { return name_of(kBetterNames, better); }
std::optional<Better> parse_better(std::string_view text) { return value_of(kBetterNames, text); }

const char* to_string(Accelerator accelerator) { return name_of(kAcceleratorNames, accelerator); }
std::optional<Accelerator> parse_accelerator(std::string_view text) { return value_of(kAcceleratorNames, text); }

const char* to_string(CpuClock clock) { return name_of(kCpuClockNames, clock); }
std::optional<CpuClock> parse_cpu_clock(std::string_view text) { return value_of(kCpuClockNames, text); }

}  // namespace abvm
