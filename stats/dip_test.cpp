#include "stats/dip_test.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <vector>

namespace perfgate::stats {
namespace {

// Indices into the sorted sample. Distances are in counts: the empirical
// distribution function times n, so that it steps by 1 at each value. The
// function is i + 1 just after the 0-based value i and i just before it.
using idx = std::ptrdiff_t;

// prev[j]: the vertex before j on the greatest convex minorant of the
// points (x_i, i), i <= j (the running lower hull, kept by popping vertices
// that stop being strictly convex). Slopes are compared as x per count,
// cross-multiplied, so tied values (a vertical step) need no division.
std::vector<idx> minorant_links(const std::vector<double>& x)
{
    const idx n = std::ssize(x);
    std::vector<idx> prev(static_cast<std::size_t>(n), 0);
    for (idx j = 1; j < n; ++j) {
        idx k = j - 1;
        while (k > 0) {
            const idx p = prev[static_cast<std::size_t>(k)];
            const double xj = x[static_cast<std::size_t>(j)], xk = x[static_cast<std::size_t>(k)],
                         xp = x[static_cast<std::size_t>(p)];
            if ((xj - xk) * static_cast<double>(k - p) < (xk - xp) * static_cast<double>(j - k)) break;
            k = p;
        }
        prev[static_cast<std::size_t>(j)] = k;
    }
    return prev;
}

// next[k]: the vertex after k on the least concave majorant of the points
// (x_i, i), i >= k (the running upper hull, built from the right).
std::vector<idx> majorant_links(const std::vector<double>& x)
{
    const idx n = std::ssize(x);
    std::vector<idx> next(static_cast<std::size_t>(n), n - 1);
    for (idx k = n - 2; k >= 0; --k) {
        idx m = k + 1;
        while (m < n - 1) {
            const idx s = next[static_cast<std::size_t>(m)];
            const double xk = x[static_cast<std::size_t>(k)], xm = x[static_cast<std::size_t>(m)],
                         xs = x[static_cast<std::size_t>(s)];
            if ((xk - xm) * static_cast<double>(m - s) < (xm - xs) * static_cast<double>(k - m)) break;
            m = s;
        }
        next[static_cast<std::size_t>(k)] = m;
    }
    return next;
}

// The largest distance, in counts, between the empirical function and the
// hull segment [b, e] that stands below it (convex part) or above it
// (concave part); 1 when the segment has no interior point off the line.
double segment_gap(const std::vector<double>& x, idx b, idx e, bool below)
{
    double widest = 1;
    const double xb = x[static_cast<std::size_t>(b)], xe = x[static_cast<std::size_t>(e)];
    if (e - b <= 1 || xe == xb) return widest;
    const double slope = static_cast<double>(e - b) / (xe - xb); // counts per unit of x
    for (idx i = b; i <= e; ++i) {
        const double rise = (x[static_cast<std::size_t>(i)] - xb) * slope;
        const double t = below ? static_cast<double>(i - b + 1) - rise : rise - static_cast<double>(i - b - 1);
        widest = std::max(widest, t);
    }
    return widest;
}

// One pass of dip_in_counts below, step "find the largest distance between
// the GCM and the LCM from LOW to HIGH" of AS 217 (diptest's dip.c). gcm:
// the minorant's vertices from hi down to <= lo; lcm: the majorant's from lo
// up to >= hi. Walks both vertex lists in increasing index order, measuring
// the majorant minus the minorant at every vertex of either, in counts: d
// is the widest gap, ig / ih index into gcm / lcm where it is.
struct dip_hull_gap {
    long double d = 0;
    idx ig = 0;
    idx ih = 0;
};

dip_hull_gap dip_widest_hull_gap(const std::vector<double>& x, const std::vector<idx>& gcm, const std::vector<idx>& lcm)
{
    auto at = [&x](idx i) { return x[static_cast<std::size_t>(i)]; };
    const idx gcm_last = std::ssize(gcm) - 1, lcm_last = std::ssize(lcm) - 1;
    dip_hull_gap w{0, gcm_last, lcm_last};
    if (gcm_last == 1 && lcm_last == 1) {
        w.d = 1;
        return w;
    }
    idx ix = gcm_last - 1, iv = 1;
    do {
        const idx g = gcm[static_cast<std::size_t>(ix)], l = lcm[static_cast<std::size_t>(iv)];
        long double gap;
        if (g > l) {
            // Majorant vertex l, under the minorant segment [g0, g].
            const idx g0 = gcm[static_cast<std::size_t>(ix + 1)];
            gap = static_cast<long double>(l - g0 + 1) - (static_cast<long double>(at(l)) - at(g0)) *
                                                             static_cast<long double>(g - g0) /
                                                             static_cast<long double>(at(g) - at(g0));
            ++iv;
            if (gap >= w.d) { // false for NaN: a vertical segment has no line to measure from
                w.d = gap;
                w.ig = ix + 1;
                w.ih = iv - 1;
            }
        } else {
            // Minorant vertex g, over the majorant segment [l0, l].
            const idx l0 = lcm[static_cast<std::size_t>(iv - 1)];
            gap = (static_cast<long double>(at(g)) - at(l0)) * static_cast<long double>(l - l0) /
                      static_cast<long double>(at(l) - at(l0)) -
                  static_cast<long double>(g - l0 - 1);
            --ix;
            if (gap >= w.d) {
                w.d = gap;
                w.ig = ix + 1;
                w.ih = iv;
            }
        }
        ix = std::max<idx>(ix, 0);
        iv = std::min(iv, lcm_last);
    } while (gcm[static_cast<std::size_t>(ix)] != lcm[static_cast<std::size_t>(iv)]);
    return w;
}

// Step "calculate the dips for the current LOW and HIGH" of AS 217: the
// largest gap between the sample and the hull parts left outside the
// narrowed interval, minorant segments from ig down to the left end,
// majorant segments from ih up.
double dip_outside_interval(const std::vector<double>& x, const std::vector<idx>& gcm, idx ig,
                            const std::vector<idx>& lcm, idx ih)
{
    double outside = 0;
    for (idx j = ig; j < std::ssize(gcm) - 1; ++j) {
        outside = std::max(outside, segment_gap(x, gcm[static_cast<std::size_t>(j + 1)],
                                                gcm[static_cast<std::size_t>(j)], true));
    }
    for (idx j = ih; j < std::ssize(lcm) - 1; ++j) {
        outside = std::max(outside, segment_gap(x, lcm[static_cast<std::size_t>(j)],
                                                lcm[static_cast<std::size_t>(j + 1)], false));
    }
    return outside;
}

// Hartigan's algorithm on sorted x with a range that is finite, in counts
// (2n times the dip). The modal interval [lo, hi] starts as the whole
// sample. Each pass takes the convex minorant's vertices on [.., hi] from the
// right and the concave majorant's on [lo, ..] from the left, finds where the
// two hulls are farthest apart (d); if that is less than the dip so far, the
// modal interval cannot shrink any more and the dip is final. Otherwise the
// interval narrows to the vertices at that widest place, and the dip grows to
// the largest gap between the sample and the hull parts now left outside the
// interval. Integer counts and the long double distance accumulator follow
// AS 217 as diptest carries it, so that ties between candidate gaps resolve
// the same way as in R. The two measuring steps are functions named after
// AS 217's steps above; the loop keeps the original's order of steps.
double dip_in_counts(const std::vector<double>& x)
{
    const idx n = std::ssize(x);
    double dip = 1; // the smallest dip, 1 / (2n): diptest's min.is.0 = FALSE
    if (n < 2 || x.front() == x.back()) return dip;

    const std::vector<idx> prev = minorant_links(x);
    const std::vector<idx> next = majorant_links(x);

    idx lo = 0, hi = n - 1;
    std::vector<idx> gcm, lcm;
    while (lo < hi) {
        gcm.assign(1, hi); // minorant vertices from hi down to <= lo
        while (gcm.back() > lo) gcm.push_back(prev[static_cast<std::size_t>(gcm.back())]);
        lcm.assign(1, lo); // majorant vertices from lo up to >= hi
        while (lcm.back() < hi) lcm.push_back(next[static_cast<std::size_t>(lcm.back())]);

        const dip_hull_gap widest = dip_widest_hull_gap(x, gcm, lcm);
        if (widest.d < dip) break;
        dip = std::max(dip, dip_outside_interval(x, gcm, widest.ig, lcm, widest.ih));

        const idx new_lo = gcm[static_cast<std::size_t>(widest.ig)];
        const idx new_hi = lcm[static_cast<std::size_t>(widest.ih)];
        if (new_lo == lo && new_hi == hi) break; // no progress: final (Maechler's guard against cycling)
        lo = new_lo;
        hi = new_hi;
    }
    return dip;
}

// The 95% quantiles of the dip under the uniform null from diptest's table
// qDiptab (diptest 0.76, extraData/qDiptab.rds, column "0.95"; printed with
// sprintf("%.17g") in R 4.2), by sample size.
struct dip_quantile {
    std::size_t n;
    double q95;
};
constexpr dip_quantile dip_q95[] = {
    {4, 0.20726978858735959},       {5, 0.18639179602794398},       {6, 0.16476960851330247},
    {7, 0.15990339567833647},       {8, 0.15397830399856088},       {9, 0.14660378495401924},
    {10, 0.13961139513709916},      {15, 0.11876076920366381},      {20, 0.10513021827063648},
    {30, 0.088168914312666574},     {50, 0.070273787719126873},     {100, 0.051127944286882707},
    {200, 0.036841841387830705},    {500, 0.023729474263341058},    {1000, 0.016934397006756415},
    {2000, 0.012038099032834057},   {5000, 0.0076506368153934972},  {10000, 0.0054237224283639534},
    {20000, 0.0038433019024467852}, {40000, 0.0027237507348622332}, {72000, 0.0020317840161055505},
};

// sqrt(n) times the critical dip, interpolated as dip.test does: between
// the table's sizes n0 <= n < n1, y = y0 + f (y1 - y0) with y = sqrt(n) * q
// and f = (n - n0) / (n1 - n0); beyond the last size, its y.
double scaled_critical(std::size_t n)
{
    const auto* last = std::end(dip_q95) - 1;
    auto y_of = [](const dip_quantile& row) { return std::sqrt(static_cast<double>(row.n)) * row.q95; };
    if (n >= last->n) return y_of(*last);
    // findInterval: the last row with row.n <= n.
    const auto* upper = std::upper_bound(std::begin(dip_q95), std::end(dip_q95), n,
                                         [](std::size_t v, const dip_quantile& row) { return v < row.n; });
    const dip_quantile& r0 = *(upper - 1);
    const dip_quantile& r1 = *upper;
    const double f = static_cast<double>(n - r0.n) / static_cast<double>(r1.n - r0.n);
    const double y0 = y_of(r0), y1 = y_of(r1);
    return y0 + f * (y1 - y0);
}

} // namespace

double dip_statistic(std::span<const double> x)
{
    PERFGATE_CHECK(!x.empty());
    PERFGATE_CHECK(std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }));
    std::vector<double> sorted(x.begin(), x.end());
    std::sort(sorted.begin(), sorted.end());
    if (!std::isfinite(sorted.back() - sorted.front())) {
        for (double& v : sorted) v *= 0.5;
    }
    return dip_in_counts(sorted) / (2.0 * static_cast<double>(sorted.size()));
}

std::optional<double> dip_critical_value(std::size_t n)
{
    if (n < dip_min_n) return std::nullopt;
    return scaled_critical(n) / std::sqrt(static_cast<double>(n));
}

std::optional<dip_result> dip_test(std::span<const double> x)
{
    if (x.size() < dip_min_n) return std::nullopt;
    dip_result r;
    r.dip = dip_statistic(x);
    r.critical = *dip_critical_value(x.size());
    // dip.test: p = 1 - approx(y, Pr, sqrt(n) * dip); p < 0.05 exactly when
    // sqrt(n) * dip lies above the interpolated 95% point.
    r.bimodal = std::sqrt(static_cast<double>(x.size())) * r.dip > scaled_critical(x.size());
    return r;
}

} // namespace perfgate::stats
