#include "stats/mde.hpp"

#include "model/error.hpp"

#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

namespace perfgate::stats {
namespace {

// True when 2 / C(n_b + n_c, n_b) > alpha, i.e. no arrangement of the exact
// rank test can reach significance. log C via lgamma; near the boundary the
// rounding of lgamma (~1e-13 relative) cannot change a decision that the
// integer-valued binomial makes with a margin of at least a factor (n+1)/n.
bool exact_test_cannot_reach(std::size_t n_b, std::size_t n_c, double alpha)
{
    const double nb = static_cast<double>(n_b);
    const double nc = static_cast<double>(n_c);
    // lgamma_r, not std::lgamma: glibc's lgamma stores the sign in the
    // global signgam, a data race between two compares on two server
    // threads (ThreadSanitizer saw it). Same value; the sign is unused.
    const auto log_gamma = [](double x) {
        int sign = 0;
        return ::lgamma_r(x, &sign);
    };
    const double log_choose = log_gamma(nb + nc + 1) - log_gamma(nb + 1) - log_gamma(nc + 1);
    return std::log(2.0) - log_choose > std::log(alpha);
}

void check_probability(double p, const char* field)
{
    if (!(p > 0 && p < 1))
        throw perfgate::error(errors::stats_bad_probability,
                              std::string(field) + " must be in (0, 1), got " + std::to_string(p));
}

} // namespace

double normal_quantile(double p)
{
    if (!(p >= 0 && p <= 1))
        throw perfgate::error(errors::stats_bad_probability,
                              "normal_quantile: p must be in [0, 1], got " + std::to_string(p));
    if (p == 0) return -std::numeric_limits<double>::infinity();
    if (p == 1) return std::numeric_limits<double>::infinity();
    // Boost's inverse uses erfc_inv with rational approximations accurate to
    // a few ulp (boost/math/special_functions/detail/erf_inv.hpp).
    return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

// Phi(x), transcribed from cephes ndtr.c as scipy.special.ndtr uses it (and
// scipy.stats.norm.cdf / sf through it): erf near 0, erfc of |x|/sqrt 2 in
// the tails so that small tail probabilities keep full relative precision.
double normal_cdf(double x)
{
    constexpr double sqrth = std::numbers::sqrt2 / 2; // cephes SQRTH, exact halving
    const double t = x * sqrth;
    const double z = std::fabs(t);
    if (z < sqrth) return 0.5 + 0.5 * std::erf(t);
    const double tail = 0.5 * std::erfc(z);
    return t > 0 ? 1 - tail : tail;
}

// Upper tail as scipy.stats.norm.sf: ndtr(-x).
double normal_sf(double x) { return normal_cdf(-x); }

std::optional<double> minimum_detectable_effect_pct(double sd_b, std::size_t n_b, double sd_c, std::size_t n_c,
                                                    double centre, double alpha, double power)
{
    check_probability(alpha, "alpha");
    check_probability(power, "power");
    PERFGATE_CHECK(std::isfinite(sd_b) && std::isfinite(sd_c) && std::isfinite(centre));
    if (n_b < 2 || n_c < 2 || centre == 0) return std::nullopt;
    if (exact_test_cannot_reach(n_b, n_c, alpha)) return std::numeric_limits<double>::infinity();

    const double se = std::sqrt(sd_b * sd_b / static_cast<double>(n_b) + sd_c * sd_c / static_cast<double>(n_c));
    // Two-sided normal power formula (e.g. Chow, Shao & Wang, Sample Size
    // Calculations in Clinical Research, 3.2), scaled by sqrt(pi/3): the
    // Mann-Whitney test needs pi/3 times the t-test's sample size for the
    // same power under normality (ARE 3/pi, Lehmann, Nonparametrics, 2.4).
    const double z = normal_quantile(1 - alpha / 2) + normal_quantile(power);
    const double mde = z * se * std::sqrt(std::numbers::pi / 3);
    return mde / std::fabs(centre) * 100;
}

std::optional<std::size_t> repetitions_for_mde(double sd_b, double sd_c, double centre, double target_pct, double alpha,
                                               std::size_t max_n, double power)
{
    PERFGATE_CHECK(std::isfinite(target_pct) && target_pct >= 0);
    auto reaches = [&](std::size_t n) {
        const auto mde = minimum_detectable_effect_pct(sd_b, n, sd_c, n, centre, alpha, power);
        return mde && *mde <= target_pct;
    };
    if (max_n < 2 || !reaches(max_n)) return std::nullopt;
    // Invariant: reaches(hi); lo is 1 or an n that does not reach.
    std::size_t lo = 1, hi = max_n;
    while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (reaches(mid) ? hi : lo) = mid;
    }
    return hi;
}

} // namespace perfgate::stats
