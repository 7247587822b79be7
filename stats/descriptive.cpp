#include "stats/descriptive.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace perfgate::stats {
namespace {

void check_finite(std::span<const double> x)
{
    for (double v : x) PERFGATE_CHECK(std::isfinite(v));
}

// Median of an already sorted, non-empty range.
double sorted_median(std::span<const double> s)
{
    const std::size_t n = s.size();
    const std::size_t mid = n / 2;
    // Average written as a + (b - a) / 2 so that two huge equal-sign values
    // cannot overflow to inf.
    return n % 2 == 1 ? s[mid] : s[mid - 1] + (s[mid] - s[mid - 1]) / 2;
}

double median_in_place(std::vector<double>& v)
{
    const std::size_t n = v.size();
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(v.begin(), mid, v.end());
    const double hi = *mid;
    if (n % 2 == 1) return hi;
    // For even n the lower middle is the largest value left of mid.
    const double lo = *std::max_element(v.begin(), mid);
    return lo + (hi - lo) / 2;
}

double mean_of(std::span<const double> x)
{
    // Two-pass (mean, then corrected sum of deviations) keeps the error
    // independent of the magnitude of the data (Chan, Golub & LeVeque 1983).
    double sum = 0;
    for (double v : x) sum += v;
    const double m = sum / static_cast<double>(x.size());
    double corr = 0;
    for (double v : x) corr += v - m;
    return m + corr / static_cast<double>(x.size());
}

double stddev_of(std::span<const double> x, double m)
{
    double ss = 0;
    for (double v : x) ss += (v - m) * (v - m);
    return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

} // namespace

std::optional<double> median(std::span<const double> x)
{
    if (x.empty()) return std::nullopt;
    check_finite(x);
    std::vector<double> v(x.begin(), x.end());
    return median_in_place(v);
}

std::optional<double> mean(std::span<const double> x)
{
    if (x.empty()) return std::nullopt;
    check_finite(x);
    return mean_of(x);
}

std::optional<double> stddev(std::span<const double> x)
{
    if (x.size() < 2) return std::nullopt;
    check_finite(x);
    return stddev_of(x, mean_of(x));
}

std::optional<double> cov(std::span<const double> x)
{
    if (x.size() < 2) return std::nullopt;
    check_finite(x);
    const double m = mean_of(x);
    if (m == 0) return std::nullopt;
    return stddev_of(x, m) / m;
}

std::optional<double> mad(std::span<const double> x)
{
    if (x.empty()) return std::nullopt;
    check_finite(x);
    std::vector<double> v(x.begin(), x.end());
    const double centre = median_in_place(v);
    for (double& d : v) d = std::fabs(d - centre);
    return median_in_place(v);
}

std::optional<summary> summarize(std::span<const double> x)
{
    if (x.empty()) return std::nullopt;
    check_finite(x);
    std::vector<double> s(x.begin(), x.end());
    std::sort(s.begin(), s.end());

    summary r;
    r.n = s.size();
    r.min = s.front();
    r.max = s.back();
    r.median = sorted_median(s);
    r.mean = mean_of(s);
    if (r.n >= 2) {
        r.stddev = stddev_of(s, r.mean);
        if (r.mean != 0) r.cov = *r.stddev / r.mean;
    }
    return r;
}

} // namespace perfgate::stats
