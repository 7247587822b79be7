// Multiple-testing adjustment of p-values, as R's p.adjust().
#pragma once

#include <span>
#include <vector>

namespace perfgate::stats {

enum class correction { holm, bh, none };

// Holm (1979) step-down: R p.adjust(p, "holm").
std::vector<double> holm(std::span<const double> p);
// Benjamini-Hochberg (1995): R p.adjust(p, "BH").
std::vector<double> benjamini_hochberg(std::span<const double> p);
// Dispatch on the method; none returns p unchanged.
std::vector<double> adjust(std::span<const double> p, correction method);

} // namespace perfgate::stats
