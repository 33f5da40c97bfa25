#include "stats/descriptive.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace abvm::stats;

namespace {

// Reference values: harness/tests/reference/dist_reference.py (numpy 1.24.2, scipy 1.10.1; np.median,
// np.mean, np.std(ddof=1), scipy.stats.median_abs_deviation, scipy.stats.iqr, np.percentile linear),
// output kept in harness/tests/data/reference/dist_reference.txt.
const double bytes = 8589934592;
const std::map<std::string, std::vector<double>> datasets = {
    {"one", {5.0}},
    {"two", {1.0, 3.0}},
    {"equal", {2.5, 2.5, 2.5, 2.5}},
    {"small", {3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0}},
    {"outlier", {10.0, 10.2, 9.9, 10.1, 10.0, 30.0, 9.8, 10.3}},
    {"mostly_equal", {7.0, 7.0, 7.0, 7.0, 7.0, 8.0, 100.0}},
    {"both_tails", {1.0, 3.0, 3.1, 3.2, 3.3, 3.4, 50.0, 3.15, 3.25}},
    {"on_fence", {1.0, 1.0, 1.0, 2.0, 2.0, 3.5, 1.5, 1.5, 2.0}},
    {"tukey_only", {10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 26.0}},
    {"seed_a", {bytes / 1.95557, bytes / 2.05176, bytes / 1.88314, bytes / 1.84899, bytes / 5.37184,
                bytes / 1.9205, bytes / 6.85166, bytes / 1.74049, bytes / 6.31699, bytes / 2.47057}},
    {"seed_b", {bytes / 2.25993, bytes / 1.82438, bytes / 1.93856, bytes / 1.83405, bytes / 7.50199,
                bytes / 2.28742, bytes / 5.74958, bytes / 1.99149, bytes / 5.67647, bytes / 2.93957}},
};

struct SummaryRef {
  const char* name;
  std::size_t n;
  double median, mean, sd, mad, iqr, min, max, cv;
};
const SummaryRef summary_refs[] = {
    {"one", 1, 5.0, 5.0, 0.0, 0.0, 0.0, 5.0, 5.0, 0.0},
    {"two", 2, 2.0, 2.0, 1.4142135623730951, 1.0, 1.0, 1.0, 3.0, 0.7071067811865476},
    {"equal", 4, 2.5, 2.5, 0.0, 0.0, 0.0, 2.5, 2.5, 0.0},
    {"small", 11, 4.0, 4.0, 2.3664319132398464, 1.0, 2.5, 1.0, 9.0, 0.5916079783099616},
    {"outlier", 8, 10.05, 12.537500000000001, 7.0577085516476235, 0.14999999999999947, 0.25, 9.8, 30.0, 0.5629279004305182},
    {"mostly_equal", 7, 7.0, 20.428571428571427, 35.08968102285505, 0.0, 0.5, 7.0, 100.0, 1.7176766934264713},
    {"both_tails", 9, 3.2, 8.155555555555555, 15.70894340106227, 0.10000000000000009, 0.19999999999999973, 1.0, 50.0,
     1.9261647222010958},
    {"on_fence", 9, 1.5, 1.7222222222222223, 0.7949493345141214, 0.5, 1.0, 1.0, 3.5, 0.4615834845565866},
    {"tukey_only", 11, 15.0, 15.545454545454545, 4.502524544378106, 3.0, 5.0, 10.0, 26.0, 0.28963608180210043},
    {"seed_a", 10, 4289582687.9138985, 3488400587.9387655, 1488962163.0426211, 500966507.1152806, 2470784889.7343225,
     1253701233.277775, 4935354177.271917, 0.4268323334741847},
    {"seed_b", 10, 3778133869.6450615, 3276713799.504228, 1410189979.7646515, 880707079.2968307, 2536164787.9978113,
     1145020800.0810452, 4708413045.527796, 0.4303671501545284},
};

struct QuantileRef {
  const char* name;
  double q[7];
};
const double quantile_levels[7] = {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0};
const QuantileRef quantile_refs[] = {
    {"one", {5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0}},
    {"two", {1.0, 1.2, 1.5, 2.0, 2.5, 2.8, 3.0}},
    {"equal", {2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5}},
    {"small", {1.0, 1.0, 2.5, 4.0, 5.0, 6.0, 9.0}},
    {"outlier", {9.8, 9.870000000000001, 9.975, 10.05, 10.225, 16.209999999999997, 30.0}},
    {"mostly_equal", {7.0, 7.0, 7.0, 7.0, 7.5, 44.80000000000003, 100.0}},
    {"both_tails", {1.0, 2.6, 3.1, 3.2, 3.3, 12.72000000000001, 50.0}},
    {"on_fence", {1.0, 1.0, 1.0, 1.5, 2.0, 2.3000000000000003, 3.5}},
    {"tukey_only", {10.0, 11.0, 12.5, 15.0, 17.5, 19.0, 26.0}},
    {"seed_a", {1253701233.277775, 1349203172.4223623, 2068526589.1811895, 4289582687.9138985, 4539311478.915512,
                4674705209.234988, 4935354177.271917}},
    {"seed_b", {1145020800.0810452, 1459111796.3352103, 1865483125.3087656, 3778133869.6450615, 4401647913.306577,
                4686070514.661555, 4708413045.527796}},
};

// Relative tolerance that still catches any formula slip (ddof, interpolation rule, scaling).
void expect_close(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-12 * std::max(1.0, std::abs(want))) << what;
}

}  // namespace

TEST(StatsDistDescriptive, SummariesMatchNumpyAndScipy) {
  for (const SummaryRef& ref : summary_refs) {
    const Summary s = summarize(datasets.at(ref.name));
    const std::string n = ref.name;
    EXPECT_EQ(s.n, ref.n) << n;
    expect_close(s.median, ref.median, n + " median");
    expect_close(s.mean, ref.mean, n + " mean");
    expect_close(s.sd, ref.sd, n + " sd");
    expect_close(s.mad, ref.mad, n + " mad");
    expect_close(s.iqr, ref.iqr, n + " iqr");
    expect_close(s.min, ref.min, n + " min");
    expect_close(s.max, ref.max, n + " max");
    expect_close(s.cv, ref.cv, n + " cv");
  }
}

TEST(StatsDistDescriptive, QuantilesMatchNumpyPercentile) {
  for (const QuantileRef& ref : quantile_refs) {
    std::vector<double> sorted = datasets.at(ref.name);
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 7; ++i) {
      expect_close(quantile(sorted, quantile_levels[i]), ref.q[i],
                   std::string(ref.name) + " q=" + std::to_string(quantile_levels[i]));
    }
  }
}

TEST(StatsDistDescriptive, MedianAndMadOfUnsortedInput) {
  for (const SummaryRef& ref : summary_refs) {
    expect_close(median(datasets.at(ref.name)), ref.median, ref.name);
    expect_close(mad(datasets.at(ref.name)), ref.mad, ref.name);
  }
}

TEST(StatsDistDescriptive, SdKeepsItsDigitsForLargeValuesWithSmallSpread) {
  // 4e9 +- 1: the one-pass sum-of-squares formula returns 0 or garbage here; sd is exactly 1.
  const std::vector<double> v = {4e9 - 1, 4e9, 4e9 + 1};
  EXPECT_DOUBLE_EQ(summarize(v).sd, 1.0);
}

// Issue 11 item 5: the sum, the middle pair and the squares overflowed near 1e308 (inf, then
// "quantile: non-finite value"). NumPy gives inf for np.mean([1.7e308, 1.6e308]); the true values
// are below.
TEST(StatsDistDescriptive, ValuesNearTheTopOfTheRangeStayFinite) {
  const std::vector<double> v = {1.7e308, 1.6e308, 1.5e308, 1.4e308};
  const Summary s = summarize(v);
  EXPECT_NEAR(s.mean, 1.55e308, 1e-14 * 1e308);
  EXPECT_NEAR(s.median, 1.55e308, 1e-14 * 1e308);
  EXPECT_NEAR(s.sd, 0.12909944487358056e308, 1e-12 * 1e308);  // numpy.std([1.7, 1.6, 1.5, 1.4], ddof=1)
  EXPECT_NEAR(median(v), 1.55e308, 1e-14 * 1e308);
  // Denormals keep their ratio.
  const Summary d = summarize(std::vector<double>{1e-310, 3e-310});
  EXPECT_NEAR(d.mean / 2e-310, 1, 1e-9);
}

TEST(StatsDistDescriptive, CvIsZeroWhenTheMeanIsZero) {
  const std::vector<double> v = {-1.0, 1.0};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.mean, 0.0);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(2.0));
  EXPECT_EQ(s.cv, 0.0);
}

TEST(StatsDistDescriptive, EmptyOrNonFiniteInputThrows) {
  const std::vector<double> empty;
  const std::vector<double> with_nan = {1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  const std::vector<double> with_inf = {1.0, std::numeric_limits<double>::infinity()};
  EXPECT_THROW(summarize(empty), std::invalid_argument);
  EXPECT_THROW(summarize(with_nan), std::invalid_argument);
  EXPECT_THROW(summarize(with_inf), std::invalid_argument);
  EXPECT_THROW(median(empty), std::invalid_argument);
  EXPECT_THROW(median(with_nan), std::invalid_argument);
  EXPECT_THROW(mad(empty), std::invalid_argument);
  EXPECT_THROW(quantile(empty, 0.5), std::invalid_argument);
}

TEST(StatsDistDescriptive, QuantileRejectsBadLevelAndUnsortedData) {
  const std::vector<double> sorted = {1, 2, 3};
  const std::vector<double> unsorted = {3, 1, 2};
  EXPECT_THROW(quantile(sorted, -0.01), std::invalid_argument);
  EXPECT_THROW(quantile(sorted, 1.01), std::invalid_argument);
  EXPECT_THROW(quantile(sorted, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(quantile(unsorted, 0.5), std::invalid_argument);
}
