// Kendall's rank correlation of a series with its order: does the value
// drift with the round it was measured in?
//
// kendall_trend(v) is scipy.stats.kendalltau(numpy.arange(n), v) (scipy
// 1.10, variant "b", method "auto", two-sided): tau-b of the values against
// their positions 0..n-1, and its p-value. The positions have no ties, so
// tau-b = (C - D) / sqrt(n(n-1)/2 * (n(n-1)/2 - T)) with C concordant and D
// discordant pairs and T the pairs of tied values (Kendall 1945, Biometrika
// 33(3):239-251). The p-value is
//  - exact when no value is tied and n <= 33, or when C or D is at most 1:
//    the null distribution of C over all n! orders by Kendall's recurrence
//    (Kendall, Rank Correlation Methods, 4th ed., 1970, ch. 4), computed in
//    doubles in the same order as scipy's _kendall_p_exact, so that the
//    rounding agrees;
//  - otherwise the normal approximation of C - D with the tie-corrected
//    variance (n(n-1)(2n+5) - sum t(t-1)(2t+5)) / 18 over the groups of t
//    tied values, without continuity correction, as scipy computes it.
// This is Mann's (1945, Econometrica 13(3):245-259) trend test in scipy's
// form. tests/test_stats.cpp pins both to scipy to 1e-9.
#pragma once

#include <optional>
#include <span>

namespace perfgate::stats {

struct kendall_result {
    double tau = 0;     // tau-b in [-1, 1]; > 0: the values rise with the order
    double p_value = 1; // two-sided, H0: every order of the values is equally likely
    bool exact = false; // the exact null distribution was used
};

// Kendall's tau-b of v against 0, 1, ..., n-1 and its two-sided p-value.
// nullopt when n < 2 or all values are equal (scipy: nan). Requires no NaN
// (PERFGATE_CHECK). O(n log n): discordant pairs are counted by merge sort,
// and the exact distribution (n <= 33) takes O(n * C) with C <= 264.
std::optional<kendall_result> kendall_trend(std::span<const double> v);

} // namespace perfgate::stats
