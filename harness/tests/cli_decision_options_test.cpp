// cli/decision_options.hpp with config/ and verdict/: the --margin/--confidence/--seed flags of
// `abvm analyze` and `abvm compare`, an experiment's [analysis] keys (and `abvm config keys`) and
// verdict's AnalysisOptions share one set of defaults and ranges, core/decision_defaults.hpp. This
// test fails when any of them gets a copy of its own that drifts.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>

#include "cli/decision_options.hpp"
#include "config/experiment.hpp"
#include "config/keys.hpp"
#include "core/decision_defaults.hpp"
#include "core/error.hpp"
#include "verdict/analysis.hpp"

using namespace abvm;

namespace {

std::string experiment_text(const std::string& analysis) {
  return "name = \"d\"\n[sides.B]\nkernel = \"other\"\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n[analysis]\n" +
         analysis;
}

std::string load_error(const std::string& analysis) {
  try {
    load_experiment_text(experiment_text(analysis), "d.toml", ".");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// analyze() checks its options before anything else; with valid ones and no samples it stops at
// the empty input instead.
std::string analyze_error(const AnalysisOptions& options) {
  try {
    analyze(SampleSet{}, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string effective(const Experiment& e, const std::string& key) {
  const auto it = std::find_if(e.effective.begin(), e.effective.end(),
                               [&](const EffectiveValue& v) { return v.key == key; });
  return it == e.effective.end() ? "(not shown)" : it->value;
}

}  // namespace

TEST(CliDecisionOptions, DefaultsAreTheSameForFlagsExperimentsAndTheAnalysis) {
  CLI::App app;
  cli::DecisionArgs args;
  cli::add_decision_options(app, args);
  const AnalysisOptions from_flags = args.analysis_options();
  const AnalysisOptions analysis;
  const Experiment e = load_experiment_text(experiment_text(""), "d.toml", ".");

  EXPECT_EQ(from_flags.margin, kDefaultMargin);
  EXPECT_EQ(analysis.margin, kDefaultMargin);
  EXPECT_EQ(e.analysis.margin, kDefaultMargin);
  EXPECT_EQ(from_flags.confidence, kDefaultConfidence);
  EXPECT_EQ(analysis.confidence, kDefaultConfidence);
  EXPECT_EQ(e.analysis.confidence, kDefaultConfidence);
  EXPECT_EQ(from_flags.seed, kDefaultAnalysisSeed);
  EXPECT_EQ(analysis.seed, kDefaultAnalysisSeed);
  EXPECT_EQ(e.analysis.seed, kDefaultAnalysisSeed);

  // What --help, `abvm config keys` and `abvm config show` print as the default.
  const std::pair<std::string, std::string> flag_keys[] = {
      {"--margin", "analysis.margin"}, {"--confidence", "analysis.confidence"}, {"--seed", "analysis.seed"}};
  for (const auto& [flag, key] : flag_keys) {
    const KeySpec* spec = find_key(key);
    ASSERT_NE(spec, nullptr) << key;
    EXPECT_EQ(app.get_option(flag)->get_default_str(), spec->default_text) << flag;
    EXPECT_EQ(effective(e, key), spec->default_text) << key;
  }
}

TEST(CliDecisionOptions, TheLoaderAndTheAnalysisRefuseTheSameValues) {
  struct Case {
    std::string key;
    OpenRange range;
    std::function<void(AnalysisOptions&, double)> set;
  };
  const Case cases[] = {
      {"margin", kMarginRange, [](AnalysisOptions& o, double x) { o.margin = x; }},
      {"confidence", kConfidenceRange, [](AnalysisOptions& o, double x) { o.confidence = x; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const KeySpec* spec = find_key("analysis." + c.key);
    ASSERT_NE(spec, nullptr);
    ASSERT_TRUE(spec->range.has_value());
    EXPECT_EQ(spec->range->min, c.range.low);
    EXPECT_EQ(spec->range->max, c.range.high);
    EXPECT_TRUE(spec->range->min_open && spec->range->max_open);
    EXPECT_EQ(describe_allowed(*spec), fmt::format("{} < x < {}", c.range.low, c.range.high));

    for (double outside : {c.range.low, c.range.high}) {
      EXPECT_NE(load_error(fmt::format("{} = {}\n", c.key, outside)).find("out of range"), std::string::npos);
      AnalysisOptions o;
      c.set(o, outside);
      EXPECT_NE(analyze_error(o).find(c.key + " " + fmt::format("{}", outside) + " is out of range"),
                std::string::npos)
          << analyze_error(o);
    }
    for (double inside : {c.range.low + 1e-9, c.range.high - 1e-9}) {
      EXPECT_EQ(load_error(fmt::format("{} = {}\n", c.key, inside)), "") << inside;
      AnalysisOptions o;
      c.set(o, inside);
      EXPECT_EQ(analyze_error(o).find("out of range"), std::string::npos) << analyze_error(o);
    }
  }
}
