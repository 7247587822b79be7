#include "stats/multiplicity.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace perfgate::stats {
namespace {

void check_p_values(std::span<const double> p)
{
    for (std::size_t i = 0; i < p.size(); ++i)
        if (!(p[i] >= 0 && p[i] <= 1))
            throw perfgate::error(errors::stats_bad_p_value,
                                  "p-value [" + std::to_string(i) + "] must be in [0, 1], got " + std::to_string(p[i]));
}

// Indices that sort p ascending; stable like R's order() so equal p-values
// keep their input order (the adjusted values do not depend on it).
std::vector<std::size_t> order_ascending(std::span<const double> p)
{
    std::vector<std::size_t> o(p.size());
    std::iota(o.begin(), o.end(), std::size_t{0});
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    return o;
}

} // namespace

// R p.adjust "holm":  pmin(1, cummax((n - i + 1) * p[o]))[ro], o = order(p).
std::vector<double> holm(std::span<const double> p)
{
    check_p_values(p);
    const std::size_t n = p.size();
    const auto o = order_ascending(p);
    std::vector<double> out(n);
    double running = 0;
    for (std::size_t i = 0; i < n; ++i) {
        running = std::max(running, static_cast<double>(n - i) * p[o[i]]);
        out[o[i]] = std::min(1.0, running);
    }
    return out;
}

// R p.adjust "BH":  pmin(1, cummin(n / i * p[o]))[ro], o = order(p, decreasing = TRUE),
// i = n:1.
std::vector<double> benjamini_hochberg(std::span<const double> p)
{
    check_p_values(p);
    const std::size_t n = p.size();
    const auto o = order_ascending(p);
    std::vector<double> out(n);
    double running = 1; // the min(1, .) cap folded into the running minimum
    for (std::size_t r = n; r-- > 0;) {
        const double rank = static_cast<double>(r + 1);
        running = std::min(running, static_cast<double>(n) / rank * p[o[r]]);
        out[o[r]] = running;
    }
    return out;
}

std::vector<double> adjust(std::span<const double> p, correction method)
{
    switch (method) {
    case correction::holm: return holm(p);
    case correction::bh: return benjamini_hochberg(p);
    case correction::none: check_p_values(p); return {p.begin(), p.end()};
    }
    PERFGATE_CHECK(!"unknown correction");
    return {};
}

} // namespace perfgate::stats
