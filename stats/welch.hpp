// Welch's unequal-variance t-test from summary statistics (for perf -r N
// aggregates, which keep no per-run values).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

namespace perfgate::stats {

struct welch_result {
    double t = 0;
    double df = 0;      // Welch-Satterthwaite degrees of freedom
    double p_value = 1; // two-sided
    double se = 0;      // standard error of mean2 - mean1
};

// Group 1 is the baseline; t = (mean2 - mean1) / se. nullopt when n < 2 on a
// side or both standard deviations are 0. Matches
// scipy.stats.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=False)
// (scipy's t has the opposite sign convention: mean1 - mean2).
std::optional<welch_result> welch_t_test(double mean1, double sd1, std::size_t n1, double mean2, double sd2,
                                         std::size_t n2);

// The two-sided (1 - alpha) confidence interval of mean2 - mean1 from a
// test's se and df: shift -/+ qt(1 - alpha/2, df) * se (Welch 1947; scipy's
// ttest_ind(...).confidence_interval for equal_var=False). Throws
// perfgate::error "stats.bad_probability" for alpha outside (0, 1).
std::pair<double, double> welch_interval(const welch_result& r, double shift, double alpha);

} // namespace perfgate::stats
