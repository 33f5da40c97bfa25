#pragma once
// `abvm compare NEW_DIR BASELINE_DIR`: the same statistics between two results directories
// (e.g. tonight's run against a stored baseline): A = the baseline, B = the new run, one side of
// each directory (B by default: the candidate of a nightly A/B experiment).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/analyze.hpp"
#include "samples/sample.hpp"

namespace abvm::cli {

Command add_compare(CLI::App& app);

// One comparison from two loaded results directories: for every metric present in both (in
// the baseline's order), A = `side`'s samples of `baseline`, B = `side`'s samples of `fresh`.
// Boot ids get the prefixes "baseline:" and "new:" (boots of different runs are different
// units), blocks are dropped (no pairing across days), and the new run's order positions come
// after the baseline's. Failures, hosts and accelerators of that side move along. The names of
// metrics found in only one directory are appended to `dropped`. Throws Error when no metric
// is in both.
SampleSet compare_samples(const SampleSet& baseline, const SampleSet& fresh, Side side,
                          std::vector<std::string>& dropped);

}  // namespace abvm::cli
