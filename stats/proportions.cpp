#include "stats/proportions.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/error.hpp"

namespace perfgate::stats {

namespace {

void check_proportion(double x, double n, const char* what)
{
    if (!(n > 0) || !(x >= 0) || !(x <= n) || !std::isfinite(n)) {
        throw perfgate::error(errors::stats_bad_input, std::string(what) + ": need 0 <= x <= n and n > 0, got x = " +
                                                           std::to_string(x) + ", n = " + std::to_string(n));
    }
}

} // namespace

proportion_interval wilson_interval(double x, double n, double z)
{
    check_proportion(x, n, "wilson_interval");
    if (!(z >= 0) || !std::isfinite(z))
        throw perfgate::error(errors::stats_bad_input, "wilson_interval: z = " + std::to_string(z));
    const double p = x / n;
    const double z2n = z * z / n;
    const double centre = (p + z2n / 2) / (1 + z2n);
    const double half = z / (1 + z2n) * std::sqrt(p * (1 - p) / n + z2n / (4 * n));
    // Exact at the ends: at x = 0 the lower bound is 0, at x = n the upper is 1
    // (the formula gives them up to rounding).
    return {x == 0 ? 0.0 : std::max(0.0, centre - half), x == n ? 1.0 : std::min(1.0, centre + half)};
}

proportion_interval newcombe_difference(double x1, double n1, double x2, double n2, double z)
{
    const auto w1 = wilson_interval(x1, n1, z);
    const auto w2 = wilson_interval(x2, n2, z);
    const double p1 = x1 / n1, p2 = x2 / n2, d = p2 - p1;
    return {d - std::hypot(p2 - w2.lo, w1.hi - p1), d + std::hypot(w2.hi - p2, p1 - w1.lo)};
}

double pearson_dispersion(const std::vector<std::vector<execution_count>>& sides)
{
    double chi2 = 0, df = 0;
    for (const auto& executions : sides) {
        double x = 0, n = 0;
        for (const auto& e : executions) {
            check_proportion(e.x, e.n, "pearson_dispersion");
            x += e.x;
            n += e.n;
        }
        const double p = n > 0 ? x / n : 0;
        if (executions.size() < 2 || p <= 0 || p >= 1) continue;
        for (const auto& e : executions) {
            const double expected = e.n * p;
            chi2 += (e.x - expected) * (e.x - expected) / (expected * (1 - p));
        }
        df += static_cast<double>(executions.size() - 1);
    }
    return df > 0 ? std::max(1.0, chi2 / df) : 1.0;
}

} // namespace perfgate::stats
