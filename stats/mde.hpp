// Minimum detectable effect: the smallest shift (as % of the baseline centre)
// that a two-sided rank test at level alpha would detect with the given power,
// for these sample sizes and this noise.
#pragma once

#include <cstddef>
#include <optional>

namespace perfgate::stats {

// Power used by the gate's "could we have seen it" rule.
inline constexpr double default_power = 0.80;

// sd_b, sd_c: sample standard deviations; centre: |baseline median| (> 0).
// Normal-approximation power formula for a two-sample location test,
//   mde = (z_{1-alpha/2} + z_{power}) * sqrt(sd_b^2/n_b + sd_c^2/n_c) * sqrt(pi/3)
// where sqrt(pi/3) converts from the t-test to Mann-Whitney via its asymptotic
// relative efficiency 3/pi under normality (Lehmann, Nonparametrics, 2.4).
// Returns +infinity when the exact test cannot reach alpha at all at these
// sizes (min attainable p = 2 / C(n_b+n_c, n_b) > alpha), and nullopt when
// n < 2 on a side or centre == 0.
std::optional<double> minimum_detectable_effect_pct(double sd_b, std::size_t n_b, double sd_c, std::size_t n_c,
                                                    double centre, double alpha, double power = default_power);

// The inverse of minimum_detectable_effect_pct in the sample size: the
// smallest n, the same on both sides, with
//   minimum_detectable_effect_pct(sd_b, n, sd_c, n, centre, alpha, power) <= target_pct,
// searched in [2, max_n] (the formula falls monotonically in n, so by
// bisection: the answer agrees with the formula exactly, not with a closed
// form rounded differently). nullopt when no n <= max_n reaches target_pct
// or centre == 0 (a target of 0 is reached only without noise). Requires
// target_pct >= 0, finite inputs (PERFGATE_CHECK)
// and alpha, power in (0, 1) ("stats.bad_probability").
std::optional<std::size_t> repetitions_for_mde(double sd_b, double sd_c, double centre, double target_pct, double alpha,
                                               std::size_t max_n, double power = default_power);

// Standard normal quantile and cdf helpers (used across stats/).
double normal_quantile(double p);
double normal_cdf(double x);
double normal_sf(double x);

} // namespace perfgate::stats
