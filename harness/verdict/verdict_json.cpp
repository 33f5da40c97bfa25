#include "verdict/verdict_json.hpp"

#include "core/json_read.hpp"

namespace abvm {

std::string json_expected(const Verdict*) { return "one of regression, improvement, no_change, inconclusive"; }

void read_json(const JsonField& f, Verdict& verdict) { verdict = f.word<Verdict>(parse_verdict, json_expected(&verdict)); }

std::string json_expected(const Estimate*) { return "\"paired\" or \"unpaired\""; }

void read_json(const JsonField& f, Estimate& estimate) {
  const auto parse = [](std::string_view word) -> std::optional<Estimate> {
    for (const Estimate e : {Estimate::unpaired, Estimate::paired}) {
      if (word == to_string(e)) return e;
    }
    return std::nullopt;
  };
  estimate = f.word<Estimate>(parse, json_expected(&estimate));
}

}  // namespace abvm
