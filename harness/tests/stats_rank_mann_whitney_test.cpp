#include "stats/mann_whitney.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace abvm::stats;

namespace {

bool relatively_equal(double actual, double expected, double tolerance) {
  return std::fabs(actual - expected) <= tolerance * std::max(1e-300, std::fabs(expected));
}

// Reference values pasted from the script below (it says how it was run and with which SciPy):
// Produced by: /usr/bin/python3 harness/tests/reference/rank_reference.py
// SciPy 1.10.1, NumPy 1.24.2
// Datasets: "seed" is the motivating dd data on the log scale; "tied" has ties within and between
// the samples; "medium" (60 x 45) and "boundary" (25 x 100 = kMannWhitneyExactMaxProduct) sit on
// either side of the exact/normal size rule; "cross_tie_only" has one value shared by x and y.
const std::vector<double> k_seed_x = {22.203175247433951, 22.155158997074246, 22.240916362124583, 22.259217414416661, 21.192686464326282, 22.221271389674374, 20.949365999796207, 22.319690275700783, 21.030614129592806, 21.969408065230663};
const std::vector<double> k_seed_y = {22.058523119125017, 22.272616755191098, 22.211911529061513, 22.267330322202024, 20.858688639797261, 22.04643241359981, 21.124730149815001, 22.184973856191938, 21.13752739781642, 21.795593646327823};
const std::vector<double> k_small_x = {0.12, -0.34999999999999998, 0.88, 0.40999999999999998, 1.0700000000000001};
const std::vector<double> k_small_y = {0.94999999999999996, 1.3100000000000001, 0.52000000000000002, 1.6599999999999999, 1.1200000000000001, 0.77000000000000002, 1.49};
const std::vector<double> k_tied_x = {3, 5, 5, 7, 8, 8, 8, 10};
const std::vector<double> k_tied_y = {6, 8, 9, 9, 11, 12, 12, 14, 15};
const std::vector<double> k_medium_x = {8.2746569999999995, 8.2378719999999994, 8.317952, 8.0852120000000003, 8.3341340000000006, 8.2613970000000005, 8.2128739999999993, 8.3118239999999997, 8.065823, 8.2809899999999992, 8.2122460000000004, 8.3491630000000008, 8.3530929999999994, 8.1886559999999999, 8.1880199999999999, 8.1235959999999992, 8.2054770000000001, 8.3383299999999991, 8.4028720000000003, 8.3274559999999997, 8.304176, 8.1959060000000008, 8.3234919999999999, 8.2021169999999994, 8.3287549999999992, 8.2756889999999999, 8.4027220000000007, 8.3242960000000004, 8.4642590000000002, 8.2510139999999996, 8.3907129999999999, 8.3270189999999999, 8.5035869999999996, 8.0645539999999993, 8.4049110000000002, 8.1771619999999992, 8.1957620000000002, 8.2977959999999999, 8.1187330000000006, 8.1566500000000008, 8.2393350000000005, 8.2613020000000006, 8.0715590000000006, 8.1951640000000001, 8.2824899999999992, 8.2841690000000003, 8.220523, 8.2995090000000005, 8.2383950000000006, 8.4408200000000004, 8.2029040000000002, 8.3070920000000008, 8.2412489999999998, 8.4025470000000002, 8.1834140000000009, 8.4051919999999996, 8.1565639999999995, 8.1359600000000007, 8.2341840000000008, 8.3110549999999996};
const std::vector<double> k_medium_y = {8.021846, 8.174372, 8.2494040000000002, 8.2446660000000005, 8.381335, 8.3676410000000008, 8.299925, 8.3870149999999999, 8.3909590000000005, 8.0836260000000006, 8.5777889999999992, 8.242661, 8.1591090000000008, 8.3400219999999994, 8.1767129999999995, 8.3440740000000009, 8.0697899999999994, 8.3588039999999992, 8.0604189999999996, 8.3063599999999997, 8.2180160000000004, 8.1747779999999999, 8.2729610000000005, 8.1637039999999992, 8.1342090000000002, 8.3092360000000003, 8.5396809999999999, 8.1003360000000004, 8.4232750000000003, 8.4122339999999998, 8.0819880000000008, 8.2785349999999998, 8.3286060000000006, 8.113372, 8.4118829999999996, 8.3816860000000002, 8.504766, 8.3084749999999996, 8.3919049999999995, 8.5218170000000004, 8.2804490000000008, 8.1749670000000005, 8.0323630000000001, 8.2929680000000001, 8.0599179999999997};
const std::vector<double> k_boundary_x = {1.0976934, 0.14716509999999999, 0.81105729999999998, 0.16271350000000001, 1.2383314000000001, -0.4563547, 0.0500677, 1.400115, -1.258311, 0.19252720000000001, 0.97525740000000005, -1.0635334000000001, -0.69971899999999998, -1.249911, 1.1807559000000001, -0.18937950000000001, -0.31515270000000001, -1.4125441000000001, -1.0637881, 0.92653240000000003, -0.1894663, -0.40088649999999998, 0.79189779999999999, -0.90587019999999996, 1.6133774999999999};
const std::vector<double> k_boundary_y = {0.031785500000000001, -0.11304309999999999, 0.13483490000000001, 0.4373416, 1.1011685, -0.29883569999999998, -0.4240273, 0.43815730000000003, 0.73894649999999995, 1.2772555000000001, -0.076753199999999994, 1.3670116999999999, -0.61989289999999997, 1.7857782, -0.69207189999999996, 0.31373580000000001, 0.59529430000000005, 1.4131684, 1.8601675, 0.44923109999999999, 2.2956444999999999, -0.41952539999999999, 0.7270858, 0.16309940000000001, 0.97242669999999998, -0.55185770000000001, -0.69783709999999999, 1.6831607, 1.4640304, 0.96111820000000003, -0.30221290000000001, 0.99207089999999998, 0.84715759999999996, 1.6334630000000001, 0.63291629999999999, -1.2145191, 0.18373999999999999, 0.37255490000000002, 1.1922051, 0.15222720000000001, -0.65821700000000005, 1.5503918999999999, 0.78559889999999999, -0.69742389999999999, -0.26383899999999999, 1.3191455999999999, -0.94936759999999998, 1.3679760000000001, 0.42287200000000003, 0.24778059999999999, 1.2660861999999999, -0.0241567, 0.45577980000000001, 2.0350017, -0.4448703, 2.2216851000000002, -1.2861164, -0.45644760000000001, 1.3009173000000001, -0.26284370000000001, 0.081664799999999996, 1.1895819000000001, 1.3578053999999999, 0.89003259999999995, -0.14133860000000001, 1.0282667999999999, 0.55386469999999999, 1.5791814, 0.78987010000000002, -0.39592860000000002, 0.27461140000000001, -1.1523211, 1.0292646999999999, 0.84703819999999996, 0.41876989999999997, -0.94558089999999995, 0.011069300000000001, 1.0822023999999999, 0.2156969, 0.52010389999999995, 1.5451759, 1.0334814000000001, -1.198744, 0.76664370000000004, -0.53586100000000003, -1.8248987999999999, 1.5599733, -1.0855980000000001, 0.084460099999999996, 1.6489708999999999, 1.1030184999999999, 0.33795059999999999, -0.48786200000000002, 0.69612260000000004, 0.33172950000000001, 1.2214052, 0.7882477, 1.129121, -1.1036159999999999, -0.45906360000000002};
const std::vector<double> k_tiny_x = {1.5, 2.5};
const std::vector<double> k_tiny_y = {2, 4};
const std::vector<double> k_single_x = {1};
const std::vector<double> k_single_y = {3.5};
const std::vector<double> k_cross_tie_only_x = {1, 2, 3, 4};
const std::vector<double> k_cross_tie_only_y = {3, 5, 6, 7.5, 9};

struct MwCase {
  const char* name;
  std::vector<double> x, y;
  double u, p;
  bool exact;
};

// ---- Mann-Whitney: {name, x, y, u, p, exact} from scipy.stats.mannwhitneyu(x, y, method=<abvm's>) ----
const MwCase kCases[] = {
    {"seed", k_seed_x, k_seed_y, 56, 0.6842105263157896, true},  // asymptotic would give p = 0.67758495795247553
    {"small", k_small_x, k_small_y, 5, 0.047979797979797983, true},  // asymptotic would give p = 0.051319903588071161
    {"tied", k_tied_x, k_tied_y, 9.5, 0.01166825909990862, false},
    {"medium", k_medium_x, k_medium_y, 1326, 0.87905433890085061, false},
    {"boundary", k_boundary_x, k_boundary_y, 966, 0.080113939874112472, true},  // asymptotic would give p = 0.080152832668020424
    {"tiny", k_tiny_x, k_tiny_y, 1, 0.66666666666666663, true},  // asymptotic would give p = 0.69853535830333868
    {"single", k_single_x, k_single_y, 0, 1, true},  // asymptotic would give p = 1
    {"cross_tie_only", k_cross_tie_only_x, k_cross_tie_only_y, 1.5, 0.049090116322607569, false},
};

}  // namespace

TEST(StatsRankMannWhitney, MatchesScipyOnReferenceData) {
  for (const MwCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const MannWhitney r = mann_whitney(c.x, c.y);
    EXPECT_EQ(r.u, c.u);
    EXPECT_EQ(r.exact, c.exact);
    // Exact p: both sides sum the same rational table. Normal: erfc here, ndtr in SciPy.
    EXPECT_TRUE(relatively_equal(r.p, c.p, c.exact ? 1e-12 : 1e-10)) << r.p << " vs " << c.p;
  }
}

TEST(StatsRankMannWhitney, SwappingSamplesMirrorsUAndKeepsP) {
  for (const MwCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const MannWhitney ab = mann_whitney(c.x, c.y);
    const MannWhitney ba = mann_whitney(c.y, c.x);
    EXPECT_EQ(ba.u, static_cast<double>(c.x.size() * c.y.size()) - ab.u);
    EXPECT_TRUE(relatively_equal(ba.p, ab.p, 1e-12));
  }
}

TEST(StatsRankMannWhitney, SizeRuleSwitchesToTheNormalApproximation) {
  // 41 x 61 = 2501 distinct values: one past kMannWhitneyExactMaxProduct.
  std::vector<double> x(41), y(61);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(2 * i);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(2 * i + 1);
  EXPECT_FALSE(mann_whitney(x, y).exact);
  x.pop_back();  // 40 x 61 = 2440
  EXPECT_TRUE(mann_whitney(x, y).exact);
}

TEST(StatsRankMannWhitney, AllValuesTiedGivesNoEvidence) {
  const std::vector<double> x(6, 3.25), y(4, 3.25);
  const MannWhitney r = mann_whitney(x, y);
  EXPECT_EQ(r.u, 12);  // every pair counts one half
  EXPECT_EQ(r.p, 1);
  EXPECT_FALSE(r.exact);
}

TEST(StatsRankMannWhitney, CompleteSeparationOfSmallSamplesIsExact) {
  // All of x below all of y: U = 0 and P(U <= 0) = 1 / C(8, 4) = 1/70 per tail.
  const std::vector<double> x = {1, 2, 3, 4}, y = {5, 6, 7, 8};
  const MannWhitney r = mann_whitney(x, y);
  EXPECT_EQ(r.u, 0);
  EXPECT_TRUE(r.exact);
  EXPECT_TRUE(relatively_equal(r.p, 2.0 / 70.0, 1e-14));
}

// The ceiling on any two-sided Mann-Whitney confidence, 1 - 2/C(n+m, n), and with it the smallest
// p-value. Issue 11 item 4: with every value repeated inside its side, the exact permutation p of
// the observed (most extreme) outcome is exactly that bound, while the tie-corrected normal
// approximation claimed 0.047 (3 vs 3) and 0.0044 (1 vs 10). References:
//   /usr/bin/python3 -c "import numpy as np; from scipy import stats; print(stats.permutation_test(([900.]*3,
//     [1000.]*3), lambda x, y, axis: stats.mannwhitneyu(x, y, axis=axis).statistic,
//     permutation_type='independent', n_resamples=np.inf).pvalue)"            -> 0.1
//   1 vs 10 (SciPy's permutation_test needs 2 values per sample): enumerating the 11 arrangements
//     with stats.mannwhitneyu(...).statistic as above gives p = 2/11 = 0.1818.
//   R 4.x: wilcox.test(b, a) has only the normal approximation with ties (p 0.037 for 3 vs 3), and
//     wilcox.test(b, a, conf.int = TRUE) stops with "missing value where TRUE/FALSE needed" on both.
TEST(StatsRankMannWhitney, MaxConfidenceIsOneMinusTwoOverTheArrangements) {
  EXPECT_DOUBLE_EQ(mann_whitney_max_confidence(3, 3), 0.9);
  EXPECT_DOUBLE_EQ(mann_whitney_max_confidence(1, 10), 1 - 2.0 / 11);
  EXPECT_DOUBLE_EQ(mann_whitney_max_confidence(10, 1), 1 - 2.0 / 11);
  EXPECT_DOUBLE_EQ(mann_whitney_max_confidence(4, 4), 1 - 2.0 / 70);
  EXPECT_EQ(mann_whitney_max_confidence(1, 1), 0);
  EXPECT_EQ(mann_whitney_max_confidence(1000, 1000), 1);
  for (std::size_t n = 1; n <= 8; ++n) {
    for (std::size_t m = 1; m <= 8; ++m) {
      EXPECT_NEAR(mann_whitney_max_confidence(n, m), std::max(0.0, 1 - 2 * mann_whitney_null_cdf(n, m)[0]), 1e-12);
    }
  }
}

TEST(StatsRankMannWhitney, TiedTinySamplesGetNoSmallerPThanThePermutationsAllow) {
  const MannWhitney three = mann_whitney(std::vector<double>(3, 1000), std::vector<double>(3, 900));
  EXPECT_FALSE(three.exact);
  EXPECT_NEAR(three.p, 0.1, 1e-12);
  const MannWhitney one = mann_whitney(std::vector<double>{1000}, std::vector<double>(10, 900));
  EXPECT_NEAR(one.p, 2.0 / 11, 1e-12);
}

TEST(StatsRankMannWhitney, RejectsEmptyAndNan) {
  const std::vector<double> ok = {1, 2}, empty;
  const std::vector<double> nan = {1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(mann_whitney(empty, ok), std::invalid_argument);
  EXPECT_THROW(mann_whitney(ok, empty), std::invalid_argument);
  EXPECT_THROW(mann_whitney(ok, nan), std::invalid_argument);
  EXPECT_THROW(mann_whitney(nan, ok), std::invalid_argument);
}

TEST(StatsRankMannWhitney, NullDistributionMatchesEnumerationOfAllOrderings) {
  // Brute force: every choice of which n of the n+m ranks belong to x, via next_permutation.
  for (auto [n, m] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 5}, {3, 4}, {5, 3}, {6, 6}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    std::vector<int> is_x(n + m, 0);
    std::fill(is_x.begin() + static_cast<std::ptrdiff_t>(m), is_x.end(), 1);
    std::vector<double> counts(n * m + 1, 0);
    double total = 0;
    do {
      std::size_t u = 0, ys_below = 0;
      for (int v : is_x) {
        if (v) u += ys_below; else ++ys_below;
      }
      counts[u] += 1;
      total += 1;
    } while (std::next_permutation(is_x.begin(), is_x.end()));
    const std::vector<double> cdf = mann_whitney_null_cdf(n, m);
    ASSERT_EQ(cdf.size(), counts.size());
    double running = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      running += counts[u];
      EXPECT_NEAR(cdf[u], running / total, 1e-15) << "u = " << u;
    }
  }
  EXPECT_THROW(mann_whitney_null_cdf(0, 3), std::invalid_argument);
}

TEST(StatsRankMannWhitney, NullDistributionLowerTailKeepsRelativePrecision) {
  // P(U = 0) = 1 / C(100, 50) = 9.911653021418339e-30 (math.comb in Python): far below 1e-16,
  // still exact relative to itself.
  const std::vector<double> cdf = mann_whitney_null_cdf(50, 50);
  EXPECT_TRUE(relatively_equal(cdf[0], 9.911653021418339e-30, 1e-12)) << cdf[0];
  EXPECT_EQ(cdf.back(), 1.0);
}
