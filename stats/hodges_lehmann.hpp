// Hodges-Lehmann shift estimate and its distribution-free confidence interval.
//
// estimate = median of all m*n pairwise differences c_j - b_i (candidate minus
// baseline). The (1 - alpha) interval is [d_(k), d_(mn+1-k)] of the sorted
// differences with k from the exact U distribution (qwilcox(alpha/2, m, n)),
// or its normal approximation when the test is asymptotic; this is what R's
// wilcox.test(c, b, conf.int = TRUE, exact = ...) reports (Bauer 1972;
// Hollander & Wolfe, Nonparametric Statistical Methods, 3rd ed., 4.3).
//
// Memory: the differences are not materialised; order statistics are selected
// in O((m+n) log(range)) time per quantile with O(m+n) memory (Monahan 1984 /
// Johnson-Mizoguchi style selection in the sorted X+Y matrix), so m = n =
// 10,000 needs only a few hundred KB.
#pragma once

#include <span>

namespace perfgate::stats {

struct shift_estimate {
    double estimate = 0;
    double lower = 0;
    double upper = 0;
};

// Requires both samples non-empty. exact selects the exact U quantiles (use
// the same choice as mann_whitney_u()).
shift_estimate hodges_lehmann(std::span<const double> b, std::span<const double> c,
                              double alpha, bool exact);

} // namespace perfgate::stats
