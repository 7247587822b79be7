// The between-run test: is the shift between two runs that were NOT measured
// interleaved larger than runs of unchanged code on this testbed differ from
// one another? (docs/statistics.md "Runs not measured interleaved".)
//
// The rule. A run's median is m = mu + s + e: s the session's effect (the
// machine's state that day: frequency, cache and memory placement, other
// load), the same for every execution of the run, and e the within-run
// error of the median. Interleaving puts both sides in one session, so s
// cancels and the rank test sees only e. Two runs measured apart differ by
// s_C - s_B as well, which no test on their samples can see: a between-run
// shift larger than the within-run spread reads as a confident change.
//
// The testbed's history of consecutive baseline runs measures it: the
// differences d_i = h_{i+1} - h_i of consecutive run medians are what two
// runs of (mostly) unchanged code differ by there. Their scale, robustly,
//   sd = MAD(d) / qnorm(0.75)   (scipy.stats.median_abs_deviation(d, scale="normal"))
// is the standard deviation of a difference of two run medians (session
// and within-run error together, at the history's repetitions). The
// observed shift D = median(C) - median(B) is tested against
//   se = sqrt(max(sd^2, v_B + v_C)),   v = (pi/2) * stddev^2 / n,
// v being the normal asymptotic variance of a run's median: the history
// already holds the within-run error of runs measured like these, and the
// runs' own v only counts when it is larger (noisier runs than history's).
// t = D / se has Student's t distribution with
//   df = 0.3675 * (K - 1)
// for K history runs: the MAD's asymptotic efficiency against the standard
// deviation under normality (0.3675, Huber & Ronchetti, Robust Statistics,
// 2nd ed., 5.2) times the K - 1 differences, the chi-square matching of an
// estimated variance. p = 2 * P(T_df > |t|)
// (scipy.stats.t.sf(abs(t), df) * 2).
//
// Assumptions: most consecutive baseline runs measured code that did not
// change this counter (a few real steps are outliers the MAD ignores; a
// history of constant change is not "noise"); session effects are roughly
// normal and independent from run to run; the two runs compared were
// measured like the history's (same testbed, similar repetitions).
// Simulated: the test's two-sided rejection rate on A/A pairs at alpha 0.05
// is 0.04-0.05 for K = 10..30 with normal session effects (which is what
// calibrates df), up to 0.09 with heavy-tailed (t3) ones, above alpha: a
// testbed with occasional wild sessions needs a larger threshold_pct
// (bench/sim/sim_between_run_stat.py). The whole gate's false alarms and power:
// bench/sim_between_run.
//
// A scale of exactly 0 (more than half the consecutive differences are 0:
// callgrind's counts, a deterministic program's page faults) is information,
// not missing data: runs of unchanged code do not differ there between
// sessions, and the gate's within-run rules stand (between_run::sd == 0).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace perfgate::stats {

// Fewest history runs (K, so K - 1 differences) that judge between-run
// variation: df = 0.3675 * 9 = 3.3 at 10, where the t reference already
// widens the 5% critical value from 1.96 to 3.0. Fewer would leave df near
// 1, where a t test has almost no power and the t approximation of the
// MAD's distribution is at its worst.
inline constexpr std::size_t between_run_min_history = 10;

// The MAD's asymptotic efficiency relative to the standard deviation at the
// normal distribution: n Var(sd) / sigma^2 = 0.5 against n Var(sd_MAD) /
// sigma^2 = 1.3605, 0.5 / 1.3605 = 0.3675 (Rousseeuw & Croux 1993, JASA
// 88:1273, table 1: 36.7%).
inline constexpr double mad_efficiency = 0.3675;

struct between_run_result {
    std::size_t history_runs = 0; // K: finite medians of the history used
    double sd = 0;                // scale of a difference of two run medians (the history's)
    double within = 0;            // v_B + v_C, the runs' own variance of the difference
    double se = 0;                // sqrt(max(sd^2, within))
    double df = 0;                // mad_efficiency * (K - 1)
    // t = shift / se and its two-sided p-value; nullopt when se == 0 (no
    // variation at all: the caller's deterministic rule decides).
    std::optional<double> t, p_value;
};

// The normal asymptotic variance of the median of n values with sample
// standard deviation sd: (pi / 2) * sd^2 / n (Kenney & Keeping 1962, 13.13).
// 0 for n < 2 (one value has no within-run spread to estimate).
double median_variance(double sd, std::size_t n);

// The test of `shift` (median(C) - median(B)) given within = v_B + v_C and
// the history's per-run medians, oldest first (non-finite ones are
// skipped). nullopt with fewer than between_run_min_history finite
// medians: between-run variation cannot be judged. Requires finite shift
// and within >= 0 (PERFGATE_CHECK).
std::optional<between_run_result> between_run_test(double shift, double within,
                                                   std::span<const double> history_medians);

// Two-sided (1 - alpha) interval of the shift: shift -/+ qt(1 - alpha/2, df) * se.
struct interval {
    double lo = 0, hi = 0;
};
interval between_run_interval(double shift, const between_run_result& r, double alpha);

// The smallest shift, in the unit of the values, that the between-run test at
// level alpha detects with `power`: (qt(1 - alpha/2, df) + qt(power, df)) * se.
// alpha and power in (0, 1) ("stats.bad_probability").
double between_run_mde(const between_run_result& r, double alpha, double power);

} // namespace perfgate::stats
