// Tests of samples/select.hpp: the metrics an experiment asks to decide on, and what it asks for that
// the samples lack (issue 20: never dropped in silence).
#include "samples/select.hpp"

#include <gtest/gtest.h>

namespace abvm {
namespace {

MetricSamples metric(const std::string& name, Better better = Better::higher) {
  return {.name = name, .unit = "B/s", .better = better, .a = {Sample{.value = 1}}, .b = {Sample{.value = 2}}};
}

SampleSet samples() {
  SampleSet s;
  s.metrics = {metric("dd-write.bandwidth"), metric("fio-w.fio-w.write.iops"), metric("fio-w.fio-w.write.clat_p99")};
  s.missing = {MissingData{.workload = "dd-read", .runs_a = 2, .runs_b = 2, .first_failure = "dd: failed"}};
  return s;
}

TEST(Select, NoSelectionKeepsEverythingAndEveryMissingWorkload) {
  const SampleSet s = select_metrics(samples(), {});
  EXPECT_EQ(s.metrics.size(), 3u);
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0].workload, "dd-read");
}

// Issue 27: cost metrics are reported always and judged only when named, so that an experiment's
// verdict does not change because its runs now record their cost.
TEST(Select, CostMetricsAreKeptAndJudgedOnlyWhenNamed) {
  SampleSet in = samples();
  in.metrics.push_back(metric("dd-write.host_cpu_per_gib", Better::lower));
  in.metrics.push_back(metric("dd-write.guest_cpu_per_gib", Better::lower));
  const SampleSet all = select_metrics(in, {});
  ASSERT_EQ(all.metrics.size(), 5u);
  EXPECT_TRUE(all.metrics[0].judged);
  EXPECT_FALSE(all.metrics[3].judged);
  EXPECT_FALSE(all.metrics[4].judged);
  const SampleSet some = select_metrics(in, {{.name = "dd-write.bandwidth"}, {.name = "dd-write.host_cpu_per_gib"}});
  ASSERT_EQ(some.metrics.size(), 3u);
  EXPECT_EQ(some.metrics[1].name, "dd-write.host_cpu_per_gib");
  EXPECT_TRUE(some.metrics[1].judged);
  EXPECT_EQ(some.metrics[2].name, "dd-write.guest_cpu_per_gib");
  EXPECT_FALSE(some.metrics[2].judged);
}

TEST(Select, SelectedMetricsInTheirOrderWithTheirDirection) {
  const SampleSet s = select_metrics(samples(), {{.name = "fio-w.fio-w.write.clat_p99", .better = Better::lower},
                                                 {.name = "dd-write.bandwidth"}});
  ASSERT_EQ(s.metrics.size(), 2u);
  EXPECT_EQ(s.metrics[0].name, "fio-w.fio-w.write.clat_p99");
  EXPECT_EQ(s.metrics[0].better, Better::lower);
  EXPECT_EQ(s.metrics[1].name, "dd-write.bandwidth");
  EXPECT_TRUE(s.missing.empty()) << "dd-read is not asked for";
}

TEST(Select, AMetricAskedOfAWorkloadWithoutDataIsMissingWithIt) {
  const SampleSet s = select_metrics(samples(), {{.name = "dd-write.bandwidth"}, {.name = "dd-read.bandwidth"}});
  ASSERT_EQ(s.metrics.size(), 1u);
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0].workload, "dd-read");
  EXPECT_EQ(s.missing[0].metrics, std::vector<std::string>{"dd-read.bandwidth"});
  EXPECT_EQ(s.missing[0].runs_a, 2u);
  EXPECT_EQ(s.missing[0].first_failure, "dd: failed");
}

TEST(Select, AMetricNoRunReportedIsMissingWithWhatItsWorkloadReports) {
  const SampleSet s = select_metrics(samples(), {{.name = "fio-w.fio-w.read.iops"}, {.name = "fio-w.bandwidth"}});
  EXPECT_TRUE(s.metrics.empty());
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0].workload, "fio-w");
  EXPECT_EQ(s.missing[0].metrics, (std::vector<std::string>{"fio-w.fio-w.read.iops", "fio-w.bandwidth"}));
  EXPECT_EQ(s.missing[0].reported, (std::vector<std::string>{"fio-w.fio-w.write.iops", "fio-w.fio-w.write.clat_p99"}));
  EXPECT_TRUE(s.missing[0].first_failure.empty());
}

}  // namespace
}  // namespace abvm
