#pragma once
// Fisher's exact test on the 2x2 table [[a, b], [c, d]], computed as scipy.stats.fisher_exact
// (SciPy 1.10) computes it, so the figures in abvm's reports can be checked against SciPy.
//
// With the margins fixed, the top-left cell x follows the hypergeometric distribution
// (population a+b+c+d, a+b successes, a+c draws).
//   p_less       P(X <= a)
//   p_greater    P(X >= a)
//   p_two_sided  sum of P(X = x) over every x with P(X = x) <= P(X = a) * (1 + tolerance), capped at 1.
//                SciPy uses a relative tolerance of 1e-14 on probabilities it gets from Boost; here they
//                come from log-factorials (std::lgamma), whose rounding on large tables exceeds 1e-14,
//                so tables whose probabilities are equal in exact arithmetic would be split apart. The
//                tolerance is therefore 1e-7 (R's fisher.test uses the same): it still separates every
//                pair of distinct probabilities of realistic tables, and keeps exact ties together.
//   odds_ratio   the sample odds ratio a d / (b c) as SciPy reports it: +inf when b c == 0.
// A table with an empty row or column carries no information: SciPy returns odds ratio NaN and
// p = 1, and so does this function (for all three alternatives).
// Counts are 64-bit; the sums must not overflow (throws std::invalid_argument when they would).
// Cost: O(min(a+b, a+c)) terms, each from a few lgamma calls: fine for millions of runs.
#include <cstdint>

namespace abvm::stats {

struct FisherResult {
  double odds_ratio = 0;
  double p_two_sided = 1, p_greater = 1, p_less = 1;
};

FisherResult fisher_exact(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d);

}  // namespace abvm::stats
