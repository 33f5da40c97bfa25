#pragma once
// Fisher's exact test on the 2x2 table [[a, b], [c, d]], computed as scipy.stats.fisher_exact
// (SciPy 1.10) computes it, so the figures in abvm's reports can be checked against SciPy.
//
// With the margins fixed, the top-left cell x follows the hypergeometric distribution
// (population a+b+c+d, a+b successes, a+c draws).
//   p_less       P(X <= a)
//   p_greater    P(X >= a)
//   p_two_sided  sum of P(X = x) over every x with P(X = x) <= P(X = a) * (1 + 1e-14), capped at 1: SciPy's
//                rule and relative tolerance. Probabilities come from log-factorials (std::lgamma), with
//                log C(n, k) computed symmetrically in k and n - k, so the outcomes that tie with the
//                observed one by symmetry of the margins get bit-identical probabilities and are
//                counted; they are normalised by their own sum, so a table at the mode gets exactly 1.
//   odds_ratio   the sample odds ratio a d / (b c) as SciPy reports it: +inf when b c == 0.
// A table with an empty row or column carries no information: SciPy returns odds ratio NaN and
// p = 1, and so does this function (for all three alternatives).
// Each count must be at most 2^52, so that sums stay exact in doubles (std::invalid_argument otherwise).
// Cost: O(min(a+b, a+c)) terms, each from a few lgamma calls: fine for millions of runs.
#include <cstdint>

namespace abvm::stats {

struct FisherResult {
  double odds_ratio = 0;
  double p_two_sided = 1, p_greater = 1, p_less = 1;
};

FisherResult fisher_exact(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d);

}  // namespace abvm::stats
