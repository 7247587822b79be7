// Hartigan's dip test of unimodality: do the samples look like draws from
// one mode, or does the machine flip between two speeds?
//
// The dip (Hartigan & Hartigan 1985, "The dip test of unimodality", Ann.
// Statist. 13(1):70-84) is the largest distance between the empirical
// distribution function and the unimodal distribution closest to it. It is
// computed with Hartigan's algorithm (P. M. Hartigan 1985, Algorithm AS 217,
// Appl. Statist. 34(3):320-325) with the corrections that R's diptest
// package (Maechler, >= 0.75) carries; tests/test_stats.cpp pins it to
// diptest::dip(x) to 1e-9.
//
// Why the dip and not Sarle's bimodality coefficient for 5..100 benchmark
// samples: timing samples are right-skewed and have the odd slow run. The
// coefficient (b = (g1^2 + 1) / (g2 + 3 (n-1)^2 / ((n-2)(n-3))), cut-off 5/9)
// calls every sample with one far outlier bimodal, and 60-80% of
// exponential-tailed ones at n = 20..50 (simulated with scipy, 4000 draws
// each; Pfister et al. 2013, Front. Psychol. 4:700, report the same
// sensitivity to skew). The dip is robust to both: its null is the uniform
// distribution, the least favourable unimodal one, so on normal, log-normal,
// t(3) and one-outlier samples it rejects at p < 0.05 in at most 3% of draws
// at n = 5 and 1.3% at n >= 10, yet it finds an 8 ms / 14 ms mixture in
// 47% of draws at n = 10, 81% at n = 20 and 99.7% at n = 50 (R 4.2 diptest
// 0.76, 2000 draws each).
//
// Significance follows diptest::dip.test without simulation: the p-value is
// read from Maechler's table qDiptab of dip quantiles under the uniform null
// (simulated, n = 4..72000), interpolating sqrt(n) * dip linearly in n
// between the table's sample sizes. Only the 95% quantile column is kept
// here: dip_critical_value(n) is the dip at which dip.test's p-value is 0.05,
// and a sample is bimodal at level 0.05 exactly when dip.test's p-value is
// below 0.05 (to the rounding of the table interpolation).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace perfgate::stats {

// The dip test's significance level in this module: the 95% column of qDiptab.
inline constexpr double dip_level = 0.05;

// The smallest sample the table covers; dip.test answers p = 1 below it.
inline constexpr std::size_t dip_min_n = 4;

// The dip statistic of x, in any order, as diptest::dip(x) returns it (with
// min.is.0 = FALSE): in [1 / (2n), 1/4]; 1 / (2n) when all values are equal.
// Requires x non-empty and finite (PERFGATE_CHECK). Values whose range
// overflows a double are halved first: the dip is invariant under scaling,
// and halving is exact. O(n log n) to sort, then O(n) per pass of the
// algorithm (a few passes).
double dip_statistic(std::span<const double> x);

// The dip above which dip.test's p-value is below dip_level for a sample of
// n: the 95% quantile of qDiptab interpolated as dip.test does it, divided
// by sqrt(n). nullopt for n < dip_min_n. Above the table's largest n (72000)
// it is the asymptotic value sqrt(72000) * q(72000) / sqrt(n), as dip.test
// uses it.
std::optional<double> dip_critical_value(std::size_t n);

struct dip_result {
    double dip = 0;       // dip_statistic(x)
    double critical = 0;  // dip_critical_value(x.size())
    bool bimodal = false; // dip.test p-value < dip_level: unimodality rejected
};

// The dip and its verdict at dip_level; nullopt for fewer than dip_min_n
// values. Requirements as dip_statistic.
std::optional<dip_result> dip_test(std::span<const double> x);

} // namespace perfgate::stats
