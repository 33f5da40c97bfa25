#pragma once
// Holm-Bonferroni step-down adjustment: with several metrics in one comparison, reject metric i
// when its adjusted p-value is below alpha and the family-wise error stays at most alpha.
#include <span>
#include <vector>

namespace abvm::stats {

// Adjusted p-values in the input order: with p sorted ascending, p'_(i) = max over j <= i of
// min(1, (m - j) p_(j)) (0-based j, m = count) -- monotone in p and capped at 1. Equal p-values get
// equal adjusted values. Empty in, empty out. Throws std::invalid_argument for NaN or a value
// outside [0, 1].
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace abvm::stats
