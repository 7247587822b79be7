#include "stats/zscore.hpp"

#include "model/error.hpp"
#include "stats/descriptive.hpp"

#include <cmath>

namespace perfgate::stats {

std::optional<double> z_score(double x, std::span<const double> history)
{
    PERFGATE_CHECK(std::isfinite(x));
    const auto sd = stddev(history); // nullopt for n < 2
    if (!sd || *sd == 0) return std::nullopt;
    return (x - *mean(history)) / *sd;
}

std::optional<double> robust_z_score(double x, std::span<const double> history)
{
    PERFGATE_CHECK(std::isfinite(x));
    const auto m = mad(history); // nullopt for n == 0
    if (!m || *m == 0) return std::nullopt;
    // Iglewicz & Hoaglin (1993), "How to Detect and Handle Outliers": the
    // median and the normal-consistent MAD replace mean and sd, so one
    // outlier in the history cannot mask a real shift.
    return (x - *median(history)) / (mad_normal_consistency * *m);
}

} // namespace perfgate::stats
