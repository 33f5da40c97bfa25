#include "stats/outliers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

using namespace abvm::stats;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Reference values: harness/tests/reference/dist_reference.py (numpy 1.24.2, scipy 1.10.1): fences from
// np.percentile, modified z-scores from scipy.stats.median_abs_deviation.

TEST(StatsDistOutliers, OneFarValueIsFlaggedByBothRules) {
  const std::vector<double> v = {10.0, 10.2, 9.9, 10.1, 10.0, 30.0, 9.8, 10.3};
  const Outliers o = find_outliers(v);
  EXPECT_NEAR(o.tukey_low, 9.6, 1e-12);
  EXPECT_NEAR(o.tukey_high, 10.6, 1e-12);
  EXPECT_THAT(o.tukey, ElementsAre(5));
  EXPECT_THAT(o.modified_z, ElementsAre(5));
  EXPECT_THAT(o.any, ElementsAre(5));
}

TEST(StatsDistOutliers, TukeyAloneWhenMadIsZero) {
  // MAD is 0 (five of seven equal): the modified z-score flags nothing, Tukey's fences still work.
  const std::vector<double> v = {7.0, 7.0, 7.0, 7.0, 7.0, 8.0, 100.0};
  const Outliers o = find_outliers(v);
  EXPECT_NEAR(o.tukey_low, 6.25, 1e-12);
  EXPECT_NEAR(o.tukey_high, 8.25, 1e-12);
  EXPECT_THAT(o.tukey, ElementsAre(6));
  EXPECT_THAT(o.modified_z, IsEmpty());
  EXPECT_THAT(o.any, ElementsAre(6));
}

TEST(StatsDistOutliers, SeedSlowRunsAreModifiedZOutliersOnlyOnSideA) {
  // The seed's A side: the three slow runs (positions 4, 6, 8) lie inside Tukey's wide fences but
  // are modified-z outliers; the union lists them in input order.
  const double bytes = 8589934592;
  const std::vector<double> a = {bytes / 1.95557, bytes / 2.05176, bytes / 1.88314, bytes / 1.84899, bytes / 5.37184,
                                 bytes / 1.9205,  bytes / 6.85166, bytes / 1.74049, bytes / 6.31699, bytes / 2.47057};
  const std::vector<double> b = {bytes / 2.25993, bytes / 1.82438, bytes / 1.93856, bytes / 1.83405, bytes / 7.50199,
                                 bytes / 2.28742, bytes / 5.74958, bytes / 1.99149, bytes / 5.67647, bytes / 2.93957};
  const Outliers oa = find_outliers(a);
  EXPECT_NEAR(oa.tukey_low, -1637650745.4202943, 1e-3);
  EXPECT_NEAR(oa.tukey_high, 8245488813.516996, 1e-3);
  EXPECT_THAT(oa.tukey, IsEmpty());
  EXPECT_THAT(oa.modified_z, ElementsAre(4, 6, 8));
  EXPECT_THAT(oa.any, ElementsAre(4, 6, 8));
  const Outliers ob = find_outliers(b);
  EXPECT_NEAR(ob.tukey_low, -1938764056.6879513, 1e-3);
  EXPECT_NEAR(ob.tukey_high, 8205895095.303293, 1e-3);
  EXPECT_THAT(ob.any, IsEmpty());
}

TEST(StatsDistOutliers, BothTailsFlaggedOnceEach) {
  // A low and a high outlier, each flagged by both rules: the union lists each index once, ascending.
  const std::vector<double> v = {1.0, 3.0, 3.1, 3.2, 3.3, 3.4, 50.0, 3.15, 3.25};
  const Outliers o = find_outliers(v);
  EXPECT_NEAR(o.tukey_low, 2.8000000000000007, 1e-12);
  EXPECT_NEAR(o.tukey_high, 3.5999999999999996, 1e-12);
  EXPECT_THAT(o.tukey, ElementsAre(0, 6));
  EXPECT_THAT(o.modified_z, ElementsAre(0, 6));
  EXPECT_THAT(o.any, ElementsAre(0, 6));
}

TEST(StatsDistOutliers, TukeyOnlyWhenTheBulkIsSpreadOut) {
  // An evenly spread bulk has a large MAD: 26 has modified z 2.47 (< 3.5) but lies above Q3 + 1.5 IQR.
  const std::vector<double> v = {10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 26.0};
  const Outliers o = find_outliers(v);
  EXPECT_NEAR(o.tukey_low, 5.0, 1e-12);
  EXPECT_NEAR(o.tukey_high, 25.0, 1e-12);
  EXPECT_THAT(o.tukey, ElementsAre(10));
  EXPECT_THAT(o.modified_z, IsEmpty());
  EXPECT_THAT(o.any, ElementsAre(10));
}

TEST(StatsDistOutliers, SmallAndConstantSamplesFlagNothing) {
  for (const std::vector<double>& v : {std::vector<double>{5.0}, std::vector<double>{1.0, 3.0},
                                       std::vector<double>{2.5, 2.5, 2.5, 2.5}}) {
    const Outliers o = find_outliers(v);
    EXPECT_THAT(o.any, IsEmpty());
  }
  const Outliers one = find_outliers(std::vector<double>{5.0});
  EXPECT_EQ(one.tukey_low, 5.0);
  EXPECT_EQ(one.tukey_high, 5.0);
  const Outliers two = find_outliers(std::vector<double>{1.0, 3.0});
  EXPECT_DOUBLE_EQ(two.tukey_low, 0.0);
  EXPECT_DOUBLE_EQ(two.tukey_high, 4.0);
}

TEST(StatsDistOutliers, ValueOnAFenceIsNotFlagged) {
  // Q1 = 1, Q3 = 2, fences -0.5 and 3.5 (reference script, "on_fence"): 3.5 sits on the upper fence.
  const std::vector<double> v = {1.0, 1.0, 1.0, 2.0, 2.0, 3.5, 1.5, 1.5, 2.0};
  const Outliers o = find_outliers(v);
  EXPECT_DOUBLE_EQ(o.tukey_high, 3.5);
  EXPECT_THAT(o.tukey, IsEmpty());
}

TEST(StatsDistOutliers, EmptyOrNanThrows) {
  EXPECT_THROW(find_outliers(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(find_outliers(std::vector<double>{1.0, std::numeric_limits<double>::quiet_NaN()}),
               std::invalid_argument);
}
