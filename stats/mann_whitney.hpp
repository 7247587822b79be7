// Mann-Whitney U test (Wilcoxon rank-sum), two-sided.
//
// Method choice follows R's wilcox.test: the exact null distribution when
// there are no ties and both samples have fewer than 50 values; otherwise the
// normal approximation with tie correction and continuity correction (scipy
// mannwhitneyu(method="asymptotic", use_continuity=True), R correct=TRUE).
//
// u is the U statistic of the *first* (baseline) sample, as
// scipy.stats.mannwhitneyu(b, c).statistic returns it: the number of pairs
// (b_i, c_j) with b_i > c_j plus half the number of ties.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace perfgate::stats {

enum class mwu_method { exact, asymptotic };

// Samples below this size on both sides (and no ties) use the exact
// distribution; R's wilcox.test uses exact for n < 50.
inline constexpr std::size_t mwu_exact_limit = 50;

struct mwu_result {
    double u = 0;       // U of the baseline sample
    double p_value = 1; // two-sided
    mwu_method method = mwu_method::exact;
    bool ties = false; // any tie across the pooled sample
};

// Requires b.size() >= 1 and c.size() >= 1 (PERFGATE_CHECK); gate code checks
// min_samples before calling. All-tied input gives p = 1 (asymptotic, zero
// variance documented as "no evidence").
mwu_result mann_whitney_u(std::span<const double> b, std::span<const double> c);

// Upper bound on min(m,n) * m * n, the work of one exact distribution
// (about 0.1 s). 49/49 needs 117,649; the gate never asks for more than that.
inline constexpr std::size_t exact_u_max_work = 100'000'000;

// Exact null distribution of U for sample sizes (m, n) without ties: the
// number of arrangements with each value of U, 0..m*n, as probabilities.
// Computed in O(m*n*min(m,n)) time and O(m*n) memory with Harding's (1984)
// generating-function product, scaled so that nothing overflows. Immutable
// after construction, so one instance may be shared between threads.
// shared_exact_u_distribution() below reuses instances within a thread.
// Throws perfgate::error "stats.exact_too_large" when min(m,n)*m*n exceeds
// exact_u_max_work.
class exact_u_distribution {
public:
    exact_u_distribution(std::size_t m, std::size_t n);

    // P(U <= u)
    [[nodiscard]] double cdf(double u) const;
    // P(U >= u)
    [[nodiscard]] double sf(double u) const;
    // Two-sided p-value for observed u, as scipy/R compute it:
    // min(1, 2 * min(P(U <= u), P(U >= u))).
    [[nodiscard]] double p_two_sided(double u) const;
    // R's qwilcox(q, m, n): the smallest k with P(U <= k) >= q, with R's
    // 10 * DBL_EPSILON fuzz; 0 for q == 0 and m*n for q == 1. Throws
    // perfgate::error "stats.bad_probability" for q outside [0, 1].
    [[nodiscard]] std::size_t quantile(double q) const;
    // Smallest attainable two-sided p-value: 2 / C(m+n, m), capped at 1.
    // The same double as p_two_sided(0), so the p-value mann_whitney_u
    // reports for complete separation (scipy's mannwhitneyu(method="exact")
    // on such samples); the gate compares it with its detection level.
    [[nodiscard]] double min_p_two_sided() const;

    [[nodiscard]] std::size_t m() const noexcept { return m_; }
    [[nodiscard]] std::size_t n() const noexcept { return n_; }

private:
    std::size_t m_, n_;
    std::vector<double> cdf_; // cdf_[k] = P(U <= k)
};

// The exact distribution for (m, n) from a small per-thread cache, built on
// first use. One gate compares many counters with the same sample sizes and
// asks for the same distribution in mann_whitney_u() and hodges_lehmann();
// building it costs O(m*n*min(m,n)) (about 30 us for 30/30), looking it up
// nothing. Per thread (no lock, no contention between server workers), the
// exact_u_cache_size most recently used sizes; an entry stays alive while a
// caller holds its shared_ptr. Results are the very same doubles as a fresh
// exact_u_distribution(m, n). Errors as the constructor; failures are not
// cached.
std::shared_ptr<const exact_u_distribution> shared_exact_u_distribution(std::size_t m, std::size_t n);

// Entries of the per-thread cache: a gate run typically has one or two sample
// sizes (every counter of a run has the same n, absent values aside); 16
// entries of at most 49*49+1 doubles are under 320 KB per thread.
inline constexpr std::size_t exact_u_cache_size = 16;

} // namespace perfgate::stats
