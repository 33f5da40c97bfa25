#include "verdict/verdict_json.hpp"

#include "core/json_read.hpp"

namespace abvm {

std::string json_expected(const Verdict*) { return "one of regression, improvement, no_change, inconclusive"; }

void read_json(const JsonField& f, Verdict& verdict) { verdict = f.word<Verdict>(parse_verdict, json_expected(&verdict)); }

}  // namespace abvm
