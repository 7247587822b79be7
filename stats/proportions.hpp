// Intervals for a proportion and for the difference of two, for perf
// attribution (issue 12): did a function's share of the profile's samples
// change between baseline and candidate by more than sampling noise?
// stats/ATTRIBUTION.md says why these intervals, and how the samples' run-to-
// run variation (overdispersion) and the number of functions compared enter.
//
// Counts and sizes are real numbers so that an effective sample size
// (n / dispersion) can be used.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace perfgate::stats {

struct proportion_interval {
    double lo = 0, hi = 0;
};

// Wilson's (1927) score interval for x successes in n trials at critical
// value z (1.96 for 95%). Requires 0 <= x <= n, n > 0, z >= 0
// ("stats.bad_input").
proportion_interval wilson_interval(double x, double n, double z);

// Newcombe's (1998) hybrid score interval ("method 10") for p2 - p1, with
// p1 = x1/n1 and p2 = x2/n2 independent: from the two Wilson intervals
// [l1, u1], [l2, u2],
//   lo = (p2 - p1) - sqrt((p2 - l2)^2 + (u1 - p1)^2)
//   hi = (p2 - p1) + sqrt((u2 - p2)^2 + (p1 - l1)^2).
// Defined at x = 0 and x = n (where the Wald interval collapses to a point).
proportion_interval newcombe_difference(double x1, double n1, double x2, double n2, double z);

// One execution's count of the function and the execution's total samples.
struct execution_count {
    double x = 0, n = 0;
};

// Pearson's dispersion of one function's counts over the executions of each
// side: the sum over sides of X^2 = sum_i (x_i - n_i p)^2 / (n_i p (1 - p)),
// with p the side's pooled share, divided by the sum of the sides' degrees
// of freedom (executions - 1, counted for sides with 0 < p < 1). 1 for
// binomial counts on average; above 1 when the share varies between
// executions more than sampling explains. Returns max(1, X^2 / df); 1 when
// df == 0 (one execution per side: no estimate; binomial assumed).
double pearson_dispersion(const std::vector<std::vector<execution_count>>& sides);

} // namespace perfgate::stats
