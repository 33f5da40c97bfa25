#pragma once
// The verdict and the estimate read back from a file abvm wrote (steps.jsonl, analysis.json), as its word
// (core/json_read.hpp): one reader, so that every file's error lists the same words.
#include <string>

#include "verdict/analysis.hpp"

namespace abvm {

class JsonField;
void read_json(const JsonField& f, Verdict& verdict);
std::string json_expected(const Verdict*);
// "paired" or "unpaired" (to_string(Estimate)).
void read_json(const JsonField& f, Estimate& estimate);
std::string json_expected(const Estimate*);

}  // namespace abvm
