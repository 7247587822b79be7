#include "stats/mann_whitney.hpp"

#include "model/error.hpp"
#include "stats/mde.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace perfgate::stats {
namespace {

void check_sample(std::span<const double> x)
{
    PERFGATE_CHECK(!x.empty());
    for (double v : x) PERFGATE_CHECK(std::isfinite(v));
}

} // namespace

exact_u_distribution::exact_u_distribution(std::size_t m, std::size_t n) : m_(m), n_(n)
{
    const std::size_t k = std::min(m, n); // number of factors in the product
    const std::size_t l = std::max(m, n);
    const std::size_t cells = m * n;
    if (m != 0 &&
        (cells / m != n || static_cast<double>(k) * static_cast<double>(cells) > static_cast<double>(exact_u_max_work)))
        throw perfgate::error(errors::stats_exact_too_large, "exact Mann-Whitney distribution for sizes " +
                                                                 std::to_string(m) + " and " + std::to_string(n) +
                                                                 " is too expensive; use the normal approximation");

    // Harding (1984), "An efficient, minimal-storage procedure for
    // calculating the Mann-Whitney U, generalized U and similar
    // distributions", Appl. Statist. 33(1): the counts of U are the
    // coefficients of the Gaussian binomial
    //     [m+n choose k]_q = prod_{i=1..k} (1 - q^(l+i)) / (1 - q^i),
    // built one factor at a time. After factor i the polynomial is
    // [l+i choose i]_q, whose coefficients sum to C(l+i, i); scaling by
    // i / (l+i) at each step keeps them as probabilities, so nothing
    // overflows however large C(m+n, m) is. Work: k passes of O(m*n).
    // The multiplication briefly needs i extra cells above degree i*l.
    std::vector<double> f(cells + k + 1, 0.0);
    f[0] = 1;
    for (std::size_t i = 1; i <= k; ++i) {
        const std::size_t a = l + i;
        const std::size_t top = (i - 1) * l + a; // degree after multiplying
        const double scale = static_cast<double>(i) / static_cast<double>(a);
        // Multiply by (1 - q^a), descending so f[j - a] is still the old value.
        for (std::size_t j = top; j >= a; --j) f[j] = scale * (f[j] - f[j - a]);
        for (std::size_t j = std::min(a, top + 1); j-- > 0;) f[j] *= scale;
        // Divide by (1 - q^i): f[j] += f[j - i], ascending (a running sum).
        const std::size_t deg = i * l;
        for (std::size_t j = i; j <= deg; ++j) f[j] += f[j - i];
        // The exact quotient has degree i*l; what is above is rounding noise.
        std::fill(f.begin() + static_cast<std::ptrdiff_t>(deg) + 1, f.end(), 0.0);
    }

    cdf_.resize(cells + 1);
    double acc = 0;
    for (std::size_t j = 0; j <= cells; ++j) {
        // Clamp rounding noise: every count of the Gaussian binomial is >= 1.
        acc += std::max(f[j], 0.0);
        cdf_[j] = std::min(acc, 1.0);
    }
}

std::shared_ptr<const exact_u_distribution> shared_exact_u_distribution(std::size_t m, std::size_t n)
{
    struct entry {
        std::size_t m, n;
        std::shared_ptr<const exact_u_distribution> dist;
    };
    // Most recently used first; a linear scan of 16 entries is cheaper than
    // hashing and keeps the LRU order for free.
    thread_local std::vector<entry> cache;
    const auto hit = std::find_if(cache.begin(), cache.end(), [&](const entry& e) { return e.m == m && e.n == n; });
    if (hit != cache.end()) {
        std::rotate(cache.begin(), hit, hit + 1);
        return cache.front().dist;
    }
    auto dist = std::make_shared<const exact_u_distribution>(m, n); // may throw: nothing cached
    if (cache.size() == exact_u_cache_size) cache.pop_back();
    cache.insert(cache.begin(), entry{m, n, dist});
    return dist;
}

double exact_u_distribution::cdf(double u) const
{
    PERFGATE_CHECK(!std::isnan(u));
    if (u < 0) return 0;
    const double top = static_cast<double>(m_ * n_);
    if (u >= top) return 1;
    return cdf_[static_cast<std::size_t>(std::floor(u))];
}

double exact_u_distribution::sf(double u) const
{
    // The null distribution is symmetric about m*n/2, so the upper tail is
    // read from the lower one: P(U >= u) = P(U <= m*n - u). This keeps tiny
    // upper-tail probabilities exact instead of computing 1 - cdf.
    return cdf(static_cast<double>(m_ * n_) - u);
}

double exact_u_distribution::p_two_sided(double u) const
{
    // scipy: 2 * sf(max(U1, U2)); R: 2 * pwilcox(min side); both equal to
    // this by symmetry.
    return std::min(1.0, 2 * std::min(cdf(u), sf(u)));
}

std::size_t exact_u_distribution::quantile(double q) const
{
    if (!(q >= 0 && q <= 1))
        throw perfgate::error(errors::stats_bad_probability,
                              "exact_u_distribution::quantile: q must be in [0, 1], got " + std::to_string(q));
    const std::size_t top = m_ * n_;
    // Transcription of R's qwilcox (src/nmath/wilcox.c), including its
    // 10 * DBL_EPSILON fuzz and the upper-half search from the other tail.
    if (q == 0) return 0;
    if (q == 1) return top;
    if (q <= 0.5) {
        const double x = q - 10 * DBL_EPSILON;
        const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), x); // first cdf >= x
        return static_cast<std::size_t>(it - cdf_.begin());
    }
    const double x = 1 - q + 10 * DBL_EPSILON;
    const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), x); // first cdf > x
    return top - static_cast<std::size_t>(it - cdf_.begin());
}

double exact_u_distribution::min_p_two_sided() const
{
    // P(U = 0) = 1 / C(m+n, m).
    return std::min(1.0, 2 * cdf_[0]);
}

mwu_result mann_whitney_u(std::span<const double> b, std::span<const double> c)
{
    check_sample(b);
    check_sample(c);
    std::vector<double> sb(b.begin(), b.end());
    std::vector<double> sc(c.begin(), c.end());
    std::sort(sb.begin(), sb.end());
    std::sort(sc.begin(), sc.end());
    const std::size_t m = sb.size();
    const std::size_t n = sc.size();

    // Walk the pooled sample in groups of equal values. For each group with
    // tb baseline and tc candidate values, the baseline values beat every
    // smaller candidate value and tie (1/2 each) with the tc equal ones: the
    // same U1 = R1 - m(m+1)/2 as scipy's rank sum, without rounding.
    // tie_sum = sum(t^3 - t) over pooled groups (scipy _get_mwu_z, R NTIES).
    double u = 0;
    double tie_sum = 0;
    bool ties = false;
    std::size_t i = 0, j = 0;
    while (i < m || j < n) {
        const double v = (j == n || (i < m && sb[i] < sc[j])) ? sb[i] : sc[j];
        const std::size_t c_below = j;
        std::size_t tb = 0, tc = 0;
        while (i < m && sb[i] == v) ++i, ++tb;
        while (j < n && sc[j] == v) ++j, ++tc;
        u += static_cast<double>(tb) * (static_cast<double>(c_below) + 0.5 * static_cast<double>(tc));
        const double t = static_cast<double>(tb + tc);
        if (t > 1) {
            ties = true;
            tie_sum += t * t * t - t;
        }
    }

    mwu_result r;
    r.u = u;
    r.ties = ties;
    if (!ties && m < mwu_exact_limit && n < mwu_exact_limit) {
        r.method = mwu_method::exact;
        r.p_value = shared_exact_u_distribution(m, n)->p_two_sided(u);
        return r;
    }

    // Normal approximation with tie and continuity correction, as scipy
    // mannwhitneyu(method="asymptotic", use_continuity=True) (_get_mwu_z)
    // and R wilcox.test(correct = TRUE):
    //   z = (|U - mn/2| - 1/2) / sqrt(mn/12 * ((N+1) - sum(t^3-t)/(N(N-1)))).
    r.method = mwu_method::asymptotic;
    const double mm = static_cast<double>(m), nn = static_cast<double>(n);
    const double big_n = mm + nn;
    const double var = mm * nn / 12 * ((big_n + 1) - tie_sum / (big_n * (big_n - 1)));
    const double numerator = std::fabs(u - mm * nn / 2) - 0.5;
    // All values tied: zero variance, U is exactly mn/2 and there is no
    // evidence either way. Documented result p = 1 (scipy gives 1 too, via
    // z = -inf and clipping). A deviation smaller than the continuity
    // correction likewise gives p = 1 after clipping.
    if (!(var > 0) || numerator <= 0) {
        r.p_value = 1;
        return r;
    }
    r.p_value = std::min(1.0, 2 * normal_sf(numerator / std::sqrt(var)));
    return r;
}

} // namespace perfgate::stats
