// Hodges-Lehmann shift estimate and its distribution-free confidence interval.
//
// estimate = median of all m*n pairwise differences c_j - b_i (candidate minus
// baseline), the mean of the two middle ones for even m*n. The (1 - alpha)
// interval is [d_(k), d_(mn+1-k)] of the sorted differences (Bauer 1972;
// Hollander & Wolfe, Nonparametric Statistical Methods, 3rd ed., 4.3):
//
//  - exact = true: k = qwilcox(alpha/2, n_c, n_b), and 1 if that is 0. This is
//    exactly R's wilcox.test(c, b, conf.int = TRUE, exact = TRUE,
//    conf.level = 1 - alpha)$conf.int and $estimate.
//  - exact = false: k = floor(mn/2 + 1/2 - z_{1-alpha/2} * sigma), clamped to
//    [1, mn], sigma^2 = mn/12 * ((N+1) - sum(t^3-t)/(N(N-1))) with t the sizes
//    of tie groups *within* b and within c. This is the difference at which
//    R's wilcox.test(c, b, conf.int = TRUE, exact = FALSE, correct = TRUE)
//    converges: R finds each bound with uniroot(tol = 1e-4) on the
//    continuity-corrected z statistic, a step function that jumps exactly at
//    d_(k), so R prints d_(k) to within 1e-4. R's asymptotic $estimate is a
//    root of the same function at z = 0, which lies in the median interval;
//    perfgate reports the median itself in both modes.
//
// Memory and time: up to m*n = 4096 the differences are materialised once
// (32 KB) and the three or four order statistics are selected from that
// array by nested nth_element calls. Above that they are never materialised:
// order statistics are selected (Monahan 1984) in expected O((m+n) log(mn)) time with O(m+n)
// memory: at most max(4*(m+n), 4096) candidate differences are ever copied.
// m = n = 10,000 needs about 1 MB (sorted copies, four per-row index arrays
// and at most 80,000 copied candidates; bench_stats peaks 1.2 MB above idle).
#pragma once

#include <span>

namespace perfgate::stats {

struct shift_estimate {
    double estimate = 0;
    double lower = 0;
    double upper = 0;
    // The interval has at least its nominal level 1 - alpha: false when k
    // had to be raised to 1 (exact: qwilcox(alpha/2) = 0; asymptotic: the
    // formula's k < 1), so that [d_(1), d_(mn)] covers less than 1 - alpha.
    // Too few samples for this alpha; R reports the same interval with an
    // "achieved" level below the requested one.
    bool attained = true;
};

// Requires both samples non-empty and finite (PERFGATE_CHECK). exact selects
// the exact U quantiles (use the same choice as mann_whitney_u(); it is only
// affordable for small samples, see exact_u_max_work). Throws perfgate::error
// "stats.bad_probability" when alpha is not in (0, 1), and
// "stats.exact_too_large" for exact = true on samples too large for the exact
// distribution. All-equal samples give estimate = lower = upper = 0.
shift_estimate hodges_lehmann(std::span<const double> b, std::span<const double> c, double alpha, bool exact);

} // namespace perfgate::stats
