#include "stats/ranks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace abvm::stats;

TEST(StatsRankRanks, MidranksAverageTiedPositionsAndKeepInputOrder) {
  // scipy.stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]) =
  // [4.5, 1.5, 6, 1.5, 8, 11, 3, 10, 8, 4.5, 8]
  const std::vector<double> v = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
  const Ranking r = midranks(v);
  EXPECT_EQ(r.ranks, (std::vector<double>{4.5, 1.5, 6, 1.5, 8, 11, 3, 10, 8, 4.5, 8}));
  EXPECT_EQ(r.tie_sizes, (std::vector<std::size_t>{2, 2, 3}));  // 1s, 3s, 5s in ascending value order
  EXPECT_DOUBLE_EQ(tie_term(r.tie_sizes), 6 + 6 + 24);
}

TEST(StatsRankRanks, AllTiedIsOneGroupAtTheMiddleRank) {
  const std::vector<double> v(7, 2.5);
  const Ranking r = midranks(v);
  EXPECT_EQ(r.ranks, std::vector<double>(7, 4.0));
  EXPECT_EQ(r.tie_sizes, (std::vector<std::size_t>{7}));
}

TEST(StatsRankRanks, SingleAndEmptyInputs) {
  const std::vector<double> one = {42};
  EXPECT_EQ(midranks(one).ranks, (std::vector<double>{1}));
  EXPECT_TRUE(midranks(one).tie_sizes.empty());
  EXPECT_TRUE(midranks(std::vector<double>{}).ranks.empty());
}

TEST(StatsRankRanks, InfinitiesRankAndNanIsRejected) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {inf, 0, -inf};
  EXPECT_EQ(midranks(v).ranks, (std::vector<double>{3, 2, 1}));
  const std::vector<double> bad = {1, std::nan(""), 2};
  EXPECT_THROW(midranks(bad), std::invalid_argument);
}

TEST(StatsRankRanks, TieSizesOfSorted) {
  const std::vector<double> v = {1, 1, 2, 3, 3, 3, 4};
  EXPECT_EQ(tie_sizes_of_sorted(v), (std::vector<std::size_t>{2, 3}));
  EXPECT_TRUE(tie_sizes_of_sorted(std::vector<double>{1, 2, 3}).empty());
}

TEST(StatsRankRanks, NormalTailAndQuantileMatchScipy) {
  // scipy.stats.norm.sf(1.96) = 0.024997895148220435; norm.sf(-1) = 0.8413447460685429;
  // norm.sf(8) = 6.22096057427174e-16 (the far tail keeps its relative precision);
  // norm.isf(0.025) = 1.9599639845400545; norm.isf(0.05) = 1.6448536269514729.
  EXPECT_NEAR(normal_sf(1.96), 0.024997895148220435, 1e-15);
  EXPECT_NEAR(normal_sf(-1), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(normal_sf(8) / 6.22096057427174e-16, 1.0, 1e-12);
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.9599639845400545, 1e-13);
  EXPECT_NEAR(normal_upper_quantile(0.05), 1.6448536269514729, 1e-13);
  EXPECT_THROW(normal_upper_quantile(0), std::invalid_argument);
  EXPECT_THROW(normal_upper_quantile(1), std::invalid_argument);
}
