// Descriptive statistics on one sample.
//
// Degenerate input has a documented result: functions that need n >= 1 or
// n >= 2 return std::nullopt instead of NaN, and cov() is nullopt when the
// mean is 0. NaN/inf inputs are the caller's bug (PERFGATE_CHECK).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace perfgate::stats {

// Median (average of the two middle values for even n). nullopt for n == 0.
std::optional<double> median(std::span<const double> x);

// Arithmetic mean. nullopt for n == 0.
std::optional<double> mean(std::span<const double> x);

// Sample standard deviation with n-1 in the denominator. nullopt for n < 2.
std::optional<double> stddev(std::span<const double> x);

// Coefficient of variation: stddev(n-1) / mean. nullopt for n < 2 or mean == 0.
std::optional<double> cov(std::span<const double> x);

// Median absolute deviation, unscaled (R: mad(x, constant = 1)). nullopt for n == 0.
std::optional<double> mad(std::span<const double> x);

// The scale factor that makes MAD a consistent estimator of sigma for normal
// data: 1 / qnorm(0.75), as scipy.stats.median_abs_deviation(scale="normal")
// uses it. R's mad() default constant is the same value rounded to 1.4826.
inline constexpr double mad_normal_consistency = 1.482602218505602;

struct summary {
    std::size_t n = 0;
    double mean = 0, median = 0, min = 0, max = 0;
    std::optional<double> stddev; // n < 2 -> nullopt
    std::optional<double> cov;    // n < 2 or mean == 0 -> nullopt
};

// All of the above from one sorted copy (O(n log n)). n == 0 -> nullopt.
std::optional<summary> summarize(std::span<const double> x);

} // namespace perfgate::stats
