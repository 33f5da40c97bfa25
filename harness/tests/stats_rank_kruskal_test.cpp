// Kruskal-Wallis against SciPy: the literals below are printed by
// `/usr/bin/python3 harness/tests/reference/rank_reference.py` (scipy.stats.kruskal), not by abvm.
#include "stats/kruskal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace abvm::stats {
namespace {

struct KruskalCase {
  std::string name;
  std::vector<std::vector<double>> groups;
  double h, p;
};

const std::vector<KruskalCase> kCases = {
    // ---- Kruskal-Wallis: {name, groups, h, p} from scipy.stats.kruskal ----
    {"disagree", {{0.01, 0.029999999999999999, -0.02, 0, 0.014999999999999999}, {0.050000000000000003, 0.070000000000000007, 0.040000000000000001, 0.059999999999999998}, {0.02, 0.02, -0.01, 0.029999999999999999, 0, 0.01}}, 8.4247601918465325, 0.014811074575261724},
    {"ties", {{1, 1, 2, 2, 3}, {1, 2, 2, 3, 3, 3}, {4, 4, 5}}, 7.6543798449612428, 0.021770707128406796},
    {"agree", {{0.10000000000000001, -0.20000000000000001, 0.29999999999999999}, {0.14999999999999999, -0.10000000000000001, 0.050000000000000003, 0.20000000000000001}}, 0, 1},
};

TEST(StatsKruskal, AgreesWithScipy) {
  for (const auto& c : kCases) {
    const KruskalResult r = kruskal_wallis(c.groups);
    EXPECT_NEAR(r.h, c.h, 1e-12 * std::max(1.0, c.h)) << c.name;
    EXPECT_NEAR(r.p, c.p, 1e-12) << c.name;
    EXPECT_EQ(r.df, static_cast<double>(c.groups.size() - 1)) << c.name;
  }
}

TEST(StatsKruskal, EdgeCases) {
  const std::vector<std::vector<double>> one = {{1, 2, 3}, {}};
  EXPECT_EQ(kruskal_wallis(one).p, 1.0) << "one non-empty group: nothing to compare";
  const std::vector<std::vector<double>> equal = {{2, 2}, {2, 2, 2}};
  EXPECT_EQ(kruskal_wallis(equal).p, 1.0);
  const std::vector<std::vector<double>> nan = {{1, std::numeric_limits<double>::quiet_NaN()}, {2}};
  EXPECT_THROW(kruskal_wallis(nan), std::invalid_argument);
}

}  // namespace
}  // namespace abvm::stats
