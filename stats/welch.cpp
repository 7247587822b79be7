#include "stats/welch.hpp"

#include "model/error.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace perfgate::stats {

std::optional<welch_result> welch_t_test(double mean1, double sd1, std::size_t n1, double mean2, double sd2,
                                         std::size_t n2)
{
    PERFGATE_CHECK(std::isfinite(mean1) && std::isfinite(sd1) && sd1 >= 0);
    PERFGATE_CHECK(std::isfinite(mean2) && std::isfinite(sd2) && sd2 >= 0);
    if (n1 < 2 || n2 < 2) return std::nullopt;
    if (sd1 == 0 && sd2 == 0) return std::nullopt;

    // Welch (1947); Satterthwaite (1946) degrees of freedom. Same expressions
    // as scipy.stats._stats_py._unequal_var_ttest_denom, computed on the
    // standard deviations divided by the larger one: t and df do not change
    // under that scaling, and squares of values near 1e300 (perf -r
    // aggregates of huge counters) no longer overflow to inf (scipy itself
    // returns t = -0, p = 1 there).
    const double scale = std::max(sd1, sd2);
    const double a = sd1 / scale, b = sd2 / scale;
    const double v1 = a * a / static_cast<double>(n1);
    const double v2 = b * b / static_cast<double>(n2);
    const double var = v1 + v2;
    // Standard deviations so small that their squares underflow carry no
    // usable spread: same documented result as both being zero.
    if (!(var > 0)) return std::nullopt;
    const double se = scale * std::sqrt(var);

    welch_result r;
    r.t = (mean2 - mean1) / se;
    r.se = se;
    // df = (v1 + v2)^2 / (v1^2/(n1-1) + v2^2/(n2-1)), written with the
    // weights w = v / (v1 + v2) so that squaring cannot under/overflow.
    const double w1 = v1 / var;
    const double w2 = v2 / var;
    r.df = 1 / (w1 * w1 / static_cast<double>(n1 - 1) + w2 * w2 / static_cast<double>(n2 - 1));
    const boost::math::students_t_distribution<double> dist(r.df);
    // The upper tail through complement() keeps tiny p-values exact instead of
    // computing 1 - cdf.
    r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.t))));
    return r;
}

std::pair<double, double> welch_interval(const welch_result& r, double shift, double alpha)
{
    if (!(alpha > 0 && alpha < 1))
        throw perfgate::error(errors::stats_bad_probability,
                              "welch_interval: alpha must be in (0, 1), got " + std::to_string(alpha));
    const double half = boost::math::quantile(boost::math::students_t_distribution<double>(r.df), 1 - alpha / 2) * r.se;
    return {shift - half, shift + half};
}

} // namespace perfgate::stats
