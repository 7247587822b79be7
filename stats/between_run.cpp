#include "stats/between_run.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

#include "model/error.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::stats {

namespace {

void check_probability(double p, const char* what)
{
    if (!(p > 0 && p < 1)) {
        throw error(errors::stats_bad_probability, std::string(what) + " must be in (0, 1), got " + std::to_string(p));
    }
}

// Student's t quantile, remembered per thread. A server computes the same
// few of them again and again: df = mad_efficiency * (K - 1) takes one value
// per history length K and p is 1 - alpha/2 or the power, while Boost's
// quantile (long double iterations) was a sixth of a fresh compare's CPU
// (bench/e2e/bench_server.sh, perf record). The same inputs give the same
// double, so a remembered value is exactly what the call would return.
double t_quantile(double p, double df)
{
    struct remembered {
        double p = 0, df = 0, q = 0; // df = 0: empty (a t distribution's df is > 0)
    };
    // Enough for a few alphas and powers at every history length a policy uses
    // at once; round-robin replacement beyond that.
    constexpr std::size_t slots = 64;
    thread_local std::array<remembered, slots> memo{};
    thread_local std::size_t next = 0;
    for (const auto& m : memo) {
        if (m.df == df && m.p == p && m.df > 0) return m.q;
    }
    const double q = boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
    memo[next] = {p, df, q};
    next = (next + 1) % slots;
    return q;
}

} // namespace

double median_variance(double sd, std::size_t n)
{
    if (n < 2 || !std::isfinite(sd)) return 0.0;
    return std::numbers::pi / 2 * sd * sd / static_cast<double>(n);
}

std::optional<between_run_result> between_run_test(double shift, double within, std::span<const double> history_medians)
{
    PERFGATE_CHECK(std::isfinite(shift) && within >= 0);
    std::vector<double> h;
    h.reserve(history_medians.size());
    for (const double x : history_medians) {
        if (std::isfinite(x)) h.push_back(x);
    }
    if (h.size() < between_run_min_history) return std::nullopt;
    std::vector<double> d(h.size() - 1);
    for (std::size_t i = 0; i + 1 < h.size(); ++i) d[i] = h[i + 1] - h[i];
    between_run_result r;
    r.history_runs = h.size();
    r.sd = mad_normal_consistency * *mad(d);
    r.within = std::isfinite(within) ? within : 0.0;
    r.se = std::sqrt(std::max(r.sd * r.sd, r.within));
    r.df = mad_efficiency * static_cast<double>(h.size() - 1);
    if (r.se > 0 && std::isfinite(r.se)) {
        r.t = shift / r.se;
        const boost::math::students_t_distribution<double> dist(r.df);
        r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(*r.t))));
    }
    return r;
}

interval between_run_interval(double shift, const between_run_result& r, double alpha)
{
    check_probability(alpha, "alpha");
    const double half = t_quantile(1 - alpha / 2, r.df) * r.se;
    return {shift - half, shift + half};
}

double between_run_mde(const between_run_result& r, double alpha, double power)
{
    check_probability(alpha, "alpha");
    check_probability(power, "power");
    return (t_quantile(1 - alpha / 2, r.df) + t_quantile(power, r.df)) * r.se;
}

} // namespace perfgate::stats
