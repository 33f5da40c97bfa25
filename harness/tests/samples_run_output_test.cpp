// samples/run_output: one run's output read by its workload kind's sample parser.
#include "samples/run_output.hpp"

#include <gtest/gtest.h>

#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data_text;
using test::error_of;

const std::string kDdRun = "8589934592 bytes (8.6 GB, 8.0 GiB) copied, 2 s, 4.3 GB/s\n";

TEST(SamplesRunOutput, DdGivesItsBandwidth) {
  const RunMetrics m = parse_run_output(DdWorkload{}, "dd-write", kDdRun, "t/dd-write.0");
  EXPECT_EQ(m.failure, "");
  ASSERT_EQ(m.metrics.size(), 1u);
  EXPECT_EQ(m.metrics[0].name, "dd-write.bandwidth");
  EXPECT_DOUBLE_EQ(m.metrics[0].value, 8589934592.0 / 2);
}

TEST(SamplesRunOutput, OneRunOnly) {
  EXPECT_EQ(error_of([&] { parse_run_output(DdWorkload{}, "w", kDdRun + kDdRun, "t/w.0"); }),
            "t/w.0: 2 dd summaries, expected 1");
  const std::string two = data_text("fio/two-documents.json");
  EXPECT_EQ(error_of([&] { parse_run_output(FioWorkload{}, "w", two, "t/w.0"); }), "t/w.0: 2 fio documents, expected 1");
}

TEST(SamplesRunOutput, FioGivesEveryDirectionsFigures) {
  const RunMetrics m = parse_run_output(FioWorkload{}, "seq", data_text("fio/seqwrite.json"), "t/seq.0");
  EXPECT_EQ(m.failure, "");
  EXPECT_FALSE(m.metrics.empty());
}

// A job's error is the run's failure, in fio's words, with no metrics beside it.
TEST(SamplesRunOutput, AFioJobErrorFailsTheRun) {
  const RunMetrics m = parse_run_output(FioWorkload{}, "full", data_text("fio/error-devfull.json"), "t/full.0");
  EXPECT_NE(m.failure.find("error 28"), std::string::npos) << m.failure;
  EXPECT_TRUE(m.metrics.empty());
}

}  // namespace
}  // namespace abvm
