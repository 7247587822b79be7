#include "stats/kendall.hpp"

#include "model/error.hpp"
#include "stats/mde.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace perfgate::stats {
namespace {

// Pairs i < j with v[i] > v[j] (strictly: tied values are neither), counted
// while merge-sorting v in place; buf is scratch of the same size.
std::int64_t count_inversions(std::vector<double>& v, std::vector<double>& buf, std::size_t lo, std::size_t hi)
{
    if (hi - lo < 2) return 0;
    const std::size_t mid = lo + (hi - lo) / 2;
    std::int64_t inv = count_inversions(v, buf, lo, mid) + count_inversions(v, buf, mid, hi);
    std::size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        if (v[j] < v[i]) {
            inv += static_cast<std::int64_t>(mid - i); // v[j] is below every value left in the left half
            buf[k++] = v[j++];
        } else {
            buf[k++] = v[i++];
        }
    }
    while (i < mid) buf[k++] = v[i++];
    while (j < hi) buf[k++] = v[j++];
    std::copy(buf.begin() + static_cast<std::ptrdiff_t>(lo), buf.begin() + static_cast<std::ptrdiff_t>(hi),
              v.begin() + static_cast<std::ptrdiff_t>(lo));
    return inv;
}

// n! as a double (the product rounds like Python's float(math.factorial(n))
// to a few ulp; exact up to 22!).
double factorial(std::int64_t n)
{
    double f = 1;
    for (std::int64_t k = 2; k <= n; ++k) f *= static_cast<double>(k);
    return f;
}

// scipy's rule for method="auto": exact without ties for n <= 33, or when
// the statistic is at the very edge of its range.
constexpr std::int64_t kendall_exact_max_n = 33;

// The null counts of 0..last concordant pairs among n untied values, by
// Kendall's recurrence: inserting the j-th value adds 0..j-1 concordant
// pairs, i.e. counts_j = cumsum(counts_{j-1}) minus the same cumsum shifted
// by j (scipy's _kendall_p_exact, numpy.cumsum). Entry i depends only on
// entries below it, so a table cut at `last` holds the same doubles as a
// longer one.
std::vector<double> null_counts(std::int64_t n, std::int64_t last)
{
    PERFGATE_CHECK(last >= 1); // callers: c >= 2, or half the pairs of n >= 3
    const std::size_t len = static_cast<std::size_t>(last) + 1;
    std::vector<double> counts(len, 0.0);
    counts[0] = 1.0;
    counts[1] = 1.0;
    for (std::int64_t j = 3; j <= n; ++j) {
        for (std::size_t i = 1; i < len; ++i) counts[i] += counts[i - 1];
        if (j <= last) {
            // new[j:] -= new[:last+1-j], from the old values: downwards.
            const auto shift = static_cast<std::size_t>(j);
            for (std::size_t i = len - 1; i >= shift; --i) counts[i] -= counts[i - shift];
        }
    }
    return counts;
}

// sum of null_counts(n, c), added in index order as scipy sums them.
double lower_tail(std::int64_t n, std::int64_t c)
{
    double sum = 0;
    for (double v : null_counts(n, c)) sum += v;
    return sum;
}

// lower_tails()[n][c] == lower_tail(n, c) bit for bit, for n <= 33 and c up
// to half the pairs: running sums of one table per n, in the same order.
// Built once (about 0.3 ms); the noise diagnosis asks for these on every
// counter of every compare.
const std::vector<std::vector<double>>& lower_tails()
{
    static const std::vector<std::vector<double>> table = [] {
        std::vector<std::vector<double>> t(static_cast<std::size_t>(kendall_exact_max_n) + 1);
        for (std::int64_t n = 3; n <= kendall_exact_max_n; ++n) {
            const std::int64_t half = n * (n - 1) / 4;
            auto& tails = t[static_cast<std::size_t>(n)];
            double sum = 0;
            for (double v : null_counts(n, std::max<std::int64_t>(half, 1))) {
                sum += v;
                tails.push_back(sum);
            }
        }
        return t;
    }();
    return table;
}

// Two-sided exact p-value for c concordant pairs among n untied values:
// scipy.stats._mstats_basic._kendall_p_exact(n, c, "two-sided"). The null
// counts of c' = 0..c satisfy Kendall's recurrence: inserting the j-th value
// adds 0..j-1 concordant pairs, i.e. counts_j = cumsum(counts_{j-1}) minus
// the same cumsum shifted by j. The lower tail is summed and doubled (the
// distribution is symmetric).
double kendall_exact_p(std::int64_t n, std::int64_t c)
{
    const std::int64_t pairs = n * (n - 1) / 2;
    c = std::min(c, pairs - c);
    if (n <= 2) return 1.0;
    if (c == 0) return n < 171 ? 2.0 / factorial(n) : 0.0;
    if (c == 1) return n < 172 ? 2.0 / factorial(n - 1) : 0.0;
    if (4 * c == n * (n - 1)) return 1.0;
    // scipy's float recurrence for n < 171; the gate only gets here for
    // n <= 33 (kendall_trend uses the normal approximation above that),
    // where the lower tails come from a table built once.
    PERFGATE_CHECK(n < 171);
    const double lower = n <= kendall_exact_max_n
                             ? lower_tails()[static_cast<std::size_t>(n)][static_cast<std::size_t>(c)]
                             : lower_tail(n, c);
    return std::clamp(2.0 * lower / factorial(n), 0.0, 1.0);
}

} // namespace

std::optional<kendall_result> kendall_trend(std::span<const double> v)
{
    PERFGATE_CHECK(std::none_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }));
    const auto n = static_cast<std::int64_t>(v.size());
    if (n < 2) return std::nullopt;

    std::vector<double> sorted(v.begin(), v.end()), buf(v.size());
    const std::int64_t dis = count_inversions(sorted, buf, 0, sorted.size());

    // Tied values: their pairs, and the tie term of the variance,
    // sum t(t-1)(2t+5) (exact in doubles: below 2^53 for n <= 10^5). scipy's
    // other tie terms are products with the positions' tie sums, which are 0.
    std::int64_t tied_pairs = 0;
    double t1 = 0;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i + 1;
        while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
        const auto t = static_cast<std::int64_t>(j - i);
        if (t > 1) {
            tied_pairs += t * (t - 1) / 2;
            const auto td = static_cast<double>(t);
            t1 += td * (td - 1) * (2 * td + 5);
        }
        i = j;
    }
    const std::int64_t pairs = n * (n - 1) / 2;
    if (tied_pairs == pairs) return std::nullopt;

    const std::int64_t con_minus_dis = pairs - tied_pairs - 2 * dis;
    kendall_result r;
    r.tau = static_cast<double>(con_minus_dis) / std::sqrt(static_cast<double>(pairs)) /
            std::sqrt(static_cast<double>(pairs - tied_pairs));
    r.tau = std::clamp(r.tau, -1.0, 1.0);
    if (tied_pairs == 0 && (n <= kendall_exact_max_n || std::min(dis, pairs - dis) <= 1)) {
        r.exact = true;
        r.p_value = kendall_exact_p(n, pairs - dis);
    } else {
        const double m = static_cast<double>(n) * (static_cast<double>(n) - 1.);
        const double var = (m * static_cast<double>(2 * n + 5) - t1) / 18;
        const double z = static_cast<double>(con_minus_dis) / std::sqrt(var);
        r.p_value = 2 * normal_sf(std::fabs(z));
    }
    return r;
}

} // namespace perfgate::stats
